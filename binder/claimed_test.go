package binder

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestVolumeNamingClaimIsItsFirst: claim1 (no class; "gold" is the default
// class) is bound to pv1 (class ""), and the write of pv1's claimRef is
// carried out but answered with a timeout; the volume's event arrives at
// once or late (a slow watch). On the claim's retry, another claim worker
// tries to reserve pv1. The volume that points at claim1 is claim1's: no
// other worker may reserve it, and the claim completes that binding before
// anything else is decided for it; it never gets the default class (which
// would make the binding complete across classes).
func TestVolumeNamingClaimIsItsFirst(t *testing.T) {
	t.Parallel()
	for _, slow := range []bool{false, true} {
		name := "events in time"
		if slow {
			name = "slow volume watch"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, newClass("gold", storagev1.VolumeBindingImmediate, true), newPV("pv1", "5Gi"),
				newPVC("claim1", "1Gi", pvcClass(nil)))
			b := e.newBinder(Config{ClaimWorkers: 4})
			resume := func() {}
			if slow {
				resume = e.srv.StallWatches(bindertest.KindVolume)
			}
			e.srv.ArmFaults(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindVolume, Name: "pv1", Timeout: true, Applied: true})
			if err := b.SyncClaim(e.ctx, ns+"/claim1"); err == nil {
				t.Fatal("first sync succeeded, want the timeout of the volume's claimRef write")
			}
			// Another claim worker's search chose pv1 and tries to
			// reserve it, as claim1 syncs again.
			other := b.reservations.tryReserve("pv1")
			err := b.SyncClaim(e.ctx, ns+"/claim1")
			t.Logf("retry while another worker tried to reserve pv1 (reserved: %t): %v", other, err)
			if other {
				b.releaseReservation("pv1")
			}
			resume()
			for range 3 {
				_ = b.SyncVolume(e.ctx, "pv1")
				_ = b.SyncClaim(e.ctx, ns+"/claim1")
			}
			pvc, pv := e.claim("claim1"), e.volume("pv1")
			if pvc.Spec.StorageClassName != nil {
				t.Errorf("claim1 got class %q while pv1 pointed at it, want none", *pvc.Spec.StorageClassName)
			}
			if pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName != "pv1" || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
				t.Errorf("claim1 is %s with volume %q, pv1 bound to %v; want them bound to each other", pvc.Status.Phase, pvc.Spec.VolumeName, pv.Spec.ClaimRef)
			}
		})
	}
}

// TestControllerBindingMustStillMatch: a binding the Binder began (the
// volume's claimRef with bound-by-controller) completes only if the volume
// still satisfies the claim; otherwise it is rolled back. A volume the user
// pre-bound keeps Kubernetes' rule: its claim takes it whatever its class
// and labels, if it is large enough.
func TestControllerBindingMustStillMatch(t *testing.T) {
	t.Parallel()
	gold := pvcClass(ptr.To("gold"))
	sel := pvcSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}})
	began := []pvOpt{boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)}
	runSyncCases(t, []syncCase{{
		name:       "class changed since: rolled back",
		objs:       objs(newPV("pv1", "10Gi", began...), newPVC("claim1", "1Gi", gold)),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:"},
		wantWrites: 2,
	}, {
		name:       "selector does not match: rolled back",
		objs:       objs(newPV("pv1", "10Gi", began...), newPVC("claim1", "1Gi", sel)),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
		wantWrites: 2,
	}, {
		name:       "too small since: rolled back",
		objs:       objs(newPV("pv1", "1Gi", began...), newPVC("claim1", "2Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
		wantWrites: 2,
	}, {
		name:       "still matching: completed",
		objs:       objs(newPV("pv1", "10Gi", append([]pvOpt{pvLabels("tier", "fast")}, began...)...), newPVC("claim1", "1Gi", sel)),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 2,
	}, {
		// Kubernetes' FindMatchingVolume skips a pre-bound volume that does
		// not fit, and nothing unbinds it: the claim searches on.
		name:       "pre-bound by the user with UID, too small since: left as it is",
		objs:       objs(newPV("pv1", "1Gi", boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound)), newPVC("claim1", "2Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
		wantWrites: 0,
	}, {
		// In-tree provisioning does not copy the claim's
		// VolumeAttributesClass: the volume provisioned for it never binds
		// to it, and no other claim gets it (Kubernetes alike).
		// The PV controller looks for a pre-bound volume only among
		// the volumes whose access modes include the claim's.
		name:       "pre-bound by the user with UID, access modes do not include the claim's: left as it is",
		objs:       objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound), pvModes(v1.ReadOnlyMany)), newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
		wantWrites: 0,
	}, {
		name: "provisioned for the claim, other VolumeAttributesClass: left as it is",
		objs: objs(newPV("pv1", "10Gi", append([]pvOpt{pvAnn(volume.AnnDynamicallyProvisioned)}, began...)...),
			newPVC("claim1", "1Gi", func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = ptr.To("fast") }),
			newPVC("claim2", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Pending:", "claim2=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
		wantWrites: 0,
	}, {
		name:       "pre-bound by the user, other class: bound as Kubernetes does",
		objs:       objs(newPV("pv1", "10Gi", boundTo("claim1", "")), newPVC("claim1", "1Gi", gold)),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 4,
	}})
}
