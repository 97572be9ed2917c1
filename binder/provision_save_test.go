package binder

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/volbind/volbind/binder/bindertest"
)

// lostCreateAPI applies the first volume create and then answers it with
// an error, as when the response is lost; onLost runs right after.
type lostCreateAPI struct {
	*bindertest.Server
	lost   atomic.Bool
	onLost func()
}

func (a *lostCreateAPI) CreateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	out, err := a.Server.CreateVolume(ctx, pv)
	if err == nil && a.lost.CompareAndSwap(false, true) {
		a.onLost()
		return nil, apierrors.NewInternalError(errPlugin)
	}
	return out, err
}

// driveOps steps the fake clock whenever something waits on it until b
// runs no operation.
func (e *env) driveOps(b *Binder) {
	e.t.Helper()
	deadline := time.Now().Add(wait.ForeverTestTimeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Millisecond)
		err := b.ops.Wait(ctx)
		cancel()
		if err == nil {
			return
		}
		if e.fc.HasWaiters() {
			e.fc.Step(time.Second)
		}
	}
	e.t.Fatalf("operations still running after %v", wait.ForeverTestTimeout)
}

// TestProvisionKeepsStorageOnUnknownOutcome: the create of a provisioned
// volume is applied but answered with an error, the retry gets
// AlreadyExists and every read-back fails. The object exists (a claim can
// bind it), so its storage must not be deleted: AlreadyExists is a
// success, and the claim ends Bound to the volume.
func TestProvisionKeepsStorageOnUnknownOutcome(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	e := newEnv(t, provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim1", "1Gi"))
	var removeFault func()
	api := &lostCreateAPI{Server: e.srv, onLost: func() {
		removeFault = e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Kind: bindertest.KindVolume,
			Name: "pvc-uid-claim1", Err: apierrors.NewInternalError(errPlugin), Times: 2})
	}}
	b, err := New(api, Config{Clock: e.fc, Provisioning: &ProvisioningConfig{
		Provisioners: map[string]Provisioner{diskProvisioner: p}, CreateVolumeRetries: 2, CreateVolumeInterval: time.Second,
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.register(b)
	if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
		t.Fatal(err)
	}
	e.driveOps(b)
	removeFault()
	if got, want := p.callList(), []string{"provision pvc-uid-claim1"}; !slices.Equal(got, want) {
		t.Fatalf("plugin calls = %v, want %v (the storage of an existing volume object must not be deleted)", got, want)
	}
	for range 3 {
		e.syncClaimAndWait(b, "claim1")
		if err := b.SyncVolume(e.ctx, "pvc-uid-claim1"); err != nil {
			t.Fatal(err)
		}
	}
	pv, claim := e.volume("pvc-uid-claim1"), e.claim("claim1")
	if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName != pv.Name || pv.Status.Phase != v1.VolumeBound {
		t.Errorf("claim %s to %q, volume %s; want both Bound", claim.Status.Phase, claim.Spec.VolumeName, pv.Status.Phase)
	}
	if got := p.callList(); slices.Contains(got, "delete pvc-uid-claim1") {
		t.Errorf("plugin calls = %v: the storage of a Bound volume was deleted", got)
	}
}

// TestProvisionDeletesStorageOnlyWhenKnownAbsent: every create fails
// without being applied; the read after the last failure finds no object,
// so the storage is deleted. When that read fails too, the storage is kept.
func TestProvisionDeletesStorageOnlyWhenKnownAbsent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		readFails bool
		want      []string
	}{
		{name: "known absent", want: []string{"provision pvc-uid-claim1", "delete pvc-uid-claim1"}},
		{name: "unknown", readFails: true, want: []string{"provision pvc-uid-claim1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPlugin()
			e, b := provEnv(t, p, goldClaim("claim1", "1Gi"))
			e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbCreate, Kind: bindertest.KindVolume, Err: apierrors.NewInternalError(errPlugin)})
			p.onProvision = func(context.Context, *ProvisionRequest) {
				if tc.readFails {
					e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Kind: bindertest.KindVolume, Err: apierrors.NewInternalError(errPlugin)})
				}
			}
			if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
				t.Fatal(err)
			}
			e.driveOps(b)
			if got := p.callList(); !slices.Equal(got, tc.want) {
				t.Errorf("plugin calls = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProvisionForClaimDeletedMidway: with events delivered after the
// writes return (as informers do), a claim deleted while its volume is
// being provisioned leaves a volume pre-bound to a gone claim. The Binder
// learned of it from its own create, so it must sync it (release and
// delete it) even though the informer's Add carries the version it cached.
func TestProvisionForClaimDeletedMidway(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	p.gate = make(chan struct{})
	e := newEnv(t, provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim1", "1Gi"))
	b, err := New(e.srv, Config{Clock: e.fc, Recorder: e.rec,
		Provisioning: &ProvisioningConfig{Provisioners: map[string]Provisioner{diskProvisioner: p}},
		Reclaim:      &ReclaimConfig{Deleters: map[string]Deleter{diskProvisioner: p}},
	})
	if err != nil {
		t.Fatal(err)
	}
	held := new(heldEvents)
	held.register(t, e.srv, b)
	held.flush(false)
	e.run(b)
	e.waitStarted(p, 1) // Provision runs
	if err := e.srv.Delete(e.ctx, bindertest.KindClaim, ns, "claim1"); err != nil {
		t.Fatal(err)
	}
	held.flush(false)
	close(p.gate)
	if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) {
			return e.srv.Stats().Writes[bindertest.KindVolume][bindertest.VerbCreate] > 0, nil
		}); err != nil {
		t.Fatalf("volume not created; calls %v, events %v", p.callList(), e.events())
	}
	e.settle(b)
	held.flush(true) // the volume's Add, same resourceVersion as the create's answer
	e.settle(b)
	// Two resync periods: a volume that is tracked is synced by now.
	for range 2 {
		e.fc.Step(DefaultResyncPeriod)
		e.settle(b)
	}
	e.driveOps(b)
	if e.exists("pvc-uid-claim1") {
		t.Errorf("volume pvc-uid-claim1 = %s, want it deleted (its claim is gone)", e.volume("pvc-uid-claim1").Status.Phase)
	}
	if got := p.callList(); !slices.Contains(got, "delete pvc-uid-claim1") {
		t.Errorf("plugin calls = %v, want the storage deleted", got)
	}
}
