package bindertest_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
)

// Arm three different faults on the updates of one volume: its next three
// updates fail in that order, the third after it has been applied.
func ExampleServer_ArmFaults() {
	ctx := context.Background()
	s := bindertest.NewWithConfig(bindertest.Config{Seed: ptr.To[int64](42)})
	_, _ = s.CreateVolume(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: "/data/pv1"},
			},
		},
	})
	update := bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindVolume, Name: "pv1"}
	conflict, timeout, lost := update, update, update
	conflict.Conflict = true
	timeout.Timeout = true
	lost.Timeout, lost.Applied = true, true
	s.ArmFaults(conflict, timeout, lost)
	for i := range 4 {
		pv, _ := s.GetVolume(ctx, "pv1")
		pv.Labels = map[string]string{"try": fmt.Sprint(i)}
		_, err := s.UpdateVolume(ctx, pv)
		now, _ := s.GetVolume(ctx, "pv1")
		fmt.Printf("update %d: error %v; stored label %q\n", i, err != nil, now.Labels["try"])
	}
	// Output:
	// update 0: error true; stored label ""
	// update 1: error true; stored label ""
	// update 2: error true; stored label "2"
	// update 3: error false; stored label "3"
}

// Reorder one volume's events on their way to handlers: the handler sees
// the second change before the first.
func ExampleServer_InjectWatchFault() {
	ctx := context.Background()
	s := bindertest.New()
	_, _ = s.CreateVolume(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: "/data/pv1"},
			},
		},
	})
	remove := s.AddEventHandler(bindertest.KindVolume, handlerFuncs(func(pv *v1.PersistentVolume) {
		fmt.Printf("handler saw %q\n", pv.Labels["n"])
	}))
	defer remove()
	s.InjectWatchFault(bindertest.WatchFault{Name: "pv1", Action: bindertest.WatchReorder, Times: 1})
	for _, n := range []string{"first", "second"} {
		pv, _ := s.GetVolume(ctx, "pv1")
		pv.Labels = map[string]string{"n": n}
		_, _ = s.UpdateVolume(ctx, pv)
	}
	// Output:
	// handler saw ""
	// handler saw "second"
	// handler saw "first"
}

// handlerFuncs calls f with the new object of every add and update.
func handlerFuncs(f func(*v1.PersistentVolume)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { f(o.(*v1.PersistentVolume)) },
		UpdateFunc: func(_, o any) { f(o.(*v1.PersistentVolume)) },
	}
}
