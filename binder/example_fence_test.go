package binder_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
)

// A Fence keeps a Binder that may no longer act (its leader-election Lease
// is lost or about to expire) from writing or calling its plugins: its
// syncs fail with an error wrapping ErrFenced until the Fence allows again.
func ExampleFence() {
	ctx := context.Background()
	srv := bindertest.New()
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: "/data/pv1"},
			},
		},
	}
	if err := srv.Seed(ctx, pv); err != nil {
		panic(err)
	}
	var leading atomic.Bool
	b, err := binder.New(srv, binder.Config{
		Identity: "replica-a",
		Fence: binder.FenceFunc(func(context.Context) error {
			if !leading.Load() {
				return errors.New("not the leader")
			}
			return nil
		}),
	})
	if err != nil {
		panic(err)
	}
	defer srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler())()

	err = b.SyncVolume(ctx, "pv1")
	fmt.Println("fenced:", errors.Is(err, binder.ErrFenced))
	leading.Store(true)
	err = b.SyncVolume(ctx, "pv1")
	got, _ := srv.GetVolume(ctx, "pv1")
	fmt.Println("allowed:", err, got.Status.Phase)
	// Output:
	// fenced: true
	// allowed: <nil> Available
}
