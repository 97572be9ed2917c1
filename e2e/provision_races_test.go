//go:build e2e && linux

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/volbind/volbind/binder"
)

// gatedProvisioner is a fakeProvisioner whose Provision, once it has
// recorded the request, blocks until gate is closed.
type gatedProvisioner struct {
	*fakeProvisioner
	gate chan struct{}
}

func (p gatedProvisioner) Provision(ctx context.Context, req *binder.ProvisionRequest) (*v1.PersistentVolume, error) {
	pv, err := p.fakeProvisioner.Provision(ctx, req)
	select {
	case <-p.gate:
		return pv, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// startGatedProvisioning creates the fixture's Immediate class and starts
// a Binder with a gated provisioner and a Deleter of testProvisioner; it
// creates claim name and returns it as read back once Provision has been
// called for it (and blocks).
func (f *fixture) startGatedProvisioning(name string) (gatedProvisioner, *fakeDeleter, *v1.PersistentVolumeClaim) {
	f.t.Helper()
	f.createClass(storagev1.VolumeBindingImmediate)
	p := gatedProvisioner{fakeProvisioner: &fakeProvisioner{ns: f.ns}, gate: make(chan struct{})}
	d := &fakeDeleter{}
	startBinder(f.t, binder.Config{
		Provisioning: &binder.ProvisioningConfig{Provisioners: map[string]binder.Provisioner{testProvisioner: p}},
		Reclaim:      &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{testProvisioner: d}},
	})
	f.create(f.claim(name, 1))
	f.eventually(time.Minute, "the Provision call", func(context.Context) (bool, error) {
		return len(p.requests()) > 0, nil
	})
	return p, d, f.getClaim(name)
}

// TestProvisionedVolumeAlreadyExists: the volume object the Binder creates
// for a provisioned volume already exists on the API server, pre-bound to
// the claim (an earlier attempt whose answer was lost made it). The
// AlreadyExists answer of kube-apiserver is a success: the storage is kept
// (no Deleter call), ProvisioningSucceeded is recorded and the claim is
// Bound to that volume. (The read after the last failed create would find
// the object too, only later: the test checks the outcome, not the path.)
func TestProvisionedVolumeAlreadyExists(t *testing.T) {
	f := newFixture(t)
	f.releaseFinalizers()
	p, d, claim := f.startGatedProvisioning("lost")
	name := binder.ProvisionedVolumeName(claim)
	earlier := f.volume("unused", 1)
	earlier.Name = name
	earlier.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": testProvisioner}
	earlier.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
	earlier.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: f.ns, Name: claim.Name, UID: claim.UID}
	f.create(earlier)
	close(p.gate)

	f.waitBound(1, time.Minute)
	if got := f.checkBindings()["lost"]; got != name {
		t.Errorf("claim lost Bound to %q, want %q", got, name)
	}
	f.waitEvent(f.ns, "lost", v1.EventTypeNormal, binder.ReasonProvisioningSucceeded,
		"Successfully provisioned volume "+name+" using "+testProvisioner)
	if got := d.names(); len(got) != 0 {
		t.Errorf("Deleter calls = %q, want none: the storage of an existing volume object was deleted", got)
	}
}

// TestProvisionForClaimDeletedMidway: the claim is deleted while its volume
// is being provisioned. The storage must not leak: the volume object,
// pre-bound to the gone claim, is released and its storage and object are
// deleted, whichever of its create's answer and its informer's event (same
// resourceVersion) the Binder sees first. (bindertest's
// TestProvisionForClaimDeletedMidway orders those two deterministically.)
func TestProvisionForClaimDeletedMidway(t *testing.T) {
	f := newFixture(t)
	f.releaseFinalizers()
	p, d, claim := f.startGatedProvisioning("gone")
	f.deleteClaim("gone")
	close(p.gate)

	name := binder.ProvisionedVolumeName(claim)
	f.eventually(time.Minute, "the Deleter call", func(context.Context) (bool, error) {
		return len(d.names()) > 0, nil
	})
	f.waitGone(name)
	if got := d.names(); !slices.Equal(got, []string{name}) {
		t.Errorf("Deleter calls = %q, want [%s]", got, name)
	}
}
