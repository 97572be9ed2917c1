package binder

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/volbind/volbind/binder/bindertest"
)

// deleterThen is a Deleter that runs then after each successful Delete.
type deleterThen struct {
	*plugin
	then func()
}

func (d deleterThen) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	err := d.plugin.Delete(ctx, pv)
	if err == nil {
		d.then()
	}
	return err
}

// TestDeleteOnceAfterFailures: the Deleter deletes a released volume's
// storage, and then the next call about that volume fails once: the read
// of the volume, the write that removes its finalizer (refused, or carried
// out and answered with a timeout), or the deletion of the object. Later
// syncs, retries and a restarted Binder finish the job, and the Deleter
// never runs again for that volume. (Only a Binder that stops before any
// write records the deletion, refused here, calls it again after a
// restart: nothing tells it the storage is gone.)
func TestDeleteOnceAfterFailures(t *testing.T) {
	t.Parallel()
	failed := apierrors.NewInternalError(errPlugin)
	refused := bindertest.Fault{Verb: bindertest.VerbUpdate, Err: failed}
	lost := bindertest.Fault{Verb: bindertest.VerbUpdate, Timeout: true, Applied: true}
	read := bindertest.Fault{Verb: bindertest.VerbGet, Err: failed}
	deleteRefused := bindertest.Fault{Verb: bindertest.VerbDelete, Err: failed}
	tests := []struct {
		name    string
		faults  []bindertest.Fault
		restart bool
	}{
		{name: "finalizer write refused", faults: []bindertest.Fault{refused}},
		{name: "finalizer write refused, then the volume read fails", faults: []bindertest.Fault{refused, read}},
		{name: "finalizer write carried out, answer lost", faults: []bindertest.Fault{lost}},
		{name: "finalizer write carried out, answer lost, then the volume read fails", faults: []bindertest.Fault{lost, read}},
		{name: "finalizer write carried out, answer lost, restart", faults: []bindertest.Fault{lost}, restart: true},
		{name: "object delete refused", faults: []bindertest.Fault{deleteRefused}},
		{name: "object delete refused, restart", faults: []bindertest.Fault{deleteRefused}, restart: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy("disk.example.com"),
				pvFinalizers(FinalizerPVController)))
			p := newPlugin()
			armed := 0
			d := deleterThen{plugin: p, then: func() {
				for _, f := range tc.faults {
					f.Kind, f.Name = bindertest.KindVolume, "pv1"
					e.srv.ArmFaults(f)
					armed++
				}
			}}
			cfg := Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"disk.example.com": d}}}
			b := e.newBinder(cfg)
			for i := range 6 {
				if i == 1 && tc.restart {
					b = e.newBinder(cfg) // another identity: it knows only what the volume says
				}
				if err := b.SyncVolume(e.ctx, "pv1"); err != nil && !apierrors.IsNotFound(err) {
					t.Logf("sync %d: %v", i, err)
				}
				e.driveOps(b)
				e.fc.Step(time.Minute) // past any operation backoff
			}
			if armed == 0 || e.srv.ArmedFaults() != 0 {
				t.Fatalf("faults armed %d, left unfired %d: the test must fail the calls after the Delete", armed, e.srv.ArmedFaults())
			}
			if got := p.callList(); len(got) != 1 {
				t.Errorf("deleter calls = %v, want exactly one", got)
			}
			if e.exists("pv1") {
				pv := e.volume("pv1")
				t.Errorf("volume still exists (%s, finalizers %v, annotations %v), want it deleted", pv.Status.Phase, pv.Finalizers, pv.Annotations)
			}
		})
	}
}
