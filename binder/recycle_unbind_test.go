package binder

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestRecycleOnceAfterUnbindFails: the scrub succeeds, then every write
// that would make the volume Available fails until the operation gives up.
// The operation's next run must only make the volume Available: its
// storage was scrubbed for this release already.
func TestRecycleOnceAfterUnbindFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimRecycle, hostPath, pvPhase(v1.VolumeReleased)))
	r := &countingRecycler{}
	removed := make(chan func(), 1)
	r.onRecycle = func(n int) {
		if n > 1 {
			return // a second scrub: the assertion below fails
		}
		removed <- e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindVolume, Name: "pv1", Err: apierrors.NewInternalError(errPlugin)})
	}
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{Recycler: r}})
	if err := b.SyncVolume(e.ctx, "pv1"); err != nil {
		t.Fatal(err)
	}
	e.driveOps(b) // every attempt to unbind fails
	if pv := e.volume("pv1"); pv.Status.Phase != v1.VolumeReleased || r.count() != 1 {
		t.Fatalf("after failed unbinds: volume %s, scrubs %d; want Released, 1", pv.Status.Phase, r.count())
	}
	(<-removed)()
	e.fc.Step(time.Minute) // past the operation's backoff
	e.syncVolumeAndWait(b, "pv1")
	if n := r.count(); n != 1 {
		t.Errorf("scrubs = %d, want 1", n)
	}
	if pv := e.volume("pv1"); pv.Status.Phase != v1.VolumeAvailable || pv.Spec.ClaimRef != nil || pv.Annotations[AnnOperation] != "" {
		t.Errorf("volume = %s bound to %v, annotations %v; want Available, unbound, unmarked", pv.Status.Phase, pv.Spec.ClaimRef, pv.Annotations)
	}
}
