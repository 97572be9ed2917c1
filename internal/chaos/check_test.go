package chaos

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"

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
	r := &run{srv: srv, vs: vs, st: newStorage(srv, vs), retained: map[string]bool{}}
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
	tests := []struct {
		name string
		do   func(r *run)
		want []string
	}{
		{"delete under a live claim", func(r *run) { r.st.remove(live) }, []string{ReclaimWhileClaimed, StorageLost}},
		{"delete of a Retain volume", func(r *run) { r.st.remove(retain) }, []string{RetainDeleted}},
		{"delete of a volume whose claim is bound elsewhere", func(r *run) {
			elsewhere := live.DeepCopy()
			elsewhere.Name = "pv-4"
			r.st.remove(elsewhere) // pv-4 does not exist: a cleanup
			if err := r.srv.Seed(context.Background(), elsewhere); err != nil {
				t.Fatal(err)
			}
			r.st.remove(elsewhere) // claim a is bound to pv-1
		}, nil},
		{"recycle under a live claim", func(r *run) {
			r.st.recycle(&instance{}, live)
		}, []string{ReclaimWhileClaimed}},
		{"delete while a recycle of it runs", func(r *run) {
			a := r.st.begin("recycle", recycled)
			r.st.remove(recycled)
			r.st.end(a)
		}, []string{ReclaimedTwice}},
		{"delete after a delete", func(r *run) {
			gone, _ := bound("pv-5", "gone5", "", 1, v1.PersistentVolumeReclaimDelete)
			r.st.remove(gone)
			r.st.remove(gone)
		}, nil},
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
			r := newCheckRun(t, live, claim, retain, recycled)
			tc.do(r)
			if diff := cmp.Diff(tc.want, invariants(r.vs)); diff != "" {
				t.Errorf("invariants (-want +got):\n%s\n%v", diff, r.vs.all())
			}
		})
	}
}
