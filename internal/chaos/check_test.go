package chaos

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
)

// newCheckRun returns a run on a Server seeded with objs.
func newCheckRun(t *testing.T, objs ...runtime.Object) *run {
	t.Helper()
	srv := bindertest.New()
	if err := srv.Seed(context.Background(), append(classes(), objs...)...); err != nil {
		t.Fatal(err)
	}
	vs := &violations{}
	r := &run{srv: srv, vs: vs, st: newStorage(srv, vs, nil), retained: map[string]bool{}}
	for _, o := range objs {
		if pv, ok := o.(*v1.PersistentVolume); ok {
			r.st.addStatic(handleOf(pv), pv.Spec.PersistentVolumeReclaimPolicy)
		}
	}
	return r
}

// provisioned marks pv as created by the Binder's provisioning.
func provisioned(pv *v1.PersistentVolume) *v1.PersistentVolume {
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, volume.AnnDynamicallyProvisioned, driver)
	return pv
}

func invariants(vs *violations) []string {
	var out []string
	for _, v := range vs.all() {
		out = append(out, v.Invariant)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func bound(pvName, claimName, class string, size int, policy v1.PersistentVolumeReclaimPolicy) (*v1.PersistentVolume, *v1.PersistentVolumeClaim) {
	pv := newVolume(pvName, class, size, policy)
	pvc := newClaim(claimName, class, size)
	bindBoth(pv, pvc)
	return pv, pvc
}

// chose records that the Binder chose the volume pvName for the claim
// claimName (UID "uid-<claimName>").
func chose(pvName, claimName string) func(r *run) {
	return func(r *run) { r.st.chose(pvName, types.UID("uid-"+claimName)) }
}

// TestCheck: each broken settled state is reported under its invariant,
// and a consistent one under none.
func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		state func() []runtime.Object
		setup func(r *run)
		want  []string
	}{
		{"consistent", func() []runtime.Object {
			pv, pvc := bound("pv-1", "c-1", "", 1, v1.PersistentVolumeReclaimDelete)
			gone, _ := bound("pv-2", "gone", "", 1, v1.PersistentVolumeReclaimRetain)
			gone.Status.Phase = v1.VolumeReleased
			return []runtime.Object{pv, pvc, gone, newVolume("pv-3", "", 1, v1.PersistentVolumeReclaimDelete),
				newClaim("c-2", "", 5)}
		}, nil, nil},
		{"claim bound to a volume the Binder chose of another class", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			pv.Spec.StorageClassName = "manual"
			return []runtime.Object{pv, pvc}
		}, chose("pv-1", "a"), []string{BoundMismatch}},
		{"claim bound to a volume the Binder chose, too small", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			pvc.Spec.Resources.Requests[v1.ResourceStorage] = gi(2)
			return []runtime.Object{pv, pvc}
		}, chose("pv-1", "a"), []string{BoundMismatch}},
		{"claim bound to a volume it names, of another class", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			pv.Spec.StorageClassName = "manual"
			return []runtime.Object{pv, pvc}
		}, nil, nil},
		{"claim without class left Pending beside a default class", func() []runtime.Object {
			pvc := newClaim("a", "", 1)
			pvc.Spec.StorageClassName = nil
			return []runtime.Object{pvc}
		}, func(r *run) { r.defaultClass = "manual" }, []string{ClaimUnbound}},
		{"objects never synced at their final version", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			return []runtime.Object{pv, pvc}
		}, func(r *run) {
			in := &instance{}
			for _, pv := range r.srv.SharedVolumes() {
				in.synced.ObjectSynced(pv) // the volume only
			}
			r.final = []*instance{in}
		}, []string{Unsynced}},
		{"objects synced at their final version", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			return []runtime.Object{pv, pvc}
		}, func(r *run) {
			in := &instance{}
			for _, pv := range r.srv.SharedVolumes() {
				in.synced.ObjectSynced(pv)
			}
			for _, pvc := range r.srv.SharedClaims() {
				in.synced.ObjectSynced(pvc)
			}
			r.final = []*instance{{}, in}
		}, nil},
		{"two claims bound to one volume", func() []runtime.Object {
			pv, a := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			_, b := bound("pv-1", "b", "", 1, v1.PersistentVolumeReclaimRetain)
			return []runtime.Object{pv, a, b}
		}, nil, []string{BoundClaimVolume, DoubleBind}},
		{"bound claim of a missing volume", func() []runtime.Object {
			_, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			return []runtime.Object{pvc}
		}, nil, []string{BoundClaimVolume}},
		{"volume bound to a claim bound elsewhere", func() []runtime.Object {
			pv, _ := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			return []runtime.Object{pv, newClaim("a", "", 1)}
		}, nil, []string{ClaimUnbound, HalfBound}},
		{"released Delete volume left", func() []runtime.Object {
			pv, _ := bound("pv-1", "gone", "", 1, v1.PersistentVolumeReclaimDelete)
			pv.Status.Phase = v1.VolumeReleased
			return []runtime.Object{pv}
		}, nil, []string{NotReclaimed}},
		{"Retain volume gone", func() []runtime.Object { return nil },
			func(r *run) { r.retained["pv-9"] = true }, []string{RetainDeleted}},
		{"claim pending beside a matching volume", func() []runtime.Object {
			return []runtime.Object{newVolume("pv-1", "", 5, v1.PersistentVolumeReclaimRetain), newClaim("a", "", 1)}
		}, nil, []string{ClaimUnbound}},
		{"claim of a provisioning class pending", func() []runtime.Object {
			return []runtime.Object{newClaim("a", "fast", 1)}
		}, nil, []string{ClaimUnbound}},
		{"provisioned storage without a volume", func() []runtime.Object { return nil },
			func(r *run) {
				r.st.assets["pvc-x"] = &asset{provisionedBy: &instance{}}
			}, []string{ProvisionedUnsynced}},
		{"provisioned storage of a crashed Binder", func() []runtime.Object { return nil },
			func(r *run) {
				in := &instance{}
				in.dead.Store(true)
				r.st.assets["pvc-x"] = &asset{provisionedBy: in}
			}, nil},
		{"provisioned storage of a retired Binder", func() []runtime.Object { return nil },
			func(r *run) {
				in := &instance{}
				in.retire()
				r.st.assets["pvc-x"] = &asset{provisionedBy: in}
			}, nil},
		{"volume on deleted storage", func() []runtime.Object {
			return []runtime.Object{newVolume("pv-1", "", 5, v1.PersistentVolumeReclaimRetain)}
		}, func(r *run) { r.st.assets["pv-1"].deleted = true }, []string{StorageLost}},
		{"bound claim of a volume that is not Bound", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			pv.Status.Phase = v1.VolumeReleased
			return []runtime.Object{pv, pvc}
		}, nil, []string{HalfBound, PhaseWrong}},
		{"pending claim of a volume bound to it", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			pvc.Status.Phase = v1.ClaimPending
			return []runtime.Object{pv, pvc}
		}, nil, []string{HalfBound, PhaseWrong}},
		{"pending claim naming a volume bound elsewhere", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			other := newClaim("b", "", 1)
			other.Spec.VolumeName = pv.Name
			return []runtime.Object{pv, pvc, other}
		}, nil, nil},
		{"lost claim of a volume bound to it", func() []runtime.Object {
			pv, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			pvc.Status.Phase = v1.ClaimLost
			return []runtime.Object{pv, pvc}
		}, nil, []string{HalfBound, PhaseWrong}},
		{"lost claim of a missing volume", func() []runtime.Object {
			_, pvc := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimRetain)
			pvc.Status.Phase = v1.ClaimLost
			return []runtime.Object{pvc}
		}, nil, nil},
		{"claim in an unknown phase", func() []runtime.Object {
			pvc := newClaim("a", "", 1)
			pvc.Status.Phase = "Resizing"
			return []runtime.Object{pvc}
		}, nil, []string{PhaseWrong}},
		{"unbound volume not Available", func() []runtime.Object {
			pv := newVolume("pv-1", "", 1, v1.PersistentVolumeReclaimRetain)
			pv.Status.Phase = v1.VolumePending
			return []runtime.Object{pv}
		}, nil, []string{PhaseWrong}},
		{"pre-bound volume of a missing claim", func() []runtime.Object {
			pv := newVolume("pv-1", "", 1, v1.PersistentVolumeReclaimRetain)
			pv.Spec.ClaimRef = claimRef(newClaim("later", "", 1), false)
			return []runtime.Object{pv}
		}, nil, nil},
		{"provisioned volume unbound", func() []runtime.Object {
			return []runtime.Object{provisioned(newVolume("pv-1", "fast", 1, v1.PersistentVolumeReclaimDelete))}
		}, nil, []string{ProvisionedUnsynced}},
		{"provisioned volume only pre-bound", func() []runtime.Object {
			pv := provisioned(newVolume("pv-1", "fast", 1, v1.PersistentVolumeReclaimDelete))
			pv.Spec.ClaimRef = claimRef(newClaim("later", "fast", 1), false)
			return []runtime.Object{pv}
		}, nil, []string{ProvisionedUnsynced}},
		{"provisioned volume of a claim not bound to it", func() []runtime.Object {
			pv, _ := bound("pv-1", "a", "fast", 1, v1.PersistentVolumeReclaimDelete)
			return []runtime.Object{provisioned(pv), newClaim("a", "fast", 1)}
		}, nil, []string{ClaimUnbound, ProvisionedUnsynced}},
		{"provisioned volume of a gone claim", func() []runtime.Object {
			pv, _ := bound("pv-1", "gone", "fast", 1, v1.PersistentVolumeReclaimDelete)
			pv.Status.Phase = v1.VolumeReleased
			return []runtime.Object{provisioned(pv)}
		}, nil, []string{ProvisionedUnsynced}},
		{"released Retain volume not Released", func() []runtime.Object {
			pv, _ := bound("pv-1", "gone", "", 1, v1.PersistentVolumeReclaimRetain)
			return []runtime.Object{pv} // still Bound
		}, nil, []string{NotReclaimed}},
		{"released Recycle volume left", func() []runtime.Object {
			pv, _ := bound("pv-1", "gone", "", 1, v1.PersistentVolumeReclaimRecycle)
			pv.Status.Phase = v1.VolumeReleased
			return []runtime.Object{pv}
		}, nil, []string{NotReclaimed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newCheckRun(t, tc.state()...)
			if tc.setup != nil {
				tc.setup(r)
			}
			r.check(r.vs)
			if diff := cmp.Diff(tc.want, invariants(r.vs)); diff != "" {
				t.Errorf("invariants (-want +got):\n%s\n%v", diff, r.vs.all())
			}
		})
	}
}

// TestStorageChecks: the storage reports reclaims that must not happen
// when they happen.
func TestStorageChecks(t *testing.T) {
	live, claim := bound("pv-1", "a", "", 1, v1.PersistentVolumeReclaimDelete)
	retain, _ := bound("pv-2", "gone", "", 1, v1.PersistentVolumeReclaimRetain)
	recycled, _ := bound("pv-3", "gone3", "", 1, v1.PersistentVolumeReclaimRecycle)
	deleted, _ := bound("pv-5", "gone5", "", 1, v1.PersistentVolumeReclaimDelete)
	tests := []struct {
		name string
		do   func(r *run)
		want []string
	}{
		{"delete under a live claim", func(r *run) { r.st.remove(&instance{}, live) }, []string{ReclaimWhileClaimed, StorageLost}},
		{"delete of a Retain volume", func(r *run) { r.st.remove(&instance{}, retain) }, []string{RetainDeleted}},
		{"delete of a Retain volume's storage after a user deleted the object", func(r *run) {
			if err := r.srv.DeleteVolume(context.Background(), retain.Name); err != nil {
				t.Fatal(err)
			}
			r.st.remove(&instance{}, retain)
		}, []string{RetainDeleted}},
		{"cleanup of Retain storage whose volume's create failed", func(r *run) {
			req := &binder.ProvisionRequest{VolumeName: "pvc-uid-x", ReclaimPolicy: v1.PersistentVolumeReclaimRetain}
			pv := r.st.provision(&instance{}, req)
			pv.Name = req.VolumeName // the Binder's object, never stored: no UID
			r.st.remove(&instance{}, pv)
		}, nil},
		{"delete of a volume whose claim is bound elsewhere", func(r *run) {
			elsewhere := live.DeepCopy()
			elsewhere.Name, elsewhere.UID = "pv-4", ""
			r.st.remove(&instance{}, elsewhere) // pv-4 does not exist: a cleanup
			if err := r.srv.Seed(context.Background(), elsewhere); err != nil {
				t.Fatal(err)
			}
			r.st.remove(&instance{}, elsewhere) // claim a is bound to pv-1
		}, nil},
		{"recycle under a live claim", func(r *run) {
			r.st.recycle(&instance{}, live)
		}, []string{ReclaimWhileClaimed}},
		{"delete while a recycle of it runs", func(r *run) {
			a := r.st.begin("recycle", recycled)
			r.st.remove(&instance{}, recycled)
			r.st.end(a)
		}, []string{ReclaimedTwice}},
		{"delete twice by one Binder", func(r *run) {
			in := &instance{}
			r.st.remove(in, deleted)
			r.st.remove(in, deleted)
		}, []string{DeletedTwice}},
		{"delete again by another Binder while the first leads", func(r *run) {
			r.st.remove(&instance{}, deleted)
			r.st.remove(&instance{}, deleted)
		}, []string{DeletedTwice}},
		{"delete again after a crash", func(r *run) {
			in := &instance{}
			r.st.remove(in, deleted)
			in.dead.Store(true)
			r.st.remove(&instance{}, deleted)
		}, nil},
		{"delete again after a crash, although the mark says deleted", func(r *run) {
			in := &instance{}
			r.st.remove(in, deleted)
			in.dead.Store(true)
			pv, err := r.srv.GetVolume(context.Background(), deleted.Name)
			if err != nil {
				t.Fatal(err)
			}
			metav1.SetMetaDataAnnotation(&pv.ObjectMeta, binder.AnnOperation, `{"op":"delete","owner":"x","start":"2024-01-01T00:00:00Z","done":true}`)
			if _, err := r.srv.UpdateVolume(context.Background(), pv); err != nil {
				t.Fatal(err)
			}
			r.st.remove(&instance{}, deleted)
		}, []string{DeletedTwice}},
		{"Binder deletes the volume object of a live claim", func(r *run) {
			in := &instance{srv: r.srv, st: r.st, vs: r.vs}
			if err := in.DeleteVolume(context.Background(), "pv-1"); err != nil {
				t.Fatal(err)
			}
		}, []string{ReclaimWhileClaimed}},
		{"recycle twice", func(r *run) {
			in := &instance{}
			r.st.recycle(in, recycled)
			r.st.recycle(in, recycled)
		}, []string{ReclaimedTwice}},
		{"recycle again after a crash", func(r *run) {
			in := &instance{}
			r.st.recycle(in, recycled)
			in.dead.Store(true)
			r.st.recycle(&instance{}, recycled)
		}, nil},
		{"recycle again after a handover", func(r *run) {
			in := &instance{}
			r.st.recycle(in, recycled)
			in.retire()
			r.st.recycle(&instance{}, recycled)
		}, nil},
		{"Binder deletes a Retain volume object", func(r *run) {
			in := &instance{srv: r.srv, st: r.st, vs: r.vs}
			if err := in.DeleteVolume(context.Background(), "pv-2"); err != nil {
				t.Fatal(err)
			}
		}, []string{RetainDeleted}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newCheckRun(t, live, claim, retain, recycled, deleted)
			tc.do(r)
			if diff := cmp.Diff(tc.want, invariants(r.vs)); diff != "" {
				t.Errorf("invariants (-want +got):\n%s\n%v", diff, r.vs.all())
			}
		})
	}
}

// TestChosenBindings: a Binder's write of a volume's claimRef (with
// bound-by-controller) to a claim that names no volume is a binding it
// chose; the same write for a claim that names the volume is not.
func TestChosenBindings(t *testing.T) {
	named := newClaim("b", "", 1)
	named.Spec.VolumeName = "pv-2"
	r := newCheckRun(t, newVolume("pv-1", "", 1, v1.PersistentVolumeReclaimRetain), newVolume("pv-2", "", 1, v1.PersistentVolumeReclaimRetain),
		newClaim("a", "", 1), named)
	in := &instance{srv: r.srv, st: r.st, vs: r.vs}
	bind := func(pvName, claimName string) *v1.PersistentVolume {
		pv, err := r.srv.GetVolume(context.Background(), pvName)
		if err != nil {
			t.Fatal(err)
		}
		pvc, err := r.srv.GetClaim(context.Background(), ns, claimName)
		if err != nil {
			t.Fatal(err)
		}
		pv.Spec.ClaimRef = claimRef(pvc, true)
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, volume.AnnBoundByController, "yes")
		out, err := in.UpdateVolume(context.Background(), pv)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if pv := bind("pv-1", "a"); !r.st.wasChosen(pv, "uid-a") {
		t.Error("volume pv-1 bound to claim a, which named no volume: not recorded as chosen")
	}
	if pv := bind("pv-2", "b"); r.st.wasChosen(pv, "uid-b") {
		t.Error("volume pv-2 bound to claim b, which names it: recorded as chosen")
	}
}
