package binder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestReclaimRetain: a released Retain volume is marked Released once and
// never written, deleted or scrubbed again, however often it is synced,
// even with every reclaim plugin configured.
func TestReclaimRetain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimRetain, hostPath, provisionedBy("kubernetes.io/host-path")))
	p := newPlugin()
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{
		Deleters: map[string]Deleter{"kubernetes.io/host-path": p},
		Recycler: e.recyclerFor(),
	}})
	e.srv.ResetStats()
	// Every resync is one such sync; so is the sync after any event.
	for range 50 {
		e.syncVolumeAndWait(b, "pv1")
		e.fc.Step(time.Minute)
	}
	pv := e.volume("pv1")
	if pv.Status.Phase != v1.VolumeReleased || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != "uid-gone" {
		t.Errorf("volume = %s with claimRef %v, want Released and still bound to the deleted claim", pv.Status.Phase, pv.Spec.ClaimRef)
	}
	st := e.srv.Stats()
	if got := st.TotalWrites(); got != 1 {
		t.Errorf("writes = %d (%v), want 1 (the Released phase)", got, st.Writes)
	}
	if n := st.Writes[bindertest.KindPod][bindertest.VerbCreate]; n != 0 {
		t.Errorf("%d recycler pods created, want none", n)
	}
	if calls := p.callList(); len(calls) != 0 {
		t.Errorf("deleter calls = %v, want none", calls)
	}
}

// TestReclaimDelete covers the Delete policy's outcomes for one sync.
func TestReclaimDelete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pv   *v1.PersistentVolume
		// deleters are registered under these names, all the same plugin.
		deleters   []string
		pluginErr  error
		disabled   bool
		wantCalls  int
		wantGone   bool
		wantPhase  v1.PersistentVolumePhase
		wantEvent  string
		wantText   string
		wantWrites int64
	}{{
		name:     "deleter of the provisioner",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy("disk.example.com"), pvFinalizers(FinalizerPVController)),
		deleters: []string{"disk.example.com"}, wantCalls: 1, wantGone: true, wantWrites: 4, // Released, operation mark, finalizer removed, delete
	}, {
		name:     "provisioned volume without the finalizer (upgrade): added, then removed once deleted",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy("disk.example.com")),
		deleters: []string{"disk.example.com"}, wantCalls: 1, wantGone: true, wantWrites: 5,
	}, {
		name:     "deleter of the volume source",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath),
		deleters: []string{"kubernetes.io/host-path"}, wantCalls: 1, wantGone: true, wantWrites: 3,
	}, {
		name:     "the provisioner's deleter wins over the source's",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath, provisionedBy("example.com/external")),
		deleters: []string{"kubernetes.io/host-path"}, wantPhase: v1.VolumeReleased, wantWrites: 1,
	}, {
		name:     "external provisioner: left to it",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy("example.com/external")),
		deleters: []string{"disk.example.com"}, wantPhase: v1.VolumeReleased, wantWrites: 1,
	}, {
		name:      "no deleter for the source: Failed",
		pv:        releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath),
		wantPhase: v1.VolumeFailed, wantEvent: ReasonVolumeFailedDelete,
		wantText:   `error getting deleter volume plugin for volume "pv1": no volume plugin matched`,
		wantWrites: 2,
	}, {
		name:      "unregistered kubernetes.io provisioner: Failed",
		pv:        releasedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy("kubernetes.io/rbd"), pvFinalizers(FinalizerPVController)),
		wantPhase: v1.VolumeFailed, wantEvent: ReasonVolumeFailedDelete,
		wantText: "no volume plugin matched name: kubernetes.io/rbd", wantWrites: 2,
	}, {
		name:     "plugin failure: Failed with its message",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath),
		deleters: []string{"kubernetes.io/host-path"}, pluginErr: errPlugin, wantCalls: 1,
		wantPhase: v1.VolumeFailed, wantEvent: ReasonVolumeFailedDelete, wantText: errPlugin.Error(), wantWrites: 3,
	}, {
		name:     "storage in use: Normal event, not Failed",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath),
		deleters: []string{"kubernetes.io/host-path"}, pluginErr: fmt.Errorf("disk attached: %w", ErrDeletedVolumeInUse), wantCalls: 1,
		wantPhase: v1.VolumeReleased, wantEvent: ReasonVolumeDelete, wantText: "disk attached", wantWrites: 2,
	}, {
		name:     "migrated to CSI: left alone",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath, func(pv *v1.PersistentVolume) { metav1SetAnn(pv, volume.AnnMigratedTo, "hostpath.csi.k8s.io") }),
		deleters: []string{"kubernetes.io/host-path"}, wantPhase: v1.VolumeReleased, wantWrites: 1,
	}, {
		name:     "reclaim disabled: stays Released",
		pv:       releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath),
		deleters: []string{"kubernetes.io/host-path"}, disabled: true, wantPhase: v1.VolumeReleased, wantWrites: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.pv)
			p := newPlugin()
			if tc.pluginErr != nil {
				p.fail, p.err = 1, tc.pluginErr
			}
			cfg := Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{}}}
			for _, n := range tc.deleters {
				cfg.Reclaim.Deleters[n] = p
			}
			if tc.disabled {
				cfg.Reclaim = nil
			}
			b := e.newBinder(cfg)
			e.srv.ResetStats()
			e.syncVolumeAndWait(b, "pv1")
			if got := len(p.callList()); got != tc.wantCalls {
				t.Errorf("deleter calls = %d, want %d", got, tc.wantCalls)
			}
			if tc.wantGone {
				if e.exists("pv1") {
					t.Errorf("volume still exists, want it deleted")
				}
			} else if got := e.volume("pv1"); got.Status.Phase != tc.wantPhase {
				t.Errorf("phase = %s (%q), want %s", got.Status.Phase, got.Status.Message, tc.wantPhase)
			} else if tc.wantPhase == v1.VolumeFailed && got.Status.Message != tc.wantText {
				t.Errorf("message = %q, want %q", got.Status.Message, tc.wantText)
			}
			events := e.events()
			if tc.wantEvent != "" && !eventWith(events, tc.wantEvent, tc.wantText) {
				t.Errorf("events = %v, want %s with %q", events, tc.wantEvent, tc.wantText)
			}
			if tc.wantEvent == "" && len(events) != 0 {
				t.Errorf("events = %v, want none", events)
			}
			if got := e.writes(); got != tc.wantWrites {
				t.Errorf("writes = %d (%v), want %d", got, e.srv.Stats().Writes, tc.wantWrites)
			}
		})
	}
}

// TestDeleteBackoff: a failing deleter makes the volume Failed once, is
// not called again before its backoff has passed, and the volume is
// deleted when it finally succeeds.
func TestDeleteBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath))
	p := newPlugin()
	p.fail = 2
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": p}}})
	e.srv.ResetStats()

	e.syncVolumeAndWait(b, "pv1")
	if got := e.volume("pv1").Status.Phase; got != v1.VolumeFailed {
		t.Fatalf("phase after the first failure = %s, want Failed", got)
	}
	for range 10 {
		e.syncVolumeAndWait(b, "pv1") // backing off: no call
	}
	if got := len(p.callList()); got != 1 {
		t.Fatalf("deleter calls during the backoff = %d, want 1", got)
	}
	e.stepPastBackoff(500 * time.Millisecond)
	e.syncVolumeAndWait(b, "pv1")
	if got := len(p.callList()); got != 2 {
		t.Fatalf("deleter calls after 500ms = %d, want 2", got)
	}
	e.fc.Step(500 * time.Millisecond) // the second backoff is 1s
	e.syncVolumeAndWait(b, "pv1")
	if got := len(p.callList()); got != 2 {
		t.Fatalf("deleter calls within the doubled backoff = %d, want 2", got)
	}
	e.stepPastBackoff(500 * time.Millisecond)
	e.syncVolumeAndWait(b, "pv1")
	if got := len(p.callList()); got != 3 || e.exists("pv1") {
		t.Fatalf("deleter calls = %d, volume exists = %v; want 3 calls and the volume deleted", got, e.exists("pv1"))
	}
	if got := reasons(e.events()); !slices.Equal(got, []string{ReasonVolumeFailedDelete}) {
		t.Errorf("events = %v, want one VolumeFailedDelete (the phase changes once)", got)
	}
	// Released, marked (once: the retries find their own mark), Failed,
	// delete.
	if got := e.writes(); got != 4 {
		t.Errorf("writes = %d (%v), want 4", got, e.srv.Stats().Writes)
	}
}

// TestDeleteNeverTwice: syncs that fire while a deletion runs start no
// second one; after it, the volume is gone and nothing runs again.
func TestDeleteNeverTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath))
	p := newPlugin()
	p.gate = make(chan struct{})
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": p}}})
	e.syncVolumes(b, "pv1", 50)
	e.waitStarted(p, 1)
	e.syncVolumes(b, "pv1", 50)
	close(p.gate)
	e.waitOps(b)
	for range 10 {
		e.syncVolumeAndWait(b, "pv1")
	}
	if got := p.callList(); len(got) != 1 || e.exists("pv1") {
		t.Errorf("deleter calls = %v, volume exists = %v; want one call and the volume deleted", got, e.exists("pv1"))
	}
}

// TestDeleteRestartBeforeVolumeDeleted: the deleter succeeded but the
// volume object could not be deleted (the controller crashed there); the
// volume's operation mark says the storage is deleted, so a restarted
// Binder deletes the volume without calling the deleter again.
func TestDeleteRestartBeforeVolumeDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath))
	p := newPlugin()
	// The same replica restarts: it resumes the operation it marked.
	cfg := Config{Identity: "replica-0", Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": p}}}
	remove := e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbDelete, Kind: bindertest.KindVolume, Err: errors.New("connection reset")})
	first := e.newBinder(cfg)
	e.syncVolumeAndWait(first, "pv1")
	remove()
	if !e.exists("pv1") || len(p.callList()) != 1 {
		t.Fatalf("after the failed delete: volume exists = %v, calls = %v; want it kept after one call", e.exists("pv1"), p.callList())
	}
	pv := e.volume("pv1")
	if got := pv.Status.Phase; got != v1.VolumeReleased {
		t.Errorf("phase = %s, want Released (the deleter did not fail)", got)
	}
	if !storageDeletedMark(pv) {
		t.Errorf("operation mark = %q, want one that says the storage is deleted", pv.Annotations[AnnOperation])
	}

	second := e.newBinder(cfg)
	e.syncVolumeAndWait(second, "pv1")
	if e.exists("pv1") || len(p.callList()) != 1 {
		t.Errorf("after the restart: volume exists = %v, calls = %v; want it deleted without a second call", e.exists("pv1"), p.callList())
	}
}

// TestDeleteRechecksVolume: the operation reads the volume again and does
// nothing when it is no longer the released volume it was started for.
func TestDeleteRechecksVolume(t *testing.T) {
	t.Parallel()
	claim := newPVC("claim1", "1Gi", pvcBound("pv1"))
	tests := []struct {
		name string
		objs []runtime.Object
	}{
		{"re-bound to an existing claim", objs(claim, newPV("pv1", "10Gi", hostPath, boundTo("claim1", "uid-claim1"), pvPolicy(v1.PersistentVolumeReclaimDelete), pvPhase(v1.VolumeBound)))},
		{"unbound", objs(newPV("pv1", "10Gi", hostPath, pvPolicy(v1.PersistentVolumeReclaimDelete)))},
		{"policy changed to Retain", objs(releasedPV("pv1", v1.PersistentVolumeReclaimRetain, hostPath))},
		{"re-created with another UID", objs(releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath, func(pv *v1.PersistentVolume) { pv.UID = "other" }))},
		{"deleted", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.objs...)
			p := newPlugin()
			b := e.newBinder(Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": p}}, Registerer: prometheus.NewRegistry()})
			e.srv.ResetStats()
			if err := b.deleteVolumeOperation(e.ctx, "pv1", "uid-pv1"); err != nil {
				t.Errorf("deleteVolumeOperation = %v, want nil", err)
			}
			if err := b.recycleVolumeOperation(e.ctx, "pv1", "uid-pv1"); err != nil {
				t.Errorf("recycleVolumeOperation = %v, want nil", err)
			}
			if calls := p.callList(); len(calls) != 0 || e.writes() != 0 {
				t.Errorf("deleter calls = %v, writes = %d; want none", calls, e.writes())
			}
		})
	}
}

// TestRunWaitsForOperations: Run returns only after the running operation
// has seen its context cancelled and returned, and a cancelled deletion
// does not mark the volume Failed.
func TestRunWaitsForOperations(t *testing.T) {
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath))
	p := newPlugin()
	p.gate = make(chan struct{}) // never opened
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": p}}})
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	e.waitStarted(p, 1)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if b.ops.IsPending(opNameDelete("pv1")) {
		t.Errorf("the deletion is still running after Run returned")
	}
	if got := e.volume("pv1").Status.Phase; got != v1.VolumeReleased {
		t.Errorf("phase = %s, want Released", got)
	}
	// No operation starts once Run has returned.
	if err := b.SyncVolume(e.ctx, "pv1"); err != nil || len(p.callList()) != 1 {
		t.Errorf("SyncVolume after Run = %v with %d calls, want nil and no new call", err, len(p.callList()))
	}
}

func opNameDelete(pv string) string { return "delete-" + pv + "[uid-" + pv + "]" }

// TestRecycle covers the Recycle policy with a real recycler on the
// in-memory API: success (the volume is Available again, once, however
// often it is synced meanwhile), a failed pod, an unsupported volume and no
// recycler.
func TestRecycle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		pv          *v1.PersistentVolume
		noRecycler  bool
		podPhase    v1.PodPhase
		wantPhase   v1.PersistentVolumePhase
		wantEvent   string
		wantMessage string
	}{
		{name: "success", pv: releasedPV("pv1", v1.PersistentVolumeReclaimRecycle, hostPath), podPhase: v1.PodSucceeded,
			wantPhase: v1.VolumeAvailable, wantEvent: ReasonVolumeRecycled},
		{name: "pod failed", pv: releasedPV("pv1", v1.PersistentVolumeReclaimRecycle, hostPath), podPhase: v1.PodFailed,
			wantPhase: v1.VolumeFailed, wantEvent: ReasonVolumeFailedRecycle, wantMessage: "Recycle failed: recycler pod default/recycler-for-pv1 for volume pv1 failed: DiskFull"},
		{name: "unsupported source", pv: releasedPV("pv1", v1.PersistentVolumeReclaimRecycle),
			wantPhase: v1.VolumeFailed, wantEvent: ReasonVolumeFailedRecycle, wantMessage: msgNoRecycler},
		{name: "no recycler", pv: releasedPV("pv1", v1.PersistentVolumeReclaimRecycle, hostPath), noRecycler: true,
			wantPhase: v1.VolumeFailed, wantEvent: ReasonVolumeFailedRecycle, wantMessage: msgNoRecycler},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.pv)
			cfg := Config{Reclaim: &ReclaimConfig{}}
			if !tc.noRecycler {
				cfg.Reclaim.Recycler = e.recyclerFor()
			}
			b := e.newBinder(cfg)
			e.srv.ResetStats()
			if err := b.SyncVolume(e.ctx, "pv1"); err != nil {
				t.Fatal(err)
			}
			if tc.podPhase != "" {
				e.setPodPhase("pv1", v1.PodRunning, "")
				e.syncVolumes(b, "pv1", 20)
				e.setPodPhase("pv1", tc.podPhase, "DiskFull")
			}
			e.waitOps(b)
			pv := e.volume("pv1")
			if pv.Status.Phase != tc.wantPhase || pv.Status.Message != tc.wantMessage {
				t.Errorf("volume = %s %q, want %s %q", pv.Status.Phase, pv.Status.Message, tc.wantPhase, tc.wantMessage)
			}
			if tc.wantPhase == v1.VolumeAvailable && (pv.Spec.ClaimRef != nil || pv.Annotations[volume.AnnBoundByController] != "") {
				t.Errorf("recycled volume keeps claimRef %v and annotations %v", pv.Spec.ClaimRef, pv.Annotations)
			}
			if got := reasons(e.events()); !slices.Equal(got, []string{tc.wantEvent}) {
				t.Errorf("events = %v, want [%s]", got, tc.wantEvent)
			}
			st := e.srv.Stats()
			if tc.podPhase != "" {
				if c, d := st.Writes[bindertest.KindPod][bindertest.VerbCreate], st.Writes[bindertest.KindPod][bindertest.VerbDelete]; c != 1 || d != 1 {
					t.Errorf("recycler pods created %d, deleted %d; want 1 and 1", c, d)
				}
			}
		})
	}
}

// TestRecycleAdoptsPodAfterRestart: a recycler pod left running by a
// controller that stopped is adopted by the restarted Binder, not
// duplicated, and its success makes the volume Available.
func TestRecycleAdoptsPodAfterRestart(t *testing.T) {
	t.Parallel()
	pv := releasedPV("pv1", v1.PersistentVolumeReclaimRecycle, hostPath, pvPhase(v1.VolumeReleased))
	e := newEnv(t, pv)
	r := e.recyclerFor()
	pod, err := r.PodFor(pv)
	if err != nil {
		t.Fatal(err)
	}
	created, err := e.srv.CreatePod(e.ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{Recycler: r}})
	e.srv.ResetStats()
	var added atomic.Int32
	t.Cleanup(e.srv.AddEventHandler(bindertest.KindPod, toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if !initial {
				added.Add(1)
			}
		},
	}))
	if err := b.SyncVolume(e.ctx, "pv1"); err != nil {
		t.Fatal(err)
	}
	e.setPodPhase("pv1", v1.PodSucceeded, "")
	e.waitOps(b)
	if got := e.volume("pv1"); got.Status.Phase != v1.VolumeAvailable || got.Spec.ClaimRef != nil {
		t.Errorf("volume = %s bound to %v, want Available and unbound", got.Status.Phase, got.Spec.ClaimRef)
	}
	if n := added.Load(); n != 0 {
		t.Errorf("%d pods created after the restart, want 0 (adopt %s)", n, created.UID)
	}
	if _, err := e.srv.GetPod(e.ctx, pod.Namespace, pod.Name); err == nil {
		t.Errorf("the adopted pod was not deleted")
	}
}
