package bindertest_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// Seed a volume, update it, then fail an update sent with the stale
// resourceVersion, and read the request counts.
func Example() {
	ctx := context.Background()
	s := bindertest.New()
	err := s.Seed(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "vol-1"},
			},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	pv, _ := s.GetVolume(ctx, "pv1")
	stale := pv.DeepCopy()

	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "data"}
	pv, err = s.UpdateVolume(ctx, pv)
	fmt.Println("update:", err, "resourceVersion", pv.ResourceVersion)

	stale.Labels = map[string]string{"tier": "fast"}
	_, err = s.UpdateVolume(ctx, stale)
	fmt.Println("stale update is a conflict:", apierrors.IsConflict(err))
	fmt.Println(err)

	st := s.Stats()
	fmt.Println("writes:", st.Writes, "reads:", st.Reads, "conflicts:", st.Conflicts)
	// Output:
	// update: <nil> resourceVersion 2
	// stale update is a conflict: true
	// Operation cannot be fulfilled on persistentvolumes "pv1": the object has been modified; please apply your changes to the latest version and try again
	// writes: map[PersistentVolume:map[update:2]] reads: map[PersistentVolume:1] conflicts: 1
}

// Subscribe to claims as an informer would: existing claims are replayed,
// then every change arrives in order, on the writing goroutine.
func ExampleServer_AddEventHandler() {
	ctx := context.Background()
	s := bindertest.New()
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if err := s.Seed(ctx, claim); err != nil {
		fmt.Println(err)
		return
	}
	remove := s.AddEventHandler(bindertest.KindClaim, toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			fmt.Println("add", obj.(*v1.PersistentVolumeClaim).Name, "initial:", initial)
		},
		UpdateFunc: func(old, obj any) {
			fmt.Println("update", old.(*v1.PersistentVolumeClaim).Status.Phase, "->", obj.(*v1.PersistentVolumeClaim).Status.Phase)
		},
		DeleteFunc: func(obj any) { fmt.Println("delete", obj.(*v1.PersistentVolumeClaim).Name) },
	})
	defer remove()

	got, _ := s.GetClaim(ctx, "default", "data")
	got.Status.Phase = v1.ClaimBound
	if _, err := s.UpdateClaimStatus(ctx, got); err != nil {
		fmt.Println(err)
	}
	if err := s.DeleteClaim(ctx, "default", "data"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// add data initial: true
	// update Pending -> Bound
	// delete data
}

// Writes are validated as kube-apiserver validates them: a volume without
// a source, with capacity 0 and an invalid name fails with the same
// Invalid error and field paths, and nothing is stored.
func ExampleServer_CreateVolume_invalid() {
	ctx := context.Background()
	s := bindertest.New()
	_, err := s.CreateVolume(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("0")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		},
	})
	fmt.Println("invalid:", apierrors.IsInvalid(err))
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		fmt.Println(c.Field, c.Type)
	}
	fmt.Println("stored:", len(s.Volumes()))
	// Output:
	// invalid: true
	// metadata.name FieldValueInvalid
	// spec.capacity[storage] FieldValueInvalid
	// spec FieldValueRequired
	// stored: 0
}
