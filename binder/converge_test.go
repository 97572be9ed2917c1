package binder

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
)

// poll waits (in real time, with a deadline) for cond.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// A claim that found no volume because another claim's sync had reserved
// the only one searches again as soon as that binding fails, not at its
// next resync (turned off here).
func TestFailedBindingWakesClaimThatFoundNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "1Gi"), newPVC("first", "1Gi"))
	e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindVolume, Name: "pv1",
		Latency: 10 * time.Second, Conflict: true, Times: 1})
	b := e.newBinder(Config{ClaimWorkers: 2, ResyncPeriod: -1})
	e.run(b)
	reserved := func() int { return b.reservations.len() }
	poll(t, "first claim's write blocked", func() bool { return reserved() == 1 })

	if _, err := e.srv.CreateClaim(e.ctx, newPVC("second", "1Gi")); err != nil {
		t.Fatal(err)
	}
	poll(t, "second claim found nothing", func() bool {
		select {
		case ev := <-e.rec.Events:
			return strings.Contains(ev, ReasonFailedBinding)
		default:
			return false
		}
	})
	// The first claim goes away while its write hangs; the write fails.
	if err := e.srv.DeleteClaim(e.ctx, ns, "first"); err != nil {
		t.Fatal(err)
	}
	e.fc.Step(10 * time.Second)
	e.settle(b)
	if got := e.claim("second"); got.Status.Phase != v1.ClaimBound || got.Spec.VolumeName != "pv1" {
		t.Errorf("second claim: %s to %q, want Bound to pv1", got.Status.Phase, got.Spec.VolumeName)
	}
}

// A volume left claimed by a binding its claim did not finish (the claim
// then took a better volume) is rolled back at once, and a claim that found
// nothing meanwhile gets it, with no resync.
func TestStaleClaimRefRolledBackAndReused(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		// A controller began binding "first" to pv-rwx and stopped.
		newPV("pv-rwx", "1Gi", pvModes(v1.ReadWriteOnce, v1.ReadWriteMany), boundTo("first", "uid-first"), pvAnn(volume.AnnBoundByController)),
		newPV("pv-rwo", "1Gi"),
		newPVC("first", "1Gi"),
		newPVC("second", "1Gi"),
	)
	b := e.newBinder(Config{ResyncPeriod: -1})
	e.run(b)
	e.settle(b)
	checkAllBound(t, e, 2)
	if pv := e.volume("pv-rwx"); pv.Spec.ClaimRef == nil || pv.Status.Phase != v1.VolumeBound {
		t.Errorf("pv-rwx is %s, claimRef %v; want it Bound to a claim", pv.Status.Phase, pv.Spec.ClaimRef)
	}
}
