package scheduling_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/scheduling"
)

// informerEnv is a VolumeBinder following the informers of a fake
// clientset.
type informerEnv struct {
	ctx           context.Context
	cs            *fake.Clientset
	vb            *scheduling.VolumeBinder
	pvInf, pvcInf toolscache.SharedIndexInformer
}

// newInformerEnv starts informers on a fake clientset holding objs and a
// VolumeBinder that follows them (follow false: fed by VolumeHandler and
// ClaimHandler instead).
func newInformerEnv(t *testing.T, follow bool, objs ...runtime.Object) *informerEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	e := &informerEnv{ctx: ctx, cs: fake.NewClientset(objs...)}
	bumpVersions(e.cs)
	f := informers.NewSharedInformerFactory(e.cs, 0)
	e.pvInf, e.pvcInf = f.Core().V1().PersistentVolumes().Informer(), f.Core().V1().PersistentVolumeClaims().Informer()
	vb, err := scheduling.New(binder.NewClientsetAPI(e.cs), classLister(t, objs...), scheduling.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e.vb = vb
	var regs []toolscache.ResourceEventHandlerRegistration
	add := func(r toolscache.ResourceEventHandlerRegistration, err error) {
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, r)
	}
	if follow {
		add(vb.FollowVolumes(e.pvInf))
		add(vb.FollowClaims(e.pvcInf))
	} else {
		add(e.pvInf.AddEventHandler(vb.VolumeHandler()))
		add(e.pvcInf.AddEventHandler(vb.ClaimHandler()))
	}
	f.Start(ctx.Done())
	t.Cleanup(func() { cancel(); f.Shutdown() })
	synced := make([]toolscache.InformerSynced, 0, len(regs))
	for _, r := range regs {
		synced = append(synced, r.HasSynced)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers did not sync")
	}
	return e
}

// bumpVersions makes the fake clientset give every update a new
// resourceVersion, as an API server does (it keeps the one it is given).
func bumpVersions(cs *fake.Clientset) {
	var rv atomic.Int64
	rv.Store(100)
	cs.PrependReactor("update", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		u := a.(clienttesting.UpdateAction)
		obj := u.GetObject().DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		m.SetResourceVersion(strconv.FormatInt(rv.Add(1), 10))
		return true, obj, cs.Tracker().Update(u.GetResource(), obj, u.GetNamespace())
	})
}

// storeOnly puts obj into the informer's store as the informer does
// before it notifies any handler: the state in which kube-scheduler's
// queue, notified on its own goroutine, may already retry a pod.
func storeOnly(t *testing.T, inf toolscache.SharedIndexInformer, op string, obj runtime.Object) {
	t.Helper()
	var err error
	switch op {
	case "add":
		err = inf.GetIndexer().Add(obj)
	case "update":
		err = inf.GetIndexer().Update(obj)
	case "delete":
		err = inf.GetIndexer().Delete(obj)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestFollowSeesTheStoreFirst: a binder that follows the informers sees
// a volume or claim change as soon as the informer's store holds it, before
// any handler has run, so a scheduler whose queue reacts to the same
// informer never asks it too early. A binder fed by the handlers does not.
func TestFollowSeesTheStoreFirst(t *testing.T) {
	t.Parallel()
	for _, follow := range []bool{true, false} {
		name := "VolumeHandler"
		if follow {
			name = "FollowVolumes"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			claim := pvc("c1", "1Gi", "wffc")
			claim.UID, claim.ResourceVersion = "uid-c1", "1"
			e := newInformerEnv(t, follow, class("wffc", true, volume.NotSupportedProvisioner), claim)
			p, n := pod("p", "c1"), node("node-a", "a")
			if _, reasons, err := e.vb.Find(e.ctx, p, n); err != nil || !scheduling.HasKind(reasons, scheduling.NoMatchingVolume) {
				t.Fatalf("Find() before the volume = %v, %v; want NoMatchingVolume", reasons, err)
			}

			local := pv("local-a", "1Gi", "wffc", v1.LabelHostname, "node-a")
			local.ResourceVersion = "10"
			storeOnly(t, e.pvInf, "add", local)
			got, reasons, err := e.vb.Find(e.ctx, p, n)
			fits := err == nil && len(reasons) == 0 && len(got.StaticBindings) == 1
			if fits != follow {
				t.Errorf("Find() with the volume only in the store = %v, %v; fits %v, want %v", reasons, err, fits, follow)
			}
			if !follow {
				return
			}

			taken := local.DeepCopy()
			taken.ResourceVersion, taken.Spec.ClaimRef = "11", &v1.ObjectReference{Namespace: ns, Name: "other"}
			storeOnly(t, e.pvInf, "update", taken)
			if _, reasons, _ := e.vb.Find(e.ctx, p, n); !scheduling.HasKind(reasons, scheduling.NoMatchingVolume) {
				t.Errorf("Find() after the volume was taken = %v, want NoMatchingVolume", reasons)
			}
			if got, ok := e.vb.Volume("local-a"); !ok || got.ResourceVersion != "11" {
				t.Errorf("Volume() = %v, %v; want version 11", got, ok)
			}
			storeOnly(t, e.pvInf, "delete", taken)
			if _, ok := e.vb.Volume("local-a"); ok {
				t.Error("Volume() still has the volume deleted from the store")
			}

			lost := claim.DeepCopy()
			lost.ResourceVersion, lost.Status.Phase, lost.Spec.VolumeName = "12", v1.ClaimLost, "gone"
			storeOnly(t, e.pvcInf, "update", lost)
			if reasons, err := e.vb.Check(e.ctx, p); err != nil || !scheduling.HasKind(reasons, scheduling.ClaimLost) {
				t.Errorf("Check() after the claim was lost = %v, %v; want ClaimLost", reasons, err)
			}
		})
	}
}

// TestFollowBind: Bind on a following binder is woken by the informer's
// events and sees the claim bound by the volume controller.
func TestFollowBind(t *testing.T) {
	t.Parallel()
	// The fake clientset keeps the resourceVersions it is given.
	claim := pvc("c1", "1Gi", "wffc")
	claim.UID, claim.ResourceVersion = "uid-c1", "1"
	local := pv("local-a", "1Gi", "wffc", v1.LabelHostname, "node-a")
	local.ResourceVersion = "1"
	e := newInformerEnv(t, true, class("wffc", true, volume.NotSupportedProvisioner), claim, local)
	p, n := pod("p", "c1"), node("node-a", "a")
	found, reasons, err := e.vb.Find(e.ctx, p, n)
	if err != nil || len(reasons) > 0 {
		t.Fatalf("Find() = %v, %v", reasons, err)
	}
	if _, err := e.vb.Assume(e.ctx, p, n.Name, found); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.vb.Bind(e.ctx, p, found) }()
	// The volume controller's part: bind the claim once the volume is
	// pre-bound to it.
	waitFor(t, "the pre-bound volume", func() bool {
		got, err := e.cs.CoreV1().PersistentVolumes().Get(e.ctx, "local-a", metav1.GetOptions{})
		return err == nil && got.Spec.ClaimRef != nil
	})
	c, err := e.cs.CoreV1().PersistentVolumeClaims(ns).Get(e.ctx, "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c = boundPVC(c, "local-a")
	if _, err := e.cs.CoreV1().PersistentVolumeClaims(ns).Update(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Bind() = %v", err)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("Bind() did not return after the claim was bound")
	}
}

// TestFollowTwice: a binder follows one informer per kind.
func TestFollowTwice(t *testing.T) {
	t.Parallel()
	e := newInformerEnv(t, true)
	if _, err := e.vb.FollowVolumes(e.pvInf); !errors.Is(err, scheduling.ErrInvalidArgument) {
		t.Errorf("second FollowVolumes() = %v, want ErrInvalidArgument", err)
	}
	if _, err := e.vb.FollowClaims(nil); !errors.Is(err, scheduling.ErrInvalidArgument) {
		t.Errorf("FollowClaims(nil) = %v, want ErrInvalidArgument", err)
	}
}
