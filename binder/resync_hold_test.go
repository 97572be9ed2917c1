package binder

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/volbind/volbind/binder/bindertest"
)

// A claim that only the resync has queued holds back a volume it could
// take, as Config.AvailableDelay promises for every claim waiting in the
// claim queue: the volume is bound with four writes, never marked
// Available first.
func TestAvailableDelayHeldForResyncedClaim(t *testing.T) {
	t.Parallel()
	// The hold outlasts a resync period, so that the resync queues the
	// claim while the volume is still held.
	const (
		period = time.Minute
		delay  = 2 * period
	)
	e := newEnv(t,
		newClass("std", storagev1.VolumeBindingImmediate, true),
		newPVC("c", "1Gi"),
		// New, and of a class c does not ask for: c finds nothing.
		newPV("pv", "1Gi", pvPhase(v1.VolumePending), pvClass("gold")),
	)
	reg := prometheus.NewRegistry()
	b := e.newBinder(Config{AvailableDelay: delay, ResyncPeriod: period, VolumeWorkers: 2, Registerer: reg})
	e.run(b)
	e.settle(b)
	if got := e.claim("c").Spec.VolumeName; got != "" {
		t.Fatalf("claim c bound to %s before the volume fits it", got)
	}
	// The volume now fits c, but nothing queues c but its resync.
	pv := e.volume("pv")
	pv.Spec.StorageClassName = ""
	if _, err := e.srv.UpdateVolume(e.ctx, pv); err != nil {
		t.Fatal(err)
	}
	e.settle(b)

	// Keep the one claim worker busy: a claim whose default class
	// assignment waits an hour on the API.
	e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindClaim, Name: "blocker", Latency: time.Hour})
	blocker := newPVC("blocker", "100Gi", pvcClass(nil))
	if _, err := e.srv.CreateClaim(e.ctx, blocker); err != nil {
		t.Fatal(err)
	}
	poll(t, "the blocker's write", func() bool { return e.srv.Stats().Faults == 1 })

	// A whole resync period: the resync queues c (the worker cannot take
	// it yet) and syncs pv, still held.
	volumeSyncs := func() float64 { return counterSum(t, reg, "volbind_binder_syncs_total", "kind", "volume") }
	statusWrites := volumeStatusWrites(e)
	syncs := volumeSyncs()
	e.fc.Step(period + time.Second)
	poll(t, "the resync", func() bool {
		return !b.work.run.Load().resyncDue(e.fc.Now()) && volumeSyncs() > syncs
	})
	// Past the hold: pv's sync must keep holding it for c.
	syncs = volumeSyncs()
	e.fc.Step(delay)
	poll(t, "the sync of pv after its hold", func() bool { return volumeSyncs() > syncs })
	if got := e.volume("pv").Status.Phase; got != v1.VolumePending {
		t.Fatalf("pv is %s while claim c waits in the claim queue, want Pending", got)
	}

	e.fc.Step(time.Hour) // the blocker's write returns
	e.settle(b)
	if got := e.claim("c").Spec.VolumeName; got != "pv" {
		t.Fatalf("claim c bound to %q, want pv", got)
	}
	if got := volumeStatusWrites(e) - statusWrites; got != 1 {
		t.Errorf("%d volume status writes, want 1 (Bound, no Available first)", got)
	}
}
