package cache

import (
	"fmt"
	"runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func newBenchLatest(tb testing.TB, n int) (*Latest[*v1.PersistentVolume], []string) {
	tb.Helper()
	c := NewLatest[*v1.PersistentVolume]()
	keys := make([]string, n)
	for i := range n {
		keys[i] = pvName(i)
		if _, err := c.Store(newPV(keys[i], "", "1")); err != nil {
			tb.Fatal(err)
		}
	}
	return c, keys
}

func BenchmarkLatestGet(b *testing.B) {
	for _, n := range benchSizes {
		c, keys := newBenchLatest(b, n)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := int(fastrand() % uint64(n))
				for pb.Next() {
					if _, ok := c.Get(keys[i]); !ok {
						b.Errorf("Get(%q) missed", keys[i])
						return
					}
					if i++; i == n {
						i = 0
					}
				}
			})
		})
	}
}

func BenchmarkLatestStore(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			c, keys := newBenchLatest(b, n)
			objs := newVersionedObjects(keys, 1<<12)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_, obj, ok := objs.nextFor(i)
				if !ok {
					b.StopTimer()
					c.Delete(keys[i])
					if _, err := c.Store(objs.restart(i)); err != nil {
						b.Fatal(err)
					}
					_, obj, _ = objs.nextFor(i)
					b.StartTimer()
				}
				if stored, err := c.Store(obj); !stored || err != nil {
					b.Fatalf("Store = %v, %v", stored, err)
				}
				if i++; i == n {
					i = 0
				}
			}
		})
	}
}

// BenchmarkLatestOverhead reports the heap a Latest cache adds per object
// beyond the objects themselves, at 100,000 objects.
func BenchmarkLatestOverhead(b *testing.B) {
	objs := overheadObjects(100_000)
	var perObject float64
	for b.Loop() {
		perObject = latestOverhead(b, objs)
	}
	b.ReportMetric(perObject, "B/object")
}

// TestLatestOverhead checks the memory target: at most 64 bytes per object
// beyond the objects at 100,000 objects.
func TestLatestOverhead(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 100,000 objects")
	}
	const limit = 64
	if got := latestOverhead(t, overheadObjects(100_000)); got > limit {
		t.Errorf("Latest uses %.1f bytes per object beyond the objects, want at most %d", got, limit)
	} else {
		t.Logf("Latest uses %.1f bytes per object beyond the objects", got)
	}
}

func overheadObjects(n int) []*v1.PersistentVolume {
	objs := make([]*v1.PersistentVolume, n)
	for i := range n {
		objs[i] = newPV(pvName(i), "", "1")
	}
	return objs
}

// latestOverhead stores objs in a new Latest cache and returns the heap it
// grew by, per object.
func latestOverhead(tb testing.TB, objs []*v1.PersistentVolume) float64 {
	tb.Helper()
	before := heapInUse()
	c := NewLatest[*v1.PersistentVolume]()
	for _, o := range objs {
		if _, err := c.Store(o); err != nil {
			tb.Fatal(err)
		}
	}
	after := heapInUse()
	runtime.KeepAlive(c)
	return (float64(after) - float64(before)) / float64(len(objs))
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkLatestAppendKeys lists every key a shard at a time, as a
// resync sweep does over one period (one op = every shard once), for
// cluster-scoped objects (the key is the name) and namespaced ones (the
// key is built).
func BenchmarkLatestAppendKeys(b *testing.B) {
	for _, n := range benchSizes {
		volumes, _ := newBenchLatest(b, n)
		claims := NewLatest[*v1.PersistentVolumeClaim]()
		for i := range n {
			if _, err := claims.Store(newPVC(fmt.Sprintf("ns-%d", i%10), pvName(i), "1")); err != nil {
				b.Fatal(err)
			}
		}
		for _, c := range []struct {
			kind       string
			appendKeys func(int, []string) []string
		}{{"volumes", volumes.AppendKeys}, {"claims", claims.AppendKeys}} {
			b.Run(fmt.Sprintf("objects=%d/kind=%s", n, c.kind), func(b *testing.B) {
				b.ReportAllocs()
				var buf []string
				for b.Loop() {
					listed := 0
					for i := range volumes.Shards() {
						buf = c.appendKeys(i, buf[:0])
						listed += len(buf)
					}
					if listed != n {
						b.Fatalf("%d keys listed, want %d", listed, n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			})
		}
	}
}
