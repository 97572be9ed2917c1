package binder

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestFenceRefuses: a Binder whose Fence refuses writes nothing and calls
// no plugin: neither Provision nor Delete; its syncs fail with ErrFenced.
// Once the Fence allows again, it finishes the work.
func TestFenceRefuses(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	e := newEnv(t, provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim1", "1Gi"),
		releasedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy(diskProvisioner)))
	var allowed atomic.Bool
	errLease := errors.New("lease expires in 1s")
	b := e.newBinder(Config{
		Fence: FenceFunc(func(context.Context) error {
			if allowed.Load() {
				return nil
			}
			return errLease
		}),
		Provisioning: &ProvisioningConfig{Provisioners: map[string]Provisioner{diskProvisioner: p}},
		Reclaim:      &ReclaimConfig{Deleters: map[string]Deleter{diskProvisioner: p}},
	})
	e.srv.ResetStats()
	if err := b.SyncVolume(e.ctx, "pv1"); !errors.Is(err, ErrFenced) || !errors.Is(err, errLease) {
		t.Errorf("SyncVolume = %v, want an error wrapping ErrFenced and the fence's error", err)
	}
	// The provisioning operation starts and is refused at its first write.
	if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
		t.Errorf("SyncClaim = %v, want nil", err)
	}
	e.waitOps(b)
	if got := p.callList(); len(got) != 0 {
		t.Errorf("plugin calls while fenced = %v, want none", got)
	}
	if got := e.writes(); got != 0 {
		t.Errorf("writes while fenced = %d (%v), want 0", got, e.srv.Stats().Writes)
	}

	allowed.Store(true)
	e.fc.Step(time.Minute) // past the operations' backoff
	for range 3 {
		e.syncVolumeAndWait(b, "pv1")
		e.syncClaimAndWait(b, "claim1")
	}
	if e.exists("pv1") || e.claim("claim1").Status.Phase != v1.ClaimBound {
		t.Errorf("after the fence allows: pv1 exists = %v, claim1 = %s; want pv1 deleted and claim1 Bound", e.exists("pv1"), e.claim("claim1").Status.Phase)
	}
}

// TestOperationMark: a fresh mark of another owner keeps the Binder from
// deleting the volume; once older than OperationMarkTTL it is taken over,
// and the Binder's own mark is written before the Deleter runs.
func TestOperationMark(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mark, err := json.Marshal(operationMark{Op: opDelete, Owner: "other", Start: e.fc.Now()})
	if err != nil {
		t.Fatal(err)
	}
	pv := releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath, pvPhase(v1.VolumeReleased))
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, AnnOperation, string(mark))
	if err := e.srv.Seed(e.ctx, pv); err != nil {
		t.Fatal(err)
	}
	var seen string
	p := newPlugin()
	d := deleterFunc(func(ctx context.Context, pv *v1.PersistentVolume) error {
		seen = pv.Annotations[AnnOperation]
		return p.Delete(ctx, pv)
	})
	b := e.newBinder(Config{Identity: "me", OperationMarkTTL: time.Minute,
		Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": d}}})
	e.syncVolumeAndWait(b, "pv1")
	if got := p.callList(); len(got) != 0 {
		t.Fatalf("Deleter calls under another owner's fresh mark = %v, want none", got)
	}
	e.fc.Step(time.Minute)
	e.syncVolumeAndWait(b, "pv1")
	if got := p.callList(); len(got) != 1 || e.exists("pv1") {
		t.Fatalf("after the mark expired: calls = %v, volume exists = %v; want one call and the volume deleted", got, e.exists("pv1"))
	}
	var m operationMark
	if err := json.Unmarshal([]byte(seen), &m); err != nil || m.Owner != "me" || m.Op != opDelete || !m.Start.Equal(e.fc.Now()) {
		t.Errorf("mark seen by the Deleter = %q (%v), want op delete, owner me, start %v", seen, err, e.fc.Now())
	}
}

// deleterFunc adapts a function to a Deleter.
type deleterFunc func(ctx context.Context, pv *v1.PersistentVolume) error

func (f deleterFunc) Delete(ctx context.Context, pv *v1.PersistentVolume) error { return f(ctx, pv) }

// TestOperationMarkConflict: the mark's write conflicts once; the mark is
// written on the version read after the conflict and the volume is
// deleted by the same operation, without waiting for a backoff.
func TestOperationMarkConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath, pvPhase(v1.VolumeReleased)))
	p := newPlugin()
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": p}}})
	e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindVolume, Conflict: true, Times: 1})
	e.syncVolumeAndWait(b, "pv1")
	if got := e.srv.Stats().Conflicts; got != 1 {
		t.Errorf("conflicts = %d, want 1: the mark's write must have conflicted", got)
	}
	if got := p.callList(); len(got) != 1 || e.exists("pv1") {
		t.Errorf("after one sync: calls = %v, volume exists = %v; want one call and the volume deleted", got, e.exists("pv1"))
	}
}

// TestOperationMarkOff: a negative OperationMarkTTL writes no mark: a
// deletion costs Kubernetes' writes only.
func TestOperationMarkOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath, pvPhase(v1.VolumeReleased)))
	p := newPlugin()
	b := e.newBinder(Config{OperationMarkTTL: -1, Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": p}}})
	e.srv.ResetStats()
	e.syncVolumeAndWait(b, "pv1")
	if got := p.callList(); len(got) != 1 || e.exists("pv1") {
		t.Errorf("calls = %v, volume exists = %v; want one call and the volume deleted", got, e.exists("pv1"))
	}
	if got := e.writes(); got != 1 {
		t.Errorf("writes = %d (%v), want 1 (the delete)", got, e.srv.Stats().Writes)
	}
}

// TestFenceBeforePluginCall: the Fence is consulted right before the
// plugin call itself, not only before the writes that precede it: a Fence
// that allows the first write (the claim's provisioner annotation, the
// volume's operation mark) and then refuses keeps Provision and Delete
// from running.
func TestFenceBeforePluginCall(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	e := newEnv(t, provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim1", "1Gi"),
		releasedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy(diskProvisioner), pvPhase(v1.VolumeReleased)))
	var calls atomic.Int32
	fence := FenceFunc(func(context.Context) error {
		if calls.Add(1) > 1 {
			return errors.New("lease lost")
		}
		return nil
	})
	b := e.newBinder(Config{Fence: fence,
		Provisioning: &ProvisioningConfig{Provisioners: map[string]Provisioner{diskProvisioner: p}},
		Reclaim:      &ReclaimConfig{Deleters: map[string]Deleter{diskProvisioner: p}},
	})
	e.syncClaimAndWait(b, "claim1")
	if got := e.claim("claim1").Annotations[volume.AnnStorageProvisioner]; got != diskProvisioner {
		t.Errorf("claim provisioner annotation = %q, want the allowed write %q", got, diskProvisioner)
	}
	calls.Store(0)
	e.syncVolumeAndWait(b, "pv1")
	if got := e.volume("pv1").Annotations[AnnOperation]; got == "" {
		t.Errorf("volume has no operation mark, want the allowed write")
	}
	if got := p.callList(); len(got) != 0 {
		t.Errorf("plugin calls = %v, want none (fenced right before the call)", got)
	}
}
