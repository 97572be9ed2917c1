package binder

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
)

// syncCase is one step of Kubernetes' state machine: seed objects, run
// one SyncClaim or SyncVolume, compare the server's objects, the events
// and the number of writes.
type syncCase struct {
	name string
	objs []runtime.Object
	// sync is "claim/<name>" or "volume/<name>".
	sync string
	// want lists state lines (see env.state) that must hold afterwards.
	want       []string
	wantEvents []string
	wantWrites int64
	// wantErr checks the sync's error; nil means no error.
	wantErr func(error) bool
	// invalid seeds objs with SeedInvalid: they are objects kube-apiserver
	// rejects, which a Binder may still get (from a fake clientset).
	invalid bool
}

func runSyncCases(t *testing.T, cases []syncCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seed := (*bindertest.Server).Seed
			if tc.invalid {
				seed = (*bindertest.Server).SeedInvalid
			}
			e := newEnvSeeded(t, seed, tc.objs...)
			kind, name, _ := strings.Cut(tc.sync, "/")
			var err error
			if kind == "claim" {
				err = e.b.SyncClaim(e.ctx, ns+"/"+name)
			} else {
				err = e.b.SyncVolume(e.ctx, name)
			}
			switch {
			case tc.wantErr == nil && err != nil:
				t.Errorf("sync %s: unexpected error %v", tc.sync, err)
			case tc.wantErr != nil && (err == nil || !tc.wantErr(err)):
				t.Errorf("sync %s: error %v, want a matching error", tc.sync, err)
			}
			state := e.state()
			for _, w := range tc.want {
				if !slices.Contains(state, w) {
					t.Errorf("state lacks %q; state:\n%s", w, strings.Join(state, "\n"))
				}
			}
			if got := reasons(e.events()); !cmp.Equal(got, append([]string{}, tc.wantEvents...)) {
				t.Errorf("event reasons = %v, want %v", got, tc.wantEvents)
			}
			if got := e.writes(); got != tc.wantWrites {
				t.Errorf("writes = %d, want %d (%v)", got, tc.wantWrites, e.srv.Stats().Writes)
			}
			if c := e.srv.Stats().Conflicts; c != 0 {
				t.Errorf("conflicts = %d, want 0", c)
			}
		})
	}
}

func objs(o ...runtime.Object) []runtime.Object { return o }

func TestSyncUnboundClaim(t *testing.T) {
	t.Parallel()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}
	runSyncCases(t, []syncCase{{
		name:       "1-1 binds the only matching volume with 4 writes",
		objs:       objs(newPV("pv1", "10Gi"), newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 4,
	}, {
		name: "1-2 best fit: the smallest sufficient volume",
		objs: objs(newPV("pv-1g", "1Gi"), newPV("pv-10g", "10Gi"), newPV("pv-5g", "5Gi"), newPV("pv-3g", "3Gi"),
			newPVC("claim1", "2Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv-3g=Bound:claim1", "claim1=Bound:pv-3g", "pv-5g=Available:", "pv-1g=Available:"},
		wantWrites: 4,
	}, {
		name:       "1-3 equal capacity: the name that sorts first",
		objs:       objs(newPV("pv-b", "5Gi"), newPV("pv-a", "5Gi"), newPV("pv-c", "5Gi"), newPVC("claim1", "5Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv-a=Bound:claim1", "pv-b=Available:", "pv-c=Available:"},
		wantWrites: 4,
	}, {
		name:       "1-4 no volume and no class: FailedBinding, stale status cleared",
		objs:       objs(newPVC("claim1", "1Gi", pvcStaleStatus)),
		sync:       "claim/claim1",
		want:       []string{"claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
		wantWrites: 1,
	}, {
		name:       "1-5 no volume, already Pending: event only, no write",
		objs:       objs(newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
	}, {
		name:       "1-6 class mismatch",
		objs:       objs(newPV("pv1", "10Gi", pvClass("gold")), newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
	}, {
		name:       "1-7 access mode mismatch",
		objs:       objs(newPV("pv1", "10Gi", pvModes(v1.ReadOnlyMany)), newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
	}, {
		name: "1-8 access modes: the volume with the fewest modes wins over a smaller one",
		objs: objs(newPV("pv-rwx", "1Gi", pvModes(v1.ReadWriteOnce, v1.ReadWriteMany)), newPV("pv-rwo", "5Gi"),
			newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv-rwo=Bound:claim1", "pv-rwx=Available:"},
		wantWrites: 4,
	}, {
		name:       "1-9 volume mode mismatch",
		objs:       objs(newPV("pv1", "10Gi", pvBlock), newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
	}, {
		name:       "1-10 block claim binds a block volume",
		objs:       objs(newPV("pv-fs", "1Gi"), newPV("pv-block", "10Gi", pvBlock), newPVC("claim1", "1Gi", pvcBlock)),
		sync:       "claim/claim1",
		want:       []string{"pv-block=Bound:claim1", "pv-fs=Available:"},
		wantWrites: 4,
	}, {
		name: "1-11 selector: only labelled volumes",
		objs: objs(newPV("pv-small", "1Gi"), newPV("pv-fast", "10Gi", pvLabels("tier", "fast")),
			newPVC("claim1", "1Gi", pvcSelector(sel))),
		sync:       "claim/claim1",
		want:       []string{"pv-fast=Bound:claim1", "pv-small=Available:"},
		wantWrites: 4,
	}, {
		name:       "1-12 selector mismatch",
		objs:       objs(newPV("pv1", "10Gi", pvLabels("tier", "slow")), newPVC("claim1", "1Gi", pvcSelector(sel))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
	}, {
		name: "1-13 a volume pre-bound to the claim wins over a better fit",
		objs: objs(newPV("pv-small", "1Gi"), newPV("pv-pre", "100Gi", boundTo("claim1", "")),
			newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv-pre=Bound:claim1", "pv-small=Available:"},
		wantWrites: 4,
	}, {
		name:       "1-14 a volume pre-bound to another claim is not offered",
		objs:       objs(newPV("pv1", "10Gi", boundTo("other", "")), newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:other(prebound)", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
	}, {
		name:       "1-15 a volume that is not Available is not offered",
		objs:       objs(newPV("pv1", "10Gi", pvPhase(v1.VolumePending)), newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Pending:", "claim1=Pending:"},
		wantEvents: []string{ReasonFailedBinding},
	}, {
		name: "1-16 WaitForFirstConsumer: no binding, event, Pending",
		objs: objs(newClass("wffc", storagev1.VolumeBindingWaitForFirstConsumer, false),
			newPV("pv1", "10Gi", pvClass("wffc")), newPVC("claim1", "1Gi", pvcClass(ptr.To("wffc")))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonWaitForFirstConsumer},
	}, {
		name: "1-17 WaitForFirstConsumer: a pre-bound volume is bound",
		objs: objs(newClass("wffc", storagev1.VolumeBindingWaitForFirstConsumer, false),
			newPV("pv1", "10Gi", pvClass("wffc"), boundTo("claim1", "")), newPVC("claim1", "1Gi", pvcClass(ptr.To("wffc")))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 4,
	}, {
		name: "1-18 WaitForFirstConsumer with selected node: left to provisioning",
		objs: objs(newClass("wffc", storagev1.VolumeBindingWaitForFirstConsumer, false),
			newPV("pv1", "10Gi", pvClass("wffc")),
			newPVC("claim1", "1Gi", pvcClass(ptr.To("wffc")), pvcAnn(volume.AnnSelectedNode))),
		sync: "claim/claim1",
		want: []string{"pv1=Available:", "claim1=Pending:"},
	}, {
		name: "1-19 Immediate class, no volume: left to provisioning, no write",
		objs: objs(newClass("gold", storagev1.VolumeBindingImmediate, false),
			newPVC("claim1", "1Gi", pvcClass(ptr.To("gold")), pvcStaleStatus)),
		sync: "claim/claim1",
		want: []string{"claim1=Pending:"},
	}, {
		name: "1-20 Immediate class binds a volume of its class",
		objs: objs(newClass("gold", storagev1.VolumeBindingImmediate, false), newPV("pv-none", "1Gi"),
			newPV("pv-gold", "10Gi", pvClass("gold")), newPVC("claim1", "1Gi", pvcClass(ptr.To("gold")))),
		sync:       "claim/claim1",
		want:       []string{"pv-gold=Bound:claim1", "pv-none=Available:"},
		wantWrites: 4,
	}})
}

func TestSyncRequestedClaim(t *testing.T) {
	t.Parallel()
	runSyncCases(t, []syncCase{{
		name:       "2-1 requested volume missing: Pending, stale status cleared",
		objs:       objs(newPVC("claim1", "1Gi", pvcVolume("pv1"), pvcStaleStatus)),
		sync:       "claim/claim1",
		want:       []string{"claim1=Pending:pv1"},
		wantWrites: 1,
	}, {
		name:       "2-2 requested volume unbound: bound",
		objs:       objs(newPV("pv1", "10Gi"), newPV("pv0", "1Gi"), newPVC("claim1", "1Gi", pvcVolume("pv1"))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Bound:pv1", "pv0=Available:"},
		wantWrites: 4,
	}, {
		name:       "2-3 requested volume too small: VolumeMismatch",
		objs:       objs(newPV("pv1", "1Gi"), newPVC("claim1", "5Gi", pvcVolume("pv1"))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:pv1"},
		wantEvents: []string{ReasonVolumeMismatch},
	}, {
		name:       "2-4 requested volume of another class: VolumeMismatch",
		objs:       objs(newPV("pv1", "10Gi", pvClass("gold")), newPVC("claim1", "5Gi", pvcVolume("pv1"))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Available:", "claim1=Pending:pv1"},
		wantEvents: []string{ReasonVolumeMismatch},
	}, {
		name:       "2-5 requested volume pre-bound to the claim: bound",
		objs:       objs(newPV("pv1", "10Gi", boundTo("claim1", "")), newPVC("claim1", "1Gi", pvcVolume("pv1"))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 4,
	}, {
		name:       "2-6 requested volume bound to another claim by the user: FailedBinding, Pending",
		objs:       objs(newPV("pv1", "10Gi", boundTo("other", "uid-other"), pvPhase(v1.VolumeBound)), newPVC("claim1", "1Gi", pvcVolume("pv1"))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:other", "claim1=Pending:pv1"},
		wantEvents: []string{ReasonFailedBinding},
	}, {
		name: "2-7 bound-by-controller claim whose volume is claimed by another: error",
		objs: objs(newPV("pv1", "10Gi", boundTo("other", "uid-other"), pvPhase(v1.VolumeBound)),
			newPVC("claim1", "1Gi", pvcVolume("pv1"), pvcAnn(volume.AnnBoundByController))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:other", "claim1=Pending:pv1"},
		wantEvents: []string{ReasonFailedBinding},
		wantErr:    func(err error) bool { return strings.Contains(err.Error(), "already claimed by") },
	}, {
		name: "2-8 volume bound by the controller, claim not written yet: claim writes only",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)),
			newPVC("claim1", "1Gi")),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 2,
	}, {
		name: "2-9 claim written, status not yet: status write only",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)),
			newPVC("claim1", "1Gi", pvcVolume("pv1"), pvcAnn(volume.AnnBoundByController), pvcAnn(volume.AnnBindCompleted))),
		sync:       "claim/claim1",
		want:       []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 1,
	}})
}

func TestSyncBoundClaim(t *testing.T) {
	t.Parallel()
	boundPV := func(opts ...pvOpt) *v1.PersistentVolume {
		return newPV("pv1", "10Gi", append([]pvOpt{boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)}, opts...)...)
	}
	runSyncCases(t, []syncCase{{
		name: "3-1 consistent bound pair: no write",
		objs: objs(boundPV(), newPVC("claim1", "1Gi", pvcBound("pv1"))),
		sync: "claim/claim1",
		want: []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
	}, {
		name: "3-2 consistent bound pair seen by the volume: no write",
		objs: objs(boundPV(), newPVC("claim1", "1Gi", pvcBound("pv1"))),
		sync: "volume/pv1",
		want: []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
	}, {
		name: "3-3 bound claim lost its volume name: Lost",
		objs: objs(newPVC("claim1", "1Gi", pvcBound("pv1"), pvcVolume(""))),
		sync: "claim/claim1", want: []string{"claim1=Lost:"},
		wantEvents: []string{ReasonClaimLost}, wantWrites: 1,
	}, {
		name: "3-4 bound claim whose volume is gone: Lost",
		objs: objs(newPVC("claim1", "1Gi", pvcBound("pv1"))),
		sync: "claim/claim1", want: []string{"claim1=Lost:pv1"},
		wantEvents: []string{ReasonClaimLost}, wantWrites: 1,
	}, {
		name: "3-5 already Lost: no write, no event",
		objs: objs(newPVC("claim1", "1Gi", pvcBound("pv1"), pvcPhase(v1.ClaimLost))),
		sync: "claim/claim1", want: []string{"claim1=Lost:pv1"},
	}, {
		name: "3-6 bound claim whose volume came unbound: bound again",
		objs: objs(newPV("pv1", "10Gi"), newPVC("claim1", "1Gi", pvcBound("pv1"))),
		sync: "claim/claim1", want: []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 2,
	}, {
		name: "3-7 bound claim whose volume is bound to another claim: Lost (misbound)",
		objs: objs(newPV("pv1", "10Gi", boundTo("other", "uid-other"), pvPhase(v1.VolumeBound)), newPVC("claim1", "1Gi", pvcBound("pv1"))),
		sync: "claim/claim1", want: []string{"pv1=Bound:other", "claim1=Lost:pv1"},
		wantEvents: []string{ReasonClaimMisbound}, wantWrites: 1,
	}, {
		name: "3-8 volume status not written yet: volume status only",
		objs: objs(boundPV(pvPhase(v1.VolumeAvailable)), newPVC("claim1", "1Gi", pvcBound("pv1"))),
		sync: "claim/claim1", want: []string{"pv1=Bound:claim1", "claim1=Bound:pv1"},
		wantWrites: 1,
	}})
}

func TestSyncVolume(t *testing.T) {
	t.Parallel()
	runSyncCases(t, []syncCase{{
		name: "4-1 new unbound volume: Available",
		objs: objs(newPV("pv1", "10Gi", pvPhase(v1.VolumePending))),
		sync: "volume/pv1", want: []string{"pv1=Available:"}, wantWrites: 1,
	}, {
		name: "4-2 Available unbound volume: no write",
		objs: objs(newPV("pv1", "10Gi")),
		sync: "volume/pv1", want: []string{"pv1=Available:"},
	}, {
		name: "4-3 pre-bound volume: Available",
		objs: objs(newPV("pv1", "10Gi", pvPhase(v1.VolumePending), boundTo("claim1", ""))),
		sync: "volume/pv1", want: []string{"pv1=Available:claim1(prebound)"}, wantWrites: 1,
	}, {
		name: "4-4 bound volume whose claim is gone: Released",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound))),
		sync: "volume/pv1", want: []string{"pv1=Released:claim1"}, wantWrites: 1,
	}, {
		name: "4-5 bound volume whose claim was re-created: Released",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-old"), pvPhase(v1.VolumeBound)), newPVC("claim1", "1Gi")),
		sync: "volume/pv1", want: []string{"pv1=Released:claim1", "claim1=Pending:"}, wantWrites: 1,
	}, {
		name: "4-6 already Released: no write",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeReleased))),
		sync: "volume/pv1", want: []string{"pv1=Released:claim1"},
	}, {
		name: "4-7 claim not bound yet: left to the claim sync",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)), newPVC("claim1", "1Gi")),
		sync: "volume/pv1", want: []string{"pv1=Bound:claim1", "claim1=Pending:"},
	}, {
		name: "4-8 claim bound to it, phase not Bound: Bound",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController)), newPVC("claim1", "1Gi", pvcBound("pv1"))),
		sync: "volume/pv1", want: []string{"pv1=Bound:claim1"}, wantWrites: 1,
	}, {
		name: "4-9 controller's binding to a claim bound elsewhere: rolled back",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)),
			newPVC("claim1", "1Gi", pvcBound("pv2"))),
		sync: "volume/pv1", want: []string{"pv1=Available:"}, wantWrites: 2,
	}, {
		name: "4-10 user's pre-binding to a claim bound elsewhere: UID cleared",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound)),
			newPVC("claim1", "1Gi", pvcBound("pv2"))),
		sync: "volume/pv1", want: []string{"pv1=Available:claim1(prebound)"}, wantWrites: 2,
	}, {
		name: "4-11 provisioned Delete volume of a claim bound elsewhere: Released",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnDynamicallyProvisioned), pvPolicy(v1.PersistentVolumeReclaimDelete), pvPhase(v1.VolumeBound)),
			newPVC("claim1", "1Gi", pvcBound("pv2"))),
		sync: "volume/pv1", want: []string{"pv1=Released:claim1"}, wantWrites: 1,
	}, {
		name: "4-12 released volume with an unknown reclaim policy: Failed",
		objs: objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvPolicy("Shred"), pvPhase(v1.VolumeBound))), invalid: true,
		sync: "volume/pv1", want: []string{"pv1=Failed:claim1"},
		wantEvents: []string{ReasonVolumeUnknownReclaimPolicy}, wantWrites: 2,
	}, {
		name: "4-13 volume mode mismatch with its claim: events on both",
		objs: objs(newPV("pv1", "10Gi", pvBlock, boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound)), newPVC("claim1", "1Gi")),
		sync: "volume/pv1", want: []string{"pv1=Bound:claim1", "claim1=Pending:"},
		wantEvents: []string{ReasonVolumeMismatch, ReasonVolumeMismatch},
	}, {
		name: "4-14 Failed volume without claim: Available",
		objs: objs(newPV("pv1", "10Gi", pvPhase(v1.VolumeFailed))),
		sync: "volume/pv1", want: []string{"pv1=Available:"}, wantWrites: 1,
	}})
}

func TestBadObjects(t *testing.T) {
	t.Parallel()
	invalid := func(err error) bool {
		var ie *InvalidObjectError
		return errors.Is(err, ErrInvalidObject) && errors.As(err, &ie) && ie.Problem != ""
	}
	badSel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}
	cases := []syncCase{{
		name: "volume without capacity",
		objs: objs(newPV("pv1", "1Gi", pvNoCapacity, pvPhase(v1.VolumePending))),
		sync: "volume/pv1", want: []string{"pv1=Pending:"},
		wantEvents: []string{ReasonInvalidVolume}, wantErr: invalid,
	}, {
		name: "volume with negative capacity",
		objs: objs(newPV("pv1", "-1Gi", pvPhase(v1.VolumePending))),
		sync: "volume/pv1", want: []string{"pv1=Pending:"},
		wantEvents: []string{ReasonInvalidVolume}, wantErr: invalid,
	}, {
		name: "volume with an unknown access mode",
		objs: objs(newPV("pv1", "1Gi", pvModes("ReadSometimes"), pvPhase(v1.VolumePending))),
		sync: "volume/pv1", want: []string{"pv1=Pending:"},
		wantEvents: []string{ReasonInvalidVolume}, wantErr: invalid,
	}, {
		name: "claim with a negative request",
		objs: objs(newPV("pv1", "10Gi"), newPVC("claim1", "-1Gi")),
		sync: "claim/claim1", want: []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonInvalidClaim}, wantErr: invalid,
	}, {
		name: "claim with an unknown access mode",
		objs: objs(newPV("pv1", "10Gi"), newPVC("claim1", "1Gi", pvcModes("ReadSometimes"))),
		sync: "claim/claim1", want: []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonInvalidClaim}, wantErr: invalid,
	}, {
		name: "claim with a selector that does not parse",
		objs: objs(newPV("pv1", "10Gi"), newPVC("claim1", "1Gi", pvcSelector(badSel))),
		sync: "claim/claim1", want: []string{"pv1=Available:", "claim1=Pending:"},
		wantEvents: []string{ReasonInvalidClaim}, wantErr: invalid,
	}, {
		name: "a volume without capacity is never offered",
		objs: objs(newPV("pv1", "1Gi", pvNoCapacity), newPV("pv2", "10Gi"), newPVC("claim1", "1")),
		sync: "claim/claim1", want: []string{"pv1=Available:", "pv2=Bound:claim1"},
		wantWrites: 4,
	}, {
		name: "a claim requesting a volume without capacity: VolumeMismatch",
		objs: objs(newPV("pv1", "1Gi", pvNoCapacity), newPVC("claim1", "1Gi", pvcVolume("pv1"))),
		sync: "claim/claim1", want: []string{"pv1=Available:", "claim1=Pending:pv1"},
		wantEvents: []string{ReasonVolumeMismatch},
	}}
	for i := range cases {
		cases[i].invalid = true
	}
	runSyncCases(t, cases)
}

// TestBindAnnotations checks the annotations and status a binding writes,
// for a volume the binder chose and for a volume the user pre-bound.
func TestBindAnnotations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		pv                  *v1.PersistentVolume
		pvc                 *v1.PersistentVolumeClaim
		wantPVAnn, wantCAnn []string
	}{{
		name:      "chosen by the binder",
		pv:        newPV("pv1", "10Gi"),
		pvc:       newPVC("claim1", "1Gi"),
		wantPVAnn: []string{volume.AnnBoundByController},
		wantCAnn:  []string{volume.AnnBindCompleted, volume.AnnBoundByController},
	}, {
		name:     "volume pre-bound by the user",
		pv:       newPV("pv1", "10Gi", boundTo("claim1", "")),
		pvc:      newPVC("claim1", "1Gi"),
		wantCAnn: []string{volume.AnnBindCompleted, volume.AnnBoundByController},
	}, {
		name:      "claim pre-bound by the user",
		pv:        newPV("pv1", "10Gi"),
		pvc:       newPVC("claim1", "1Gi", pvcVolume("pv1")),
		wantPVAnn: []string{volume.AnnBoundByController},
		wantCAnn:  []string{volume.AnnBindCompleted},
	}, {
		name:     "both pre-bound by the user",
		pv:       newPV("pv1", "10Gi", boundTo("claim1", "")),
		pvc:      newPVC("claim1", "1Gi", pvcVolume("pv1")),
		wantCAnn: []string{volume.AnnBindCompleted},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.pv, tc.pvc)
			if err := e.b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
				t.Fatalf("SyncClaim: %v", err)
			}
			pv, pvc := e.volume("pv1"), e.claim("claim1")
			keys := func(m map[string]string) []string {
				out := []string{}
				for k := range m {
					out = append(out, k)
				}
				slices.Sort(out)
				return out
			}
			if diff := cmp.Diff(append([]string{}, tc.wantPVAnn...), keys(pv.Annotations)); diff != "" {
				t.Errorf("volume annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(append([]string{}, tc.wantCAnn...), keys(pvc.Annotations)); diff != "" {
				t.Errorf("claim annotations (-want +got):\n%s", diff)
			}
			ref := pv.Spec.ClaimRef
			if ref == nil || ref.UID != pvc.UID || ref.Name != "claim1" || ref.Namespace != ns || ref.Kind != "PersistentVolumeClaim" {
				t.Errorf("claimRef = %+v, want the claim with its UID", ref)
			}
			if got := pvc.Status.Capacity[v1.ResourceStorage]; got.String() != "10Gi" {
				t.Errorf("claim capacity = %s, want 10Gi", got.String())
			}
			if !slices.Equal(pvc.Status.AccessModes, pv.Spec.AccessModes) {
				t.Errorf("claim access modes = %v, want %v", pvc.Status.AccessModes, pv.Spec.AccessModes)
			}
			if pv.Status.Phase != v1.VolumeBound || pvc.Status.Phase != v1.ClaimBound {
				t.Errorf("phases = %s/%s, want Bound/Bound", pv.Status.Phase, pvc.Status.Phase)
			}
		})
	}
}

// TestReleaseChecksAPI: a claim missing from the cache is read from the
// API before its volume is released.
func TestReleaseChecksAPI(t *testing.T) {
	t.Parallel()
	pvc := newPVC("claim1", "1Gi", pvcBound("pv1"))
	e := newEnv(t, newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)), pvc)
	cached, _ := e.b.store.claim(ns + "/claim1")
	e.b.store.deleteClaim(cached) // as if the cache had not seen the claim
	if err := e.b.SyncVolume(e.ctx, "pv1"); err != nil {
		t.Fatalf("SyncVolume: %v", err)
	}
	if got := e.volume("pv1").Status.Phase; got != v1.VolumeBound {
		t.Errorf("phase = %s, want Bound", got)
	}
	st := e.srv.Stats()
	if st.TotalWrites() != 0 || st.Reads[bindertest.KindClaim] != 1 {
		t.Errorf("writes = %d, claim reads = %d, want 0 and 1", st.TotalWrites(), st.Reads[bindertest.KindClaim])
	}
	if _, err := e.srv.GetClaim(e.ctx, ns, "claim1"); apierrors.IsNotFound(err) {
		t.Fatalf("claim gone")
	}
}
