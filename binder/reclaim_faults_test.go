package binder

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/operations"
)

// TestRecycleOnceAfterReadError: the scrub succeeds, but another writer
// changed the volume meanwhile, so that making it Available conflicts and
// the Binder must read the volume and its gone claim again; the first of
// those reads (of the volume, or of the claim) fails. The volume must
// still end Available after one scrub: a failed read is not "nothing to
// do".
func TestRecycleOnceAfterReadError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault bindertest.Fault
	}{
		{name: "volume read", fault: bindertest.Fault{Verb: bindertest.VerbGet, Kind: bindertest.KindVolume, Name: "pv1"}},
		{name: "claim read", fault: bindertest.Fault{Verb: bindertest.VerbGet, Kind: bindertest.KindClaim, Name: "gone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimRecycle, hostPath))
			r := &countingRecycler{}
			removed := make(chan func(), 10)
			r.onRecycle = func(int) {
				pv := e.volume("pv1").DeepCopy()
				pv.Labels = map[string]string{"changed": "during-the-scrub"}
				if _, err := e.srv.UpdateVolume(e.ctx, pv); err != nil {
					t.Errorf("UpdateVolume: %v", err)
				}
				f := tc.fault
				f.Err, f.Times = apierrors.NewInternalError(errPlugin), 1
				removed <- e.srv.InjectFault(f)
			}
			b := e.newBinder(Config{Reclaim: &ReclaimConfig{Recycler: r}})
			for range 5 {
				if err := b.SyncVolume(e.ctx, "pv1"); err != nil {
					t.Fatal(err)
				}
				e.driveOps(b)
				e.fc.Step(time.Minute) // past any operation backoff
			}
			select {
			case remove := <-removed:
				remove()
			default: // no scrub: the count below fails the test
			}
			if n := e.srv.Stats().Faults; n != 1 {
				t.Errorf("read faults fired = %d, want 1: the test must make the Binder read again", n)
			}
			if n := r.count(); n != 1 {
				t.Errorf("scrubs = %d, want 1", n)
			}
			if pv := e.volume("pv1"); pv.Status.Phase != v1.VolumeAvailable || pv.Spec.ClaimRef != nil {
				t.Errorf("volume = %s bound to %v, want Available and unbound", pv.Status.Phase, pv.Spec.ClaimRef)
			}
		})
	}
}

// TestRecycleReadErrorBeforeScrub: when the read before the scrub fails,
// the operation fails (and backs off) without scrubbing; a later sync
// scrubs once.
func TestRecycleReadErrorBeforeScrub(t *testing.T) {
	t.Parallel()
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimRecycle, hostPath, pvPhase(v1.VolumeReleased)))
	r := &countingRecycler{}
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{Recycler: r}})
	remove := e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Kind: bindertest.KindVolume, Name: "pv1", Err: apierrors.NewInternalError(errPlugin)})
	e.syncVolumeAndWait(b, "pv1")
	if n := r.count(); n != 0 {
		t.Fatalf("scrubs after a failed read = %d, want 0", n)
	}
	if err := b.ops.Run(e.ctx, opNameRecycle("pv1"), func(context.Context) error { return nil }); !operations.IsBackoff(err) {
		t.Errorf("operation after a failed read: Run = %v, want a backoff", err)
	}
	remove()
	e.fc.Step(time.Minute)
	e.syncVolumeAndWait(b, "pv1")
	if n := r.count(); n != 1 || e.volume("pv1").Status.Phase != v1.VolumeAvailable {
		t.Errorf("scrubs = %d, phase = %s; want 1 and Available", n, e.volume("pv1").Status.Phase)
	}
}

func opNameRecycle(pv string) string { return "recycle-" + pv + "[uid-" + pv + "]" }

// TestReclaimOnceAcrossInstances: two Binders overlap (a leader-election
// handover) and both sync one released volume. Only one calls the Deleter
// (or the recycler): the other finds the first one's fresh mark.
func TestReclaimOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, policy := range []v1.PersistentVolumeReclaimPolicy{v1.PersistentVolumeReclaimDelete, v1.PersistentVolumeReclaimRecycle} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, releasedPV("pv1", policy, hostPath))
			p := newPlugin()
			p.gate = make(chan struct{})
			cfg := Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": p}, Recycler: p}}
			first, second := e.newBinder(cfg), e.newBinder(cfg)
			e.syncVolumes(first, "pv1", 1)
			e.waitStarted(p, 1)
			e.syncVolumes(second, "pv1", 3)
			// Until the second's operation has given up, or has called
			// the plugin too.
			if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
				idle, cancel := context.WithTimeout(ctx, time.Millisecond)
				defer cancel()
				return second.ops.Wait(idle) == nil || len(p.callList()) > 1, nil
			}); err != nil {
				t.Fatal(err)
			}
			close(p.gate)
			e.waitOps(first)
			for _, b := range []*Binder{first, second} {
				e.syncVolumeAndWait(b, "pv1")
			}
			if got := p.callList(); len(got) != 1 {
				t.Errorf("plugin calls = %v, want exactly one", got)
			}
		})
	}
}

// TestConflictRereads: while the watches are down the cache holds a stale
// claim; its status write conflicts once, and the next attempt uses the
// version read after the conflict instead of conflicting again.
func TestConflictRereads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound), pvAnn("pv.kubernetes.io/bind-completed")),
		newPVC("claim1", "1Gi", pvcVolume("pv1"), pvcAnn("pv.kubernetes.io/bind-completed")))
	// A Binder that heard of both objects once; then its watches stall
	// and the claim changes on the server.
	b, err := New(e.srv, Config{Clock: e.fc})
	if err != nil {
		t.Fatal(err)
	}
	b.VolumeHandler().OnAdd(e.volume("pv1"), true)
	claim := e.claim("claim1")
	b.ClaimHandler().OnAdd(claim, true)
	claim = claim.DeepCopy()
	claim.Labels = map[string]string{"changed": "yes"}
	if _, err := e.srv.UpdateClaim(e.ctx, claim); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetStats()
	var errs []error
	for range 3 {
		errs = append(errs, b.SyncClaim(e.ctx, ns+"/claim1"))
	}
	conflicts := 0
	for _, err := range errs {
		if apierrors.IsConflict(err) {
			conflicts++
		}
	}
	if conflicts != 1 || !slices.Contains(errs, nil) {
		t.Errorf("sync errors = %v, want one conflict and then success", errs)
	}
	if got := e.claim("claim1").Status.Phase; got != v1.ClaimBound {
		t.Errorf("claim phase = %s, want Bound", got)
	}
}
