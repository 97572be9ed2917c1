package main

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// BenchmarkSimulate measures "volbind simulate" end to end on the default
// scenario's mix: seeding the in-memory API, binding every bindable claim
// and the report. It reports bindings per second and API writes per
// binding.
func BenchmarkSimulate(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		o := simulateOptions{Scenario: defaultScenario(), Workers: 2, ResyncPeriod: 15 * time.Second, Deadline: 10 * time.Minute}
		o.Scenario.Volumes, o.Scenario.Claims = n, n
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			ctx := klog.NewContext(b.Context(), logr.Discard())
			var bindings int
			var writes int64
			var wall float64
			for b.Loop() {
				objs, exp := o.Scenario.generate()
				res, err := runSimulation(ctx, o, objs, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				if r := res.report; !r.Completed || r.ClaimsBound != exp.Bindable || len(r.Violations) > 0 {
					b.Fatalf("report: completed %v, %d bound (want %d), violations %q", r.Completed, r.ClaimsBound, exp.Bindable, r.Violations)
				}
				bindings += res.report.Bindings
				writes += res.report.APIWrites
				wall += res.report.WallSeconds
			}
			b.ReportMetric(float64(bindings)/wall, "bindings/s")
			b.ReportMetric(float64(writes)/float64(bindings), "writes/binding")
		})
	}
}
