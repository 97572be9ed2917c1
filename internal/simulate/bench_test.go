package simulate

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

// BenchmarkSimulatePods measures "volbind simulate -pods": StatefulSet
// pods with one WaitForFirstConsumer claim each, scheduled through
// binder/scheduling onto nodes with hostname-local volumes (ten pods per
// node), their claims bound by the Binder. It reports pods scheduled per
// second of the run's wall time.
func BenchmarkSimulatePods(b *testing.B) {
	for _, n := range []int{100, 1_000} {
		o := simulateOptions{Scenario: defaultScenario(), Workers: 2, ResyncPeriod: 15 * time.Second, Deadline: 10 * time.Minute}
		o.Scenario.Volumes, o.Scenario.Claims, o.Scenario.Pods, o.Scenario.Nodes = 0, 0, n, n/10
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			ctx := klog.NewContext(b.Context(), logr.Discard())
			var scheduled int
			var wall float64
			for b.Loop() {
				objs, exp := o.Scenario.generate()
				res, err := runSimulation(ctx, o, objs, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				r := res.report
				if !r.Completed || r.Pods == nil || r.Pods.ScheduledByRun != exp.Pods || r.ClaimsBound != exp.Pods || len(r.Violations) > 0 {
					b.Fatalf("report: completed %v, pods %+v, %d claims bound (want %d), violations %q", r.Completed, r.Pods, r.ClaimsBound, exp.Pods, r.Violations)
				}
				scheduled += r.Pods.ScheduledByRun
				wall += r.WallSeconds
			}
			b.ReportMetric(float64(scheduled)/wall, "pods/s")
		})
	}
}
