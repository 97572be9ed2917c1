package operations

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func noop(context.Context) error { return nil }

// names returns n distinct operation names shaped like the PV
// controller's.
func names(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = VolumeOpName("delete", fmt.Sprintf("pvc-%08d", i), "6f1c2a4e-0d3b-4a8e-9c55-1f2e3d4c5b6a")
	}
	return s
}

// BenchmarkMapRunFinish starts a no-op under distinct names and counts
// each until it has finished (Wait at the end is inside the timing).
func BenchmarkMapRunFinish(b *testing.B) {
	const n = 1 << 16
	ns := names(n)
	b.Run("mode=serial", func(b *testing.B) {
		m := New(Config{})
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := m.Run(context.Background(), ns[i%n], noop); err != nil {
				b.Fatal(err)
			}
			i++
		}
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("mode=parallel", func(b *testing.B) {
		m := New(Config{})
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			// Each goroutine takes its own block of names.
			base := int(next.Add(1)) * 4096
			for i := 0; pb.Next(); i++ {
				name := ns[(base+i%4096)%n]
				for m.Run(context.Background(), name, noop) != nil {
					// The previous use of this name has not finished:
					// its goroutine may wait in this P's run queue
					// behind this loop, so let it run. Spinning
					// without yielding measured the scheduler's 10 ms
					// preemption instead of the Map (see the package's
					// performance notes).
					runtime.Gosched()
				}
			}
		})
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkBareGoroutine is the floor under BenchmarkMapRunFinish: a go
// statement and a WaitGroup, which every run+finish needs at least (an
// operation runs in a goroutine of its own), with nothing of the Map's
// bookkeeping. On a quiet 2-core machine, 3 runs: this 860–916 ns, Map
// run+finish 958–1,278 ns (serial) and 965–1,060 ns (parallel); a pool of
// parked goroutines handed each operation over a channel took 1,163–1,262
// ns, slower than the go statement, so the Map starts a goroutine per
// operation.
func BenchmarkBareGoroutine(b *testing.B) {
	var wg sync.WaitGroup
	var n atomic.Int64
	b.ReportAllocs()
	for b.Loop() {
		wg.Add(1)
		go func() { n.Add(1); wg.Done() }()
	}
	wg.Wait()
}

// BenchmarkMapRunDuplicate measures the refusal of a name that is running.
func BenchmarkMapRunDuplicate(b *testing.B) {
	m := New(Config{})
	release := make(chan struct{})
	ns := names(64)
	for _, name := range ns {
		if err := m.Run(context.Background(), name, func(context.Context) error { <-release; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		close(release)
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("mode=serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if m.Run(context.Background(), ns[0], noop) != ErrAlreadyRunning {
				b.Fatal("duplicate not refused")
			}
		}
	})
	b.Run("mode=parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			name := ns[next.Add(1)%64]
			for pb.Next() {
				if m.Run(context.Background(), name, noop) != ErrAlreadyRunning {
					b.Error("duplicate not refused")
					return
				}
			}
		})
	})
}

// BenchmarkLocks locks and unlocks keys drawn from a set of the given
// size, in parallel. With one key every Lock contends; with many keys
// Lock/Unlock is uncontended.
func BenchmarkLocks(b *testing.B) {
	for _, n := range []int{1, 1_000, 100_000} {
		ns := names(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			var l Locks
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)) * 7919
				for pb.Next() {
					key := ns[i%n]
					l.Lock(key)
					l.Unlock(key)
					i++
				}
			})
		})
	}
	b.Run("keys=1/mode=serial", func(b *testing.B) {
		var l Locks
		b.ReportAllocs()
		for b.Loop() {
			l.Lock("pv-1")
			l.Unlock("pv-1")
		}
	})
}
