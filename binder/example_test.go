package binder_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
)

func exampleObjects() (*v1.PersistentVolume, *v1.PersistentVolume, *v1.PersistentVolumeClaim) {
	pv := func(name, size string) *v1.PersistentVolume {
		return &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource: v1.PersistentVolumeSource{
					CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: name},
				},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		}
	}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", UID: "uid-data", ResourceVersion: "1"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("5Gi")}},
			StorageClassName: ptr.To(""),
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	return pv("big", "100Gi"), pv("small", "10Gi"), pvc
}

// The in-memory API server of binder/bindertest is both the Binder's API
// and its event source.
func Example_inMemoryAPI() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	big, small, claim := exampleObjects()
	srv := bindertest.New()
	if err := srv.Seed(ctx, big, small, claim); err != nil {
		panic(err)
	}
	b, err := binder.New(srv, binder.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler())()
	defer srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler())()
	defer srv.AddEventHandler(bindertest.KindStorageClass, b.ClassHandler())()

	done := make(chan error)
	go func() { done <- b.Run(ctx) }()
	err = wait.PollUntilContextTimeout(ctx, time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pvc, err := srv.GetClaim(ctx, "default", "data")
		return err == nil && pvc.Status.Phase == v1.ClaimBound, err
	})
	if err != nil {
		panic(err)
	}
	if err := b.WaitForQuiescence(ctx); err != nil {
		panic(err)
	}
	pvc, _ := srv.GetClaim(ctx, "default", "data")
	fmt.Printf("claim %s is %s to volume %s\n", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName)
	fmt.Printf("API writes: %d\n", srv.Stats().TotalWrites())
	cancel()
	fmt.Println("Run:", <-done)
	// Output:
	// claim data is Bound to volume small
	// API writes: 4
	// Run: <nil>
}

// NewForClientset wires a Binder to a kubernetes.Interface and its
// informers. The fake clientset does not advance resourceVersions, which
// the Binder relies on (as the PV controller does), so this example has
// bindertest.AdvanceVersions make it set them as the API server would.
func ExampleNewForClientset() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	big, small, claim := exampleObjects()
	cs := fake.NewClientset(big, small, claim)
	bindertest.AdvanceVersions(cs)

	factory := informers.NewSharedInformerFactory(cs, 0)
	b, err := binder.NewForClientset(ctx, cs, factory, binder.Config{})
	if err != nil {
		panic(err)
	}
	factory.Start(ctx.Done())
	done := make(chan error)
	go func() { done <- b.Run(ctx) }()

	err = wait.PollUntilContextTimeout(ctx, time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pvc, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		return err == nil && pvc.Status.Phase == v1.ClaimBound, err
	})
	if err != nil {
		panic(err)
	}
	pv, _ := cs.CoreV1().PersistentVolumes().Get(ctx, "small", metav1.GetOptions{})
	fmt.Printf("volume %s is %s to claim %s/%s\n", pv.Name, pv.Status.Phase, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
	cancel()
	fmt.Println("Run:", <-done)
	factory.Shutdown()
	// Output:
	// volume small is Bound to claim default/data
	// Run: <nil>
}

// With AvailableDelay, a claim takes a volume the API server has just
// created (phase Pending) without the Available write Kubernetes makes
// first: the binding costs its four writes only.
func ExampleConfig_availableDelay() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	big, small, claim := exampleObjects()
	big.Status.Phase, small.Status.Phase = v1.VolumePending, v1.VolumePending
	srv := bindertest.New()
	if err := srv.Seed(ctx, big, small, claim); err != nil {
		panic(err)
	}
	b, err := binder.New(srv, binder.Config{AvailableDelay: time.Hour})
	if err != nil {
		panic(err)
	}
	defer srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler())()
	defer srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler())()
	srv.ResetStats()

	done := make(chan error)
	go func() { done <- b.Run(ctx) }()
	if err := b.WaitForQuiescence(ctx); err != nil {
		panic(err)
	}
	pvc, _ := srv.GetClaim(ctx, "default", "data")
	unused, _ := srv.GetVolume(ctx, "big")
	fmt.Printf("claim %s is %s to volume %s after %d writes\n", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName, srv.Stats().TotalWrites())
	fmt.Printf("volume %s is still %s: it is marked Available an hour after it was first seen, once no waiting claim may take it\n", unused.Name, unused.Status.Phase)
	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// claim data is Bound to volume small after 4 writes
	// volume big is still Pending: it is marked Available an hour after it was first seen, once no waiting claim may take it
}
