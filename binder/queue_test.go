package binder

import (
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
)

// TestFifoOrder: random pushes and pops against a slice: the fifo pops in
// push order through drains and compactions, and lets go of a large array
// once drained.
func TestFifoOrder(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var q fifo[int]
	var want []int
	next := 0
	for step := range 2_000 {
		// Bursts of pushes, then of pops, of random sizes.
		if rng.IntN(2) == 0 {
			for range rng.IntN(3 * fifoKeepCap) {
				q.Push(next)
				want = append(want, next)
				next++
			}
			continue
		}
		for range rng.IntN(3 * fifoKeepCap) {
			if len(want) == 0 {
				break
			}
			if got := q.Pop(); got != want[0] {
				t.Fatalf("step %d: Pop() = %d, want %d", step, got, want[0])
			}
			want = want[1:]
		}
		if q.Len() != len(want) {
			t.Fatalf("step %d: Len() = %d, want %d", step, q.Len(), len(want))
		}
	}
	for range 2 * fifoKeepCap {
		q.Push(1)
	}
	for q.Len() > 0 {
		q.Pop()
	}
	if q.items != nil {
		t.Errorf("drained after a burst of %d: keeps an array of %d", 2*fifoKeepCap, cap(q.items))
	}
}

// TestWorkqueueMetrics: the workqueues built around the fifo still report
// to the Binder's registry, under the queue names.
func TestWorkqueueMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "10Gi"), newPVC("claim1", "1Gi"))
	reg := prometheus.NewRegistry()
	b := e.newBinder(Config{Registerer: reg})
	e.run(b)
	e.settle(b)
	if got := e.claim("claim1").Status.Phase; got != v1.ClaimBound {
		t.Fatalf("claim = %s, want Bound", got)
	}
	for _, name := range []string{"claims", "volumes"} {
		if got := counterSum(t, reg, "volbind_binder_workqueue_adds_total", "name", name); got < 1 {
			t.Errorf("adds_total{name=%q} = %v, want at least 1", name, got)
		}
	}
}
