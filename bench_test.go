package volbind_test

// End-to-end benchmarks of the sync-loop hot paths. Each issue adds the
// paths it builds; run them with: go test -run '^$' -bench . .

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volbind/volbind/jitter"
	"github.com/volbind/volbind/operations"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
)

// benchVolumes returns n volume names and UIDs.
func benchVolumes(n int) (names []string, uids []types.UID) {
	names, uids = make([]string, n), make([]types.UID, n)
	for i := range names {
		names[i] = fmt.Sprintf("pvc-%08d", i)
		uids[i] = types.UID(fmt.Sprintf("6f1c2a4e-0d3b-4a8e-9c55-%012d", i))
	}
	return names, uids
}

// BenchmarkOperationsDelete is the PV controller's delete path for a
// released volume: build the operation name, start the delete under it,
// and in the operation take the volume's lock. The operation does no I/O,
// so this measures the machinery: one op is one delete started and
// finished.
func BenchmarkOperationsDelete(b *testing.B) {
	const n = 1 << 16
	names, uids := benchVolumes(n)
	var locks operations.Locks
	deleteOp := func(pv string) func(context.Context) error {
		return func(context.Context) error {
			locks.Lock(pv)
			locks.Unlock(pv)
			return nil
		}
	}
	ops := make([]func(context.Context) error, n)
	for i := range ops {
		ops[i] = deleteOp(names[i])
	}
	b.Run("mode=serial", func(b *testing.B) {
		m := operations.New(operations.Config{})
		defer m.Shutdown()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			j := i % n
			name := operations.VolumeOpName("delete", names[j], uids[j])
			for m.Run(context.Background(), name, ops[j]) != nil {
				// This volume's previous delete is still finishing.
			}
			i++
		}
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("mode=parallel", func(b *testing.B) {
		m := operations.New(operations.Config{})
		defer m.Shutdown()
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			base := int(next.Add(1)) * 4096
			for i := 0; pb.Next(); i++ {
				j := (base + i%4096) % n
				name := operations.VolumeOpName("delete", names[j], uids[j])
				for m.Run(context.Background(), name, ops[j]) != nil {
					// This volume's previous delete is still finishing.
				}
			}
		})
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkOperationsDuplicate is a sync of a volume whose delete is still
// running: the name is built and the Run refused.
func BenchmarkOperationsDuplicate(b *testing.B) {
	names, uids := benchVolumes(64)
	m := operations.New(operations.Config{})
	release := make(chan struct{})
	opNames := make([]string, len(names))
	for i := range names {
		opNames[i] = operations.VolumeOpName("delete", names[i], uids[i])
		if err := m.Run(context.Background(), opNames[i], func(context.Context) error { <-release; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		close(release)
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		m.Shutdown()
	})
	noop := func(context.Context) error { return nil }
	b.Run("mode=serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if m.Run(context.Background(), opNames[0], noop) != operations.ErrAlreadyRunning {
				b.Fatal("duplicate not refused")
			}
		}
	})
	b.Run("mode=parallel", func(b *testing.B) {
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			name := opNames[next.Add(1)%int64(len(opNames))]
			for pb.Next() {
				if m.Run(context.Background(), name, noop) != operations.ErrAlreadyRunning {
					b.Error("duplicate not refused")
					return
				}
			}
		})
	})
}

// BenchmarkOperationsLocks is the per-volume SetUp/TearDown mutex taken
// and released by parallel syncs over the given number of volumes.
func BenchmarkOperationsLocks(b *testing.B) {
	for _, n := range []int{1, 1_000, 100_000} {
		names, _ := benchVolumes(n)
		b.Run(fmt.Sprintf("volumes=%d", n), func(b *testing.B) {
			var locks operations.Locks
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)) * 7919
				for pb.Next() {
					pv := names[i%n]
					locks.Lock(pv)
					locks.Unlock(pv)
					i++
				}
			})
		})
	}
}

// claimKeys returns n claim keys as the binder's claim queue holds them.
func claimKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/claim-%d", i%50, i)
	}
	return keys
}

// BenchmarkResyncSchedule schedules every claim of a cluster into a
// resync over a client-go delaying queue (one op = all claims).
func BenchmarkResyncSchedule(b *testing.B) {
	for _, n := range []int{10_000} {
		keys := claimKeys(n)
		q := workqueue.NewTypedDelayingQueue[string]()
		b.Cleanup(q.ShutDown)
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := jitter.NewResync[string](q.Add, jitter.StringHash, jitter.ResyncConfig{Period: 10 * time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				for _, k := range keys {
					r.Add(k)
				}
			}
		})
	}
}

// BenchmarkResyncPeriod runs a resync of every claim into a client-go
// delaying queue and a worker that takes each key from the queue: one op
// is one whole period, that is n enqueues and n Get/Done.
func BenchmarkResyncPeriod(b *testing.B) {
	for _, n := range []int{10_000} {
		keys := claimKeys(n)
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			const period = 10 * time.Minute
			fc := testingclock.NewFakeClock(time.Unix(0, 0))
			q := workqueue.NewTypedDelayingQueue[string]()
			defer q.ShutDown()
			r, err := jitter.NewResync[string](q.Add, jitter.StringHash, jitter.ResyncConfig{Period: period, Clock: fc})
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range keys {
				r.Add(k)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				r.Run(ctx)
			}()
			defer func() {
				cancel()
				<-done
			}()
			// Take the keys of the slot at Run's start off the queue.
			if err := wait.PollUntilContextTimeout(ctx, 100*time.Microsecond, wait.ForeverTestTimeout, true,
				func(context.Context) (bool, error) { return fc.HasWaiters(), nil }); err != nil {
				b.Fatal(err)
			}
			for q.Len() > 0 {
				k, _ := q.Get()
				q.Done(k)
			}
			b.ReportAllocs()
			for b.Loop() {
				for !fc.HasWaiters() {
					// Run has enqueued the last period and is about to
					// arm its timer: a step before that would be missed.
					runtime.Gosched()
				}
				fc.Step(period)
				for range n {
					k, _ := q.Get()
					q.Done(k)
				}
			}
		})
	}
}
