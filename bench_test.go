package volbind_test

// End-to-end benchmarks: the Binder binding a cluster on the in-memory API
// server, from Run to quiescence. A part's own benchmarks live beside it
// (cache, operations, jitter, binder/scheduling, nodepool, ...); this file
// does not copy them. Run with: go test -run '^$' -bench . .

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
)

// bindObjects returns n Available volumes and n Pending claims in three
// storage classes with sizes of 1–1024 Gi, such that every claim has a
// volume (best fit binds them all).
func bindObjects(n int) []runtime.Object {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	classes := []string{"", "gold", "silver"}
	objs := make([]runtime.Object, 0, 2*n)
	for i := range n {
		class := classes[i%len(classes)]
		size := resource.MustParse(fmt.Sprintf("%dGi", 1+rng.IntN(1024)))
		objs = append(objs, &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%06d", i)},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
				StorageClassName:              class,
				PersistentVolumeSource: v1.PersistentVolumeSource{
					CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: fmt.Sprintf("pv-%06d", i)},
				},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		}, &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%06d", i), Namespace: "bench", UID: types.UID(fmt.Sprintf("uid-claim-%06d", i))},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
				StorageClassName: ptr.To(class),
			},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
		})
	}
	return objs
}

// BenchmarkBinderBindAll binds N pending claims to N volumes end to end on
// the in-memory API server: from Run to quiescence, with the four writes
// of every binding (validated as kube-apiserver validates them) and the
// events they cause. Setup (seeding, handler registration) and shutdown
// are not timed. workers is the number of claim
// workers and of volume workers (Kubernetes runs one of each). With
// volumes=new the volumes are as the API server creates them (phase
// Pending) and the Binder runs with AvailableDelay, so claims take them
// without the Available write first.
func BenchmarkBinderBindAll(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		objs := bindObjects(n)
		fresh := pendingVolumes(objs)
		workerCounts := []int{1, 2, 8, 32}
		if n > 10_000 {
			// The size at which per-binding cost must stay flat; one
			// run takes seconds, so only Kubernetes' one worker each.
			workerCounts = workerCounts[:1]
		}
		for _, workers := range workerCounts {
			b.Run(fmt.Sprintf("claims=%d/workers=%d", n, workers), func(b *testing.B) {
				benchmarkBindAll(b, objs, n, binder.Config{ClaimWorkers: workers, VolumeWorkers: workers})
			})
			b.Run(fmt.Sprintf("claims=%d/workers=%d/volumes=new", n, workers), func(b *testing.B) {
				benchmarkBindAll(b, fresh, n, binder.Config{ClaimWorkers: workers, VolumeWorkers: workers, AvailableDelay: time.Minute})
			})
		}
	}
}

// pendingVolumes returns objs with every volume replaced by a copy in
// phase Pending.
func pendingVolumes(objs []runtime.Object) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = o
		if pv, ok := o.(*v1.PersistentVolume); ok {
			c := pv.DeepCopy()
			c.Status.Phase = v1.VolumePending
			out[i] = c
		}
	}
	return out
}

func benchmarkBindAll(b *testing.B, objs []runtime.Object, n int, cfg binder.Config) {
	b.ReportAllocs()
	var writes, conflicts int64
	for b.Loop() {
		b.StopTimer()
		srv, _, stop := bindRun(b, cfg, objs)
		st := srv.Stats()
		writes += st.TotalWrites()
		conflicts += st.Conflicts
		stop()
		for _, pvc := range srv.Claims() {
			if pvc.Status.Phase != v1.ClaimBound {
				b.Fatalf("claim %s is %s", pvc.Name, pvc.Status.Phase)
			}
		}
		b.StartTimer()
	}
	bindings := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/bindings, "ns/binding")
	b.ReportMetric(float64(writes)/bindings, "writes/binding")
	b.ReportMetric(float64(conflicts)/float64(b.N), "conflicts/op")
}

// bindRun seeds objs into a new in-memory API server, runs a Binder built
// with cfg on it and times (the timer must be stopped on entry) only the
// run until the Binder is quiescent. stop ends the Binder, waits for Run
// to return and removes its handlers.
func bindRun(b *testing.B, cfg binder.Config, objs []runtime.Object) (srv *bindertest.Server, bd *binder.Binder, stop func()) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// The server hands the Binder its stored versions instead of a deep
	// copy of each answer (bindertest.Config.SharedResults), as volbind
	// simulate runs it: a Binder never modifies what its API returns
	// (binder/results_check_test.go checks it), and the copy a test API
	// makes for a client that might is the API's cost, not the binding's.
	// bindertest's BenchmarkBindingWrites measures it: results=copies
	// against results=shared.
	srv = bindertest.NewWithConfig(bindertest.Config{SharedResults: true})
	if err := srv.Seed(ctx, objs...); err != nil {
		cancel()
		b.Fatal(err)
	}
	bd, err := binder.New(srv, cfg)
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	removeV := srv.AddEventHandler(bindertest.KindVolume, bd.VolumeHandler())
	removeC := srv.AddEventHandler(bindertest.KindClaim, bd.ClaimHandler())
	done := make(chan error, 1)
	b.StartTimer()
	go func() { done <- bd.Run(ctx) }()
	if err := bd.WaitForQuiescence(ctx); err != nil {
		cancel()
		b.Fatal(err)
	}
	b.StopTimer()
	return srv, bd, func() {
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		removeV()
		removeC()
	}
}
