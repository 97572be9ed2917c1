package binder_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/recycler"
)

// hostPathProvisioner provisions directories under root. It is also the
// Deleter of its volumes.
type hostPathProvisioner struct{ root string }

func (p hostPathProvisioner) Provision(_ context.Context, req *binder.ProvisionRequest) (*v1.PersistentVolume, error) {
	// Create the directory req.VolumeName of req.Size here. The Binder
	// fills in name, claimRef, class, capacity, access modes, ...
	return &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
		HostPath: &v1.HostPathVolumeSource{Path: p.root + "/" + req.VolumeName},
	}}}, nil
}

func (p hostPathProvisioner) Delete(_ context.Context, pv *v1.PersistentVolume) error {
	// Remove pv.Spec.HostPath.Path here; a missing directory is a success.
	return nil
}

// startBinder registers b on srv, runs it and returns a func that waits
// until it is quiescent and one that stops it.
func startBinder(ctx context.Context, srv *bindertest.Server, b *binder.Binder) (settle func(), stop func()) {
	removes := []func(){
		srv.AddEventHandler(bindertest.KindStorageClass, b.ClassHandler()),
		srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler()),
		srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler()),
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- b.Run(ctx) }()
	settle = func() {
		if err := b.WaitForQuiescence(ctx); err != nil {
			panic(err)
		}
	}
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			panic(err)
		}
		for _, r := range removes {
			r()
		}
	}
	return settle, stop
}

// seedLocalClaim stores StorageClass "local" of provisioner
// "example.com/hostpath" (Delete, Immediate) and the claim default/data
// (UID 3f6c) of that class, asking for size.
func seedLocalClaim(ctx context.Context, srv *bindertest.Server, size string) {
	err := srv.Seed(ctx,
		&storagev1.StorageClass{
			ObjectMeta:        metav1.ObjectMeta{Name: "local"},
			Provisioner:       "example.com/hostpath",
			ReclaimPolicy:     ptr.To(v1.PersistentVolumeReclaimDelete),
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
		},
		&v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", UID: "3f6c"},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
				StorageClassName: ptr.To("local"),
			},
		})
	if err != nil {
		panic(err)
	}
}

// Register an internal provisioner: claims of a class whose provisioner is
// "example.com/hostpath" get a volume "pvc-<claim UID>" that the Binder
// then binds. With the same plugin registered as a Deleter, the volume is
// deleted when the claim is.
func Example_provisioner() {
	ctx := context.Background()
	srv := bindertest.New()
	p := hostPathProvisioner{root: "/srv/volumes"}
	b, err := binder.New(srv, binder.Config{
		Provisioning: &binder.ProvisioningConfig{
			Provisioners: map[string]binder.Provisioner{"example.com/hostpath": p},
		},
		Reclaim: &binder.ReclaimConfig{
			Deleters: map[string]binder.Deleter{"example.com/hostpath": p},
		},
	})
	if err != nil {
		panic(err)
	}
	// Class "local" of example.com/hostpath; claim default/data (UID 3f6c) of 1500Mi.
	seedLocalClaim(ctx, srv, "1500Mi")
	settle, stop := startBinder(ctx, srv, b)
	defer stop()
	settle()

	pvc, _ := srv.GetClaim(ctx, "default", "data")
	pv, _ := srv.GetVolume(ctx, pvc.Spec.VolumeName)
	size := pv.Spec.Capacity[v1.ResourceStorage]
	fmt.Printf("claim %s: %s to %s\n", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName)
	fmt.Printf("volume: %s, %s, %s, provisioned by %s\n", pv.Spec.HostPath.Path, size.String(),
		pv.Spec.PersistentVolumeReclaimPolicy, pv.Annotations[volume.AnnDynamicallyProvisioned])

	if err := srv.DeleteClaim(ctx, "default", "data"); err != nil {
		panic(err)
	}
	settle()
	fmt.Println("volumes left after the claim was deleted:", len(srv.Volumes()))
	// Output:
	// claim data: Bound to pvc-3f6c
	// volume: /srv/volumes/pvc-3f6c, 2Gi, Delete, provisioned by example.com/hostpath
	// volumes left after the claim was deleted: 0
}

// Reclaim released volumes with a recycler: the Binder scrubs a Recycle
// volume with a recycler pod (here on the in-memory API, with a pod
// handler playing the kubelet) and makes it Available again; a Retain
// volume stays Released.
func Example_reclaimWithRecycler() {
	ctx := context.Background()
	srv := bindertest.New()
	// The kubelet: every recycler pod succeeds at once.
	defer srv.AddEventHandler(bindertest.KindPod, toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, _ bool) {
			pod := obj.(*v1.Pod).DeepCopy()
			pod.Status.Phase = v1.PodSucceeded
			if _, err := srv.UpdatePodStatus(ctx, pod); err != nil {
				panic(err)
			}
		},
	})()
	r, err := recycler.New(srv, recycler.Config{})
	if err != nil {
		panic(err)
	}
	b, err := binder.New(srv, binder.Config{Reclaim: &binder.ReclaimConfig{Recycler: r}})
	if err != nil {
		panic(err)
	}
	released := func(name string, policy v1.PersistentVolumeReclaimPolicy) *v1.PersistentVolume {
		return &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
				Annotations: map[string]string{volume.AnnBoundByController: "yes"}},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: policy,
				PersistentVolumeSource: v1.PersistentVolumeSource{
					NFS: &v1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/" + name},
				},
				// Bound to a claim that has been deleted.
				ClaimRef: &v1.ObjectReference{Namespace: "default", Name: "gone", UID: "uid-gone"},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
		}
	}
	if err := srv.Seed(ctx, released("scratch", v1.PersistentVolumeReclaimRecycle), released("keep", v1.PersistentVolumeReclaimRetain)); err != nil {
		panic(err)
	}
	settle, stop := startBinder(ctx, srv, b)
	defer stop()
	settle()

	for _, pv := range srv.Volumes() {
		fmt.Printf("%s (%s): %s, bound: %v\n", pv.Name, pv.Spec.PersistentVolumeReclaimPolicy, pv.Status.Phase, pv.Spec.ClaimRef != nil)
	}
	fmt.Println("recycler pods left:", len(srv.List(bindertest.KindPod)))
	// Output:
	// keep (Retain): Released, bound: true
	// scratch (Recycle): Available, bound: false
	// recycler pods left: 0
}
