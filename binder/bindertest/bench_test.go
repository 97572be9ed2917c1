package bindertest_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// benchServer returns a Server with one event handler on volumes (as a
// Binder has) counting events.
func benchServer(b *testing.B) *bindertest.Server {
	b.Helper()
	return benchServerWith(b, bindertest.Config{})
}

// benchServerWith is benchServer with cfg (and a fake clock).
func benchServerWith(b *testing.B, cfg bindertest.Config) *bindertest.Server {
	b.Helper()
	s, _ := newServerWith(b, cfg)
	var events atomic.Int64
	s.AddEventHandler(bindertest.KindVolume, toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { events.Add(1) },
		UpdateFunc: func(_, _ any) { events.Add(1) },
	})
	return s
}

// storeSize bounds the objects a create benchmark stores: every storeSize
// creates it moves on to a new Server, so that ns/op measures a store of 0
// to storeSize objects (the Binder benchmark's scale), not of b.N objects.
// Making the new Server is part of the measure (amortized, small).
const storeSize = 10_000

func BenchmarkCreateVolume(b *testing.B) {
	ctx := context.Background()
	b.Run("mode=serial", func(b *testing.B) {
		s := benchServer(b)
		pv := newVolume("", "1Gi")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if i%storeSize == 0 {
				s = benchServer(b)
			}
			pv.Name = "pv-" + strconv.Itoa(i)
			if _, err := s.CreateVolume(ctx, pv); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mode=parallel", func(b *testing.B) {
		var (
			cur atomic.Pointer[bindertest.Server]
			seq atomic.Int64
		)
		cur.Store(benchServer(b))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			pv := newVolume("", "1Gi")
			for pb.Next() {
				n := seq.Add(1)
				if n%storeSize == 0 {
					cur.Store(benchServer(b))
				}
				pv.Name = "pv-" + strconv.FormatInt(n, 10)
				if _, err := cur.Load().CreateVolume(ctx, pv); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// benchUpdate measures update (status=false) or status update of volumes,
// each goroutine writing its own volume with the resourceVersion it got
// back, as the Binder does.
func benchUpdate(b *testing.B, status bool) {
	ctx := context.Background()
	write := func(s *bindertest.Server, pv *v1.PersistentVolume, i int) (*v1.PersistentVolume, error) {
		if status {
			pv.Status.Message = fmt.Sprint(i)
			return s.UpdateVolumeStatus(ctx, pv)
		}
		pv.Annotations = map[string]string{"n": fmt.Sprint(i)}
		return s.UpdateVolume(ctx, pv)
	}
	b.Run("mode=serial", func(b *testing.B) {
		s := benchServer(b)
		pv := mustCreateVolume(b, s, newVolume("pv", "1Gi"))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			var err error
			if pv, err = write(s, pv, i); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mode=serial/results=shared", func(b *testing.B) {
		// As a Binder writes with Config.SharedResults: a shallow copy of
		// the version the last write returned, sharing its maps.
		s := benchServerWith(b, bindertest.Config{SharedResults: true})
		pv := mustCreateVolume(b, s, newVolume("pv", "1Gi"))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			next := *pv
			var err error
			if pv, err = write(s, &next, i); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mode=parallel", func(b *testing.B) {
		s := benchServer(b)
		var seq atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			pv := mustCreateVolume(b, s, newVolume(fmt.Sprintf("pv-%d", seq.Add(1)), "1Gi"))
			i := 0
			for pb.Next() {
				i++
				var err error
				if pv, err = write(s, pv, i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkUpdateVolume(b *testing.B)       { benchUpdate(b, false) }
func BenchmarkUpdateVolumeStatus(b *testing.B) { benchUpdate(b, true) }
