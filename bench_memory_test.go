package volbind_test

import (
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/volbind/volbind/binder"
)

// heapProfile names the file BenchmarkMemoryPerPair writes the heap
// profile of its largest size to, taken while every object is bound and
// alive: go test -run '^$' -bench MemoryPerPair -memory.heapprofile=heap.out .
// then go tool pprof -sample_index=inuse_space heap.out.
var heapProfile = flag.String("memory.heapprofile", "", "write the heap profile of BenchmarkMemoryPerPair's largest size, taken with every pair bound, to this file")

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemoryPerPair binds N claims to N volumes on the in-memory API
// server and reports the live heap per bound pair (after a full GC) that
// the run added: heap-B/pair in all, server-B/pair of it held by the API
// server (its store and watch history, measured once the Binder is gone)
// and binder-B/pair by the Binder (informer caches, latest cache, index,
// queues, operation state). The input objects are alive throughout and
// counted in neither. One op is one run from an empty server to every
// pair bound.
func BenchmarkMemoryPerPair(b *testing.B) {
	sizes := []int{10_000, 100_000}
	for _, n := range sizes {
		objs := bindObjects(n)
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			var total, server uint64
			for b.Loop() {
				t, s := memoryPerPair(b, objs, n, n == sizes[len(sizes)-1])
				total += t
				server += s
			}
			pairs := float64(b.N) * float64(n)
			b.ReportMetric(float64(total)/pairs, "heap-B/pair")
			b.ReportMetric(float64(server)/pairs, "server-B/pair")
			b.ReportMetric(float64(total-server)/pairs, "binder-B/pair")
		})
	}
}

// memoryPerPair runs one binding of objs and returns the live heap the
// run added with the Binder alive (total) and once it is gone (server).
// With profile it writes the heap profile to *heapProfile, if set.
func memoryPerPair(b *testing.B, objs []runtime.Object, n int, profile bool) (total, server uint64) {
	b.StopTimer()
	before := liveHeap()
	srv, bd, stop := bindRun(b, binder.Config{ClaimWorkers: 2, VolumeWorkers: 2}, objs)
	bound := 0
	for _, pvc := range srv.Claims() {
		if pvc.Status.Phase == v1.ClaimBound {
			bound++
		}
	}
	if bound != n {
		b.Fatalf("%d of %d claims bound", bound, n)
	}
	after := liveHeap()
	if profile && *heapProfile != "" {
		writeHeapProfile(b, *heapProfile)
	}
	goruntime.KeepAlive(bd)
	stop()
	withServer := liveHeap()
	goruntime.KeepAlive(srv)
	goruntime.KeepAlive(objs)
	b.StartTimer()
	return sub(after, before), sub(withServer, before)
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func writeHeapProfile(b *testing.B, name string) {
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
