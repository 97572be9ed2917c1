package binder_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/recycler"
)

// benchReleased returns n volumes bound to deleted claims.
func benchReleased(n int, policy v1.PersistentVolumeReclaimPolicy) []runtime.Object {
	out := make([]runtime.Object, n)
	for i := range n {
		name := fmt.Sprintf("pv-%05d", i)
		out[i] = &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
				Annotations: map[string]string{volume.AnnBoundByController: "yes", volume.AnnDynamicallyProvisioned: "example.com/hostpath"}},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: policy,
				PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv/" + name}},
				ClaimRef:                      &v1.ObjectReference{Namespace: "default", Name: "gone-" + name, UID: types.UID("uid-gone-" + name)},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
		}
	}
	return out
}

// benchPending returns a class of the provisioner and n pending claims.
func benchPending(n int) []runtime.Object {
	out := []runtime.Object{&storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: "local"},
		Provisioner:       "example.com/hostpath",
		ReclaimPolicy:     ptr.To(v1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}}
	for i := range n {
		name := fmt.Sprintf("claim-%05d", i)
		out = append(out, &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
				StorageClassName: ptr.To("local"),
			},
		})
	}
	return out
}

// runUntilDone seeds a server, runs a Binder configured by cfg on it until
// done reports success, and returns the API writes it took (the kubelet's
// pod status updates excluded).
func runUntilDone(b *testing.B, objs []runtime.Object, cfg func(*bindertest.Server) binder.Config, done func(*bindertest.Server) bool) int64 {
	b.StopTimer()
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	srv := bindertest.New()
	if err := srv.Seed(ctx, objs...); err != nil {
		b.Fatal(err)
	}
	// The kubelet: recycler pods succeed at once.
	defer srv.AddEventHandler(bindertest.KindPod, toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, _ bool) {
			pod := obj.(*v1.Pod).DeepCopy()
			pod.Status.Phase = v1.PodSucceeded
			_, _ = srv.UpdatePodStatus(ctx, pod)
		},
	})()
	bd, err := binder.New(srv, cfg(srv))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.AddEventHandler(bindertest.KindStorageClass, bd.ClassHandler())()
	defer srv.AddEventHandler(bindertest.KindVolume, bd.VolumeHandler())()
	defer srv.AddEventHandler(bindertest.KindClaim, bd.ClaimHandler())()
	srv.ResetStats()
	b.StartTimer()

	runDone := make(chan error, 1)
	go func() { runDone <- bd.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := bd.WaitForQuiescence(wctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if !done(srv) {
		b.Fatal("the Binder became quiescent before it was done")
	}
	cancel()
	if err := <-runDone; err != nil {
		b.Fatal(err)
	}
	st := srv.Stats()
	return st.TotalWrites() - st.Writes[bindertest.KindPod][bindertest.VerbUpdateStatus]
}

// BenchmarkReclaim measures deleting and recycling released volumes end to
// end on the in-memory API: ops/s and API writes per volume.
func BenchmarkReclaim(b *testing.B) {
	deleter := hostPathProvisioner{root: "/srv"}
	for _, n := range []int{1_000} {
		for _, tc := range []struct {
			op     string
			policy v1.PersistentVolumeReclaimPolicy
			cfg    func(*bindertest.Server) binder.Config
			done   func(*bindertest.Server) bool
		}{{
			op: "delete", policy: v1.PersistentVolumeReclaimDelete,
			cfg: func(*bindertest.Server) binder.Config {
				return binder.Config{Reclaim: &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{"example.com/hostpath": deleter}}}
			},
			done: func(s *bindertest.Server) bool { return len(s.Volumes()) == 0 },
		}, {
			op: "recycle", policy: v1.PersistentVolumeReclaimRecycle,
			cfg: func(s *bindertest.Server) binder.Config {
				r, err := recycler.New(s, recycler.Config{})
				if err != nil {
					b.Fatal(err)
				}
				return binder.Config{Reclaim: &binder.ReclaimConfig{Recycler: r}}
			},
			done: func(s *bindertest.Server) bool {
				for _, pv := range s.Volumes() {
					if pv.Status.Phase != v1.VolumeAvailable {
						return false
					}
				}
				return true
			},
		}} {
			objs := benchReleased(n, tc.policy)
			b.Run(fmt.Sprintf("op=%s/volumes=%d", tc.op, n), func(b *testing.B) {
				b.ReportAllocs()
				var writes int64
				for range b.N {
					writes += runUntilDone(b, objs, tc.cfg, tc.done)
				}
				ops := float64(n * b.N)
				b.ReportMetric(ops/b.Elapsed().Seconds(), "ops/s")
				b.ReportMetric(float64(writes)/ops, "writes/op")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/ops, "ns/volume")
			})
		}
	}
}

// BenchmarkProvision measures provisioning and binding pending claims end
// to end on the in-memory API: ops/s and API writes per claim.
func BenchmarkProvision(b *testing.B) {
	p := hostPathProvisioner{root: "/srv"}
	cfg := func(*bindertest.Server) binder.Config {
		return binder.Config{Provisioning: &binder.ProvisioningConfig{Provisioners: map[string]binder.Provisioner{"example.com/hostpath": p}}}
	}
	for _, n := range []int{1_000} {
		objs := benchPending(n)
		done := func(s *bindertest.Server) bool {
			for _, pvc := range s.Claims() {
				if pvc.Status.Phase != v1.ClaimBound {
					return false
				}
			}
			return len(s.Volumes()) == n
		}
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var writes int64
			for range b.N {
				writes += runUntilDone(b, objs, cfg, done)
			}
			ops := float64(n * b.N)
			b.ReportMetric(ops/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(float64(writes)/ops, "writes/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/ops, "ns/volume")
		})
	}
}
