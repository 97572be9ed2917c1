//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
)

// Kubernetes' names of the in-tree plugins the tests use and of the CSI
// drivers csi-translation-lib migrates them to.
const (
	gcePlugin = "kubernetes.io/gce-pd"
	gceDriver = "pd.csi.storage.gke.io"
	ebsPlugin = "kubernetes.io/aws-ebs"
	ebsDriver = "ebs.csi.aws.com"
	// rbdPlugin is an in-tree plugin that csi-translation-lib does not
	// migrate.
	rbdPlugin = "kubernetes.io/rbd"
)

// externalText is Kubernetes' message of the ExternalProvisioning event.
func externalText(provisioner string) string {
	return fmt.Sprintf("Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.", provisioner)
}

// createClassOf creates an Immediate StorageClass name of the provisioner;
// the cleanup deletes it.
func (f *fixture) createClassOf(name, provisioner string) {
	f.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner,
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)}
	if _, err := f.cs.StorageV1().StorageClasses().Create(f.t.Context(), sc, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("create StorageClass %s: %v", name, err)
	}
	f.t.Cleanup(func() {
		if err := f.cs.StorageV1().StorageClasses().Delete(context.Background(), name, deleteNow()); err != nil {
			f.t.Errorf("delete StorageClass %s: %v", name, err)
		}
	})
}

// waitEvent waits for an event of the namespace about object name with the
// reason, type and exact message.
func (f *fixture) waitEvent(namespace, name, eventType, reason, message string) {
	f.t.Helper()
	f.eventually(time.Minute, fmt.Sprintf("a %s %s event %q on %s", eventType, reason, message, name), func(ctx context.Context) (bool, error) {
		evs, err := f.eventsIn(ctx, namespace, name, reason)
		for _, ev := range evs {
			if ev.Type == eventType && ev.Message == message {
				return true, nil
			}
		}
		return false, err
	})
}

// checkAnnotations fails the test unless each key of want has its value in
// got, or is absent from got when the wanted value is "".
func checkAnnotations(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if gv, ok := got[k]; gv != v || ok != (v != "") {
			t.Errorf("%s annotation %s = %q (present %v), want %q", what, k, gv, ok, v)
		}
	}
}

// TestMigratedClaimHandedToCSIDriver: with the default CSI migration
// (csi-translation-lib, as kube-controller-manager v1.37), a claim of an
// in-tree class that is migrated is handed to the CSI driver's external
// provisioner: its GA and beta provisioner annotations name the driver,
// without migrated-to, a Normal ExternalProvisioning event names the
// driver, and the Provisioner registered under the in-tree name is not
// called. A claim of an external class that has the GA annotation already
// does not get the beta one. Claims that name a migrated plugin in either
// provisioner annotation get pv.kubernetes.io/migrated-to.
func TestMigratedClaimHandedToCSIDriver(t *testing.T) {
	f := newFixture(t)
	f.createClassOf(f.class, gcePlugin)
	external := f.ns + "-external"
	f.createClassOf(external, "example.com/external")
	p := &fakeProvisioner{ns: f.ns}
	startBinder(t, binder.Config{Provisioning: &binder.ProvisioningConfig{Provisioners: map[string]binder.Provisioner{gcePlugin: p}}})

	gaOnly := f.claim("ga-only", 1)
	gaOnly.Spec.StorageClassName = &external
	gaOnly.Annotations = map[string]string{volume.AnnStorageProvisioner: "example.com/external"}
	ga := f.claim("anneal-ga", 1)
	ga.Spec.StorageClassName = ptr.To("")
	ga.Annotations = map[string]string{volume.AnnStorageProvisioner: gcePlugin}
	beta := f.claim("anneal-beta", 1)
	beta.Spec.StorageClassName = ptr.To("")
	beta.Annotations = map[string]string{volume.AnnBetaStorageProvisioner: ebsPlugin}
	f.create(f.claim("migrated", 1), gaOnly, ga, beta)

	f.waitEvent(f.ns, "migrated", v1.EventTypeNormal, binder.ReasonExternalProvisioning, externalText(gceDriver))
	f.waitEvent(f.ns, "ga-only", v1.EventTypeNormal, binder.ReasonExternalProvisioning, externalText("example.com/external"))
	f.eventually(time.Minute, "migrated-to on the annealed claims", func(context.Context) (bool, error) {
		return f.getClaim("anneal-ga").Annotations[volume.AnnMigratedTo] != "" &&
			f.getClaim("anneal-beta").Annotations[volume.AnnMigratedTo] != "", nil
	})

	migrated := f.getClaim("migrated")
	checkAnnotations(t, "claim migrated", migrated.Annotations, map[string]string{
		volume.AnnStorageProvisioner: gceDriver, volume.AnnBetaStorageProvisioner: gceDriver, volume.AnnMigratedTo: ""})
	if migrated.Status.Phase != v1.ClaimPending || migrated.Spec.VolumeName != "" {
		t.Errorf("claim migrated = %s to %q, want Pending without volume", migrated.Status.Phase, migrated.Spec.VolumeName)
	}
	if reqs := p.requests(); len(reqs) != 0 {
		t.Errorf("the Provisioner of the migrated plugin was called %d times, want none", len(reqs))
	}
	checkAnnotations(t, "claim ga-only", f.getClaim("ga-only").Annotations, map[string]string{
		volume.AnnStorageProvisioner: "example.com/external", volume.AnnBetaStorageProvisioner: ""})
	checkAnnotations(t, "claim anneal-ga", f.getClaim("anneal-ga").Annotations, map[string]string{
		volume.AnnStorageProvisioner: gcePlugin, volume.AnnMigratedTo: gceDriver})
	checkAnnotations(t, "claim anneal-beta", f.getClaim("anneal-beta").Annotations, map[string]string{
		volume.AnnBetaStorageProvisioner: ebsPlugin, volume.AnnMigratedTo: ebsDriver, volume.AnnStorageProvisioner: ""})
}

// provisionedVolume is an unbound volume of the fixture provisioned by
// provisioner, with the reclaim policy and finalizers.
func (f *fixture) provisionedVolume(name, provisioner string, policy v1.PersistentVolumeReclaimPolicy, finalizers ...string) *v1.PersistentVolume {
	pv := f.volume(name, 1)
	pv.Annotations = map[string]string{volume.AnnDynamicallyProvisioned: provisioner}
	pv.Spec.PersistentVolumeReclaimPolicy = policy
	pv.Finalizers = finalizers
	return pv
}

// checkAnnealed reads the volume back and checks its finalizers and
// migrated-to annotation ("" = none).
func (f *fixture) checkAnnealed(name string, finalizers []string, migratedTo string) {
	f.t.Helper()
	pv := f.getVolume(name)
	if !slices.Equal(pv.Finalizers, finalizers) || pv.Annotations[volume.AnnMigratedTo] != migratedTo {
		f.t.Errorf("volume %s: finalizers %q, migrated-to %q; want %q, %q", name, pv.Finalizers, pv.Annotations[volume.AnnMigratedTo], finalizers, migratedTo)
	}
}

// TestVolumeAnneal: the volume sync makes the finalizers and the
// migrated-to annotation of existing provisioned volumes what
// kube-controller-manager's would be, on the objects the API server keeps:
// a Delete volume whose storage the Binder deletes gains
// kubernetes.io/pv-controller (made by an older controller), a Retain one
// loses it, a migrated one loses it and gets migrated-to, and an external
// provisioner's volume keeps its own finalizer.
func TestVolumeAnneal(t *testing.T) {
	f := newFixture(t)
	f.releaseFinalizers()
	ext := volume.PVDeletionProtectionFinalizer
	f.create(
		f.provisionedVolume("upgrade", testProvisioner, v1.PersistentVolumeReclaimDelete),
		f.provisionedVolume("retain", testProvisioner, v1.PersistentVolumeReclaimRetain, binder.FinalizerPVController),
		f.provisionedVolume("migrated", gcePlugin, v1.PersistentVolumeReclaimDelete, binder.FinalizerPVController),
		f.provisionedVolume("external", "example.com/external", v1.PersistentVolumeReclaimDelete, ext),
	)
	// startBinder returns once every existing volume was synced and the
	// syncs caused by their writes too.
	startBinder(t, binder.Config{Reclaim: &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{testProvisioner: &fakeDeleter{}}}})
	f.checkAnnealed(f.ns+"-upgrade", []string{binder.FinalizerPVController}, "")
	f.checkAnnealed(f.ns+"-retain", nil, "")
	f.checkAnnealed(f.ns+"-migrated", nil, gceDriver)
	f.checkAnnealed(f.ns+"-external", []string{ext}, "")
	for _, name := range []string{"upgrade", "retain", "migrated", "external"} {
		if got := f.getVolume(f.ns + "-" + name).Status.Phase; got != v1.VolumeAvailable {
			t.Errorf("volume %s = %s, want Available", name, got)
		}
	}
}

// TestVolumeAnnealMigrationOff: with CSI migration turned off (a rollback),
// a volume of an in-tree plugin loses migrated-to and the CSI external
// provisioner's finalizer and gains kubernetes.io/pv-controller, in the
// object the API server keeps.
func TestVolumeAnnealMigrationOff(t *testing.T) {
	f := newFixture(t)
	f.releaseFinalizers()
	pv := f.provisionedVolume("rolled-back", gcePlugin, v1.PersistentVolumeReclaimDelete, volume.PVDeletionProtectionFinalizer)
	pv.Annotations[volume.AnnMigratedTo] = gceDriver
	f.create(pv)
	startBinder(t, binder.Config{CSIMigration: binder.NoCSIMigration{}, Reclaim: &binder.ReclaimConfig{}})
	f.checkAnnealed(pv.Name, []string{binder.FinalizerPVController}, "")
}

// TestUndeletableVolumesFailed: released Delete volumes that no Deleter
// can delete become Failed with kube-controller-manager's texts, in the
// status message the API server keeps and in a Warning VolumeFailedDelete
// event: a static volume whose plugin has no Deleter, and a volume
// provisioned by an in-tree plugin that is neither registered nor migrated
// (which keeps its kubernetes.io/pv-controller finalizer).
func TestUndeletableVolumesFailed(t *testing.T) {
	f := newFixture(t)
	f.releaseFinalizers()
	static := f.volume("static", 1)
	static.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
	rbd := f.provisionedVolume("rbd", rbdPlugin, v1.PersistentVolumeReclaimDelete)
	// The volumes exist before the Binder starts, so that it knows them
	// when the claims come (a claim that finds no volume waits for a
	// resync).
	f.create(static, rbd)
	startBinder(t, binder.Config{Reclaim: &binder.ReclaimConfig{}})
	f.create(f.claim("static", 1), f.claim("rbd", 1))
	f.waitBound(2, time.Minute)
	f.deleteClaim("static")
	f.deleteClaim("rbd")

	want := map[string]string{
		static.Name: fmt.Sprintf("error getting deleter volume plugin for volume %q: no volume plugin matched", static.Name),
		rbd.Name:    "no volume plugin matched name: " + rbdPlugin,
	}
	for name, msg := range want {
		f.eventually(time.Minute, "volume "+name+" to be Failed", func(context.Context) (bool, error) {
			return f.getVolume(name).Status.Phase == v1.VolumeFailed, nil
		})
		if got := f.getVolume(name).Status.Message; got != msg {
			t.Errorf("volume %s message = %q, want %q", name, got, msg)
		}
		f.waitEvent(metav1.NamespaceDefault, name, v1.EventTypeWarning, binder.ReasonVolumeFailedDelete, msg)
	}
	if got := f.getVolume(rbd.Name).Finalizers; !slices.Equal(got, []string{binder.FinalizerPVController}) {
		t.Errorf("volume rbd finalizers = %q, want [%s] (its storage is not deleted)", got, binder.FinalizerPVController)
	}
}
