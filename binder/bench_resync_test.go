package binder

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkResyncBound measures what the periodic resync costs for a
// cluster whose claims are all bound: one op is a sync of one bound claim
// and of its volume, as a resync makes them (nothing to write), on a
// cluster of the given number of pairs.
func BenchmarkResyncBound(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			objs := make([]runtime.Object, 0, 2*n)
			// The keys a resync queues, made here so that the loop
			// measures the syncs, not the formatting of their keys.
			claimKeys, volumeNames := make([]string, n), make([]string, n)
			for i := range n {
				claim, pv := fmt.Sprintf("claim-%06d", i), fmt.Sprintf("pv-%06d", i)
				uid := types.UID(fmt.Sprintf("uid-%06d", i))
				objs = append(objs,
					newPV(pv, "1Gi", pvPhase(v1.VolumeBound), boundTo(claim, uid)),
					newPVC(claim, "1Gi", pvcBound(pv), func(c *v1.PersistentVolumeClaim) { c.UID = uid }))
				claimKeys[i], volumeNames[i] = ns+"/"+claim, pv
			}
			e := newEnv(b, objs...)
			e.run(e.b)
			e.settle(e.b)
			writes := e.writes()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := e.b.SyncClaim(b.Context(), claimKeys[i%n]); err != nil {
					b.Fatal(err)
				}
				if err := e.b.SyncVolume(b.Context(), volumeNames[i%n]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.StopTimer()
			if w := e.writes() - writes; w != 0 {
				b.Fatalf("resyncing bound pairs wrote %d times", w)
			}
		})
	}
}
