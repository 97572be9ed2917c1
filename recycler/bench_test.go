package recycler_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/volbind/volbind/recycler"
	"github.com/volbind/volbind/recycler/recyclertest"
)

// benchVolumes are the released volumes the benchmarks recycle in turn.
const benchVolumes = 1_000

func newBenchVolumes() []*v1.PersistentVolume {
	pvs := make([]*v1.PersistentVolume, benchVolumes)
	for i := range pvs {
		if i%2 == 0 {
			pvs[i] = nfsPV("pv-"+strconv.Itoa(i), "10Gi")
		} else {
			pvs[i] = hostPathPV("pv-"+strconv.Itoa(i), "10Gi")
		}
	}
	return pvs
}

// startKubelet makes a goroutine finish every created recycler pod with
// phase Succeeded, as a kubelet would, asynchronously to Recycle. stop must
// be called once no Recycle runs; it waits for the goroutine.
func startKubelet(pods *recyclertest.Pods) (stop func()) {
	created := make(chan types.NamespacedName, 2*benchVolumes)
	pods.OnCreate(func(pod *v1.Pod) { created <- types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name} })
	var wg sync.WaitGroup
	wg.Go(func() {
		for key := range created {
			// Fails only if the pod is gone, which cannot happen here.
			_ = pods.Finish(key.Namespace, key.Name, v1.PodSucceeded, "", "")
		}
	})
	return func() {
		pods.OnCreate(nil)
		close(created)
		wg.Wait()
	}
}

// reportRecycles reports throughput and PodAPI calls per recycle.
func reportRecycles(b *testing.B, pods *recyclertest.Pods) {
	b.Helper()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "recycles/s")
	}
	total := 0
	for _, v := range []recyclertest.Verb{recyclertest.Create, recyclertest.Get, recyclertest.Delete, recyclertest.Watch} {
		total += pods.Calls(v)
	}
	b.ReportMetric(float64(total)/float64(b.N), "calls/op")
	if pods.Len() != 0 {
		b.Fatalf("%d recycler pods left", pods.Len())
	}
}

// BenchmarkRecycle recycles 1,000 released volumes in turn, one at a time,
// each pod completed by a kubelet goroutine (or inline at creation).
func BenchmarkRecycle(b *testing.B) {
	pvs := newBenchVolumes()
	for _, kubelet := range []string{"goroutine", "inline"} {
		b.Run(fmt.Sprintf("volumes=%d/kubelet=%s", benchVolumes, kubelet), func(b *testing.B) {
			pods := recyclertest.New()
			if kubelet == "inline" {
				pods.FinishOnCreate(&v1.PodStatus{Phase: v1.PodSucceeded})
			} else {
				defer startKubelet(pods)()
			}
			r, err := recycler.New(pods, recycler.Config{})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := r.Recycle(ctx, pvs[i%benchVolumes]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportRecycles(b, pods)
		})
	}
}

// BenchmarkRecycleParallel recycles 1,000 released volumes from
// GOMAXPROCS goroutines at once; no volume is recycled by two goroutines at
// the same time.
func BenchmarkRecycleParallel(b *testing.B) {
	pvs := newBenchVolumes()
	b.Run(fmt.Sprintf("volumes=%d/kubelet=goroutine", benchVolumes), func(b *testing.B) {
		pods := recyclertest.New()
		defer startKubelet(pods)()
		r, err := recycler.New(pods, recycler.Config{})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := r.Recycle(ctx, pvs[next.Add(1)%benchVolumes]); err != nil {
					b.Error(err)
					return
				}
			}
		})
		reportRecycles(b, pods)
	})
}
