//go:build e2e && linux

package suite

import (
	"context"
	"errors"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/e2e/provisioner"
)

// Kubernetes' name of the in-tree GCE PD plugin and of the CSI driver
// csi-translation-lib migrates it to.
const (
	gcePlugin = "kubernetes.io/gce-pd"
	gceDriver = "pd.csi.storage.gke.io"
)

// testCase is one case of the contract between the PV binder and the
// external provisioner; run drives it on e and records its checkpoints.
type testCase struct {
	name string
	// driver and migratedFrom configure the case's provisioner (driver
	// "" is testDriver).
	driver, migratedFrom string
	run                  func(e *env)
}

var cases = []testCase{
	{name: "immediate", run: caseImmediate},
	{name: "wait-for-first-consumer", run: caseWaitForFirstConsumer},
	{name: "delete-by-library", run: caseDeleteByLibrary},
	{name: "retain", run: caseRetain},
	{name: "provision-fails-twice", run: caseFailsTwice},
	{name: "claim-deleted-in-flight", run: caseClaimDeletedInFlight},
	{name: "migrated-in-tree-class", driver: gceDriver, migratedFrom: gcePlugin, run: caseMigrated},
}

// checkBound checks the binding of claim name to the volume the library
// provisioned for it, as read back: the volume is "pvc-<claim UID>", Bound,
// its claimRef is the claim, it carries provisioned-by and the library's
// finalizer (while its policy is Delete: the library removes it from a
// Retain volume); the claim is Bound to it with bind-completed and both
// provisioner annotations naming provisionerName.
func (e *env) checkBound(name, provisionerName, provisionedBy string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	e.t.Helper()
	pvc := e.waitClaimPhase(name, v1.ClaimBound)
	want := "pvc-" + string(pvc.UID)
	if pvc.Spec.VolumeName != want {
		e.t.Fatalf("claim %s Bound to %q, want the provisioned %q", name, pvc.Spec.VolumeName, want)
	}
	pv := e.waitVolumePhase(want, v1.VolumeBound)
	if r := pv.Spec.ClaimRef; r == nil || r.UID != pvc.UID || r.Name != name || r.Namespace != e.ns {
		e.t.Errorf("volume %s claimRef = %+v, want claim %s uid %s", want, r, name, pvc.UID)
	}
	if got := pv.Annotations[volume.AnnDynamicallyProvisioned]; got != provisionedBy {
		e.t.Errorf("volume %s provisioned-by = %q, want %q", want, got, provisionedBy)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete && !slices.Equal(pv.Finalizers, []string{libFinalizer}) {
		e.t.Errorf("volume %s finalizers = %q, want the library's [%s]", want, pv.Finalizers, libFinalizer)
	}
	for _, k := range []string{volume.AnnStorageProvisioner, volume.AnnBetaStorageProvisioner} {
		if got := pvc.Annotations[k]; got != provisionerName {
			e.t.Errorf("claim %s annotation %s = %q, want %q", name, k, got, provisionerName)
		}
	}
	if pvc.Annotations[volume.AnnBindCompleted] != "yes" {
		e.t.Errorf("claim %s has no bind-completed annotation: %v", name, pvc.Annotations)
	}
	if got := pvc.Status.Capacity[v1.ResourceStorage]; got.Cmp(pv.Spec.Capacity[v1.ResourceStorage]) != 0 {
		e.t.Errorf("claim %s capacity = %s, want the volume's %s", name, got.String(), pv.Spec.Capacity.Storage())
	}
	return pvc, pv
}

// checkFinalizerKept fails unless every version of volume name seen before
// its deletion carried exactly the library's finalizer: no binder removed
// it or added one of its own.
func (e *env) checkFinalizerKept(name string) {
	e.t.Helper()
	versions := e.hist.volumeVersions(name)
	if len(versions) == 0 {
		e.t.Fatalf("no version of volume %s was seen", name)
	}
	for _, pv := range versions {
		if pv.DeletionTimestamp == nil && !slices.Equal(pv.Finalizers, []string{libFinalizer}) {
			e.t.Errorf("volume %s version %s (%s) has finalizers %q, want [%s]", name, pv.ResourceVersion, pv.Status.Phase, pv.Finalizers, libFinalizer)
		}
	}
}

// checkDeleted fails unless the library's Delete calls were for volume
// name only (at least one: the library may delete the storage again when
// the volume changes before its object is gone, as CSI allows).
func (e *env) checkDeleted(name string) {
	e.t.Helper()
	got := e.prov.Deletes()
	if len(got) == 0 || slices.ContainsFunc(got, func(n string) bool { return n != name }) {
		e.t.Errorf("library Delete calls = %q, want only %s", got, name)
	}
}

// phases returns the phases of the versions of volume name, without
// repeats.
func (e *env) phases(name string) []v1.PersistentVolumePhase {
	var out []v1.PersistentVolumePhase
	for _, pv := range e.hist.volumeVersions(name) {
		if len(out) == 0 || out[len(out)-1] != pv.Status.Phase {
			out = append(out, pv.Status.Phase)
		}
	}
	return out
}

// caseImmediate: a claim of an Immediate class of the test driver. The
// binder hands it to the external provisioner (annotations, an
// ExternalProvisioning event); the binder is restarted while the library's
// Provision call is in flight; the claim ends Bound to the library's
// volume.
func caseImmediate(e *env) {
	class := e.createClass("", testDriver, storagev1.VolumeBindingImmediate, v1.PersistentVolumeReclaimDelete)
	gate := e.prov.HoldProvision(e.key("data"))
	e.createClaim("data", class)
	e.waitEvent(e.ns, "data", v1.EventTypeNormal, "ExternalProvisioning")
	e.waitGate(gate, "the Provision call")
	e.binder.restart(e.t, nil)
	gate.Release()
	e.checkBound("data", testDriver, testDriver)
	e.waitEvent(e.ns, "data", v1.EventTypeNormal, "ProvisioningSucceeded")
	if calls := e.prov.Provisions(e.key("data")); len(calls) != 1 || calls[0].SelectedNode != "" {
		e.t.Errorf("Provision calls = %+v, want one without a selected node", calls)
	}
	e.checkpoint("bound")
}

// caseWaitForFirstConsumer: a claim of a WaitForFirstConsumer class waits
// (WaitForFirstConsumer event, nothing provisioned); while the binder is
// down the test selects a node as kube-scheduler does (the selected-node
// annotation); the restarted binder hands the claim to the provisioner,
// whose volume has the node's topology.
func caseWaitForFirstConsumer(e *env) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-node", Labels: map[string]string{v1.LabelTopologyZone: "zone-a", v1.LabelHostname: e.ns + "-node"}}}
	if _, err := e.cs.CoreV1().Nodes().Create(e.t.Context(), node, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create node: %v", err)
	}
	e.t.Cleanup(func() {
		if err := e.cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}); err != nil {
			e.t.Errorf("delete node: %v", err)
		}
	})
	class := e.createClass("", testDriver, storagev1.VolumeBindingWaitForFirstConsumer, v1.PersistentVolumeReclaimDelete)
	e.createClaim("data", class)
	e.waitEvent(e.ns, "data", v1.EventTypeNormal, "WaitForFirstConsumer")
	if calls := e.prov.Provisions(e.key("data")); len(calls) != 0 {
		e.t.Fatalf("provisioned before a node was selected: %+v", calls)
	}
	e.binder.restart(e.t, func() {
		pvc := e.claim("data")
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnSelectedNode, node.Name)
		if _, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Update(e.t.Context(), pvc, metav1.UpdateOptions{}); err != nil {
			e.t.Fatalf("select node: %v", err)
		}
	})
	_, pv := e.checkBound("data", testDriver, testDriver)
	calls := e.prov.Provisions(e.key("data"))
	if len(calls) != 1 || calls[0].SelectedNode != node.Name {
		e.t.Errorf("Provision calls = %+v, want one for node %s", calls, node.Name)
	}
	terms := pv.Spec.NodeAffinity
	if terms == nil || terms.Required == nil || len(terms.Required.NodeSelectorTerms) != 1 ||
		terms.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != "zone-a" {
		e.t.Errorf("volume node affinity = %+v, want zone-a of the selected node", terms)
	}
	e.checkpoint("bound")
}

// bindOne provisions and binds claim "data" of a new Immediate class of
// the test driver with the reclaim policy, and returns the volume's name.
func (e *env) bindOne(policy v1.PersistentVolumeReclaimPolicy) string {
	e.t.Helper()
	class := e.createClass("", testDriver, storagev1.VolumeBindingImmediate, policy)
	e.createClaim("data", class)
	_, pv := e.checkBound("data", testDriver, testDriver)
	return pv.Name
}

// caseDeleteByLibrary: the bound claim of a Delete volume is deleted while
// the binder is down; the restarted binder makes the volume Released and
// leaves it to the library, which deletes the storage, then the object,
// then removes its finalizer. No binder touches that finalizer.
func caseDeleteByLibrary(e *env) {
	name := e.bindOne(v1.PersistentVolumeReclaimDelete)
	e.checkpoint("bound")
	gate := e.prov.HoldDelete(e.key("data"))
	e.binder.restart(e.t, func() { e.deleteClaim("data") })
	pv := e.waitVolumePhase(name, v1.VolumeReleased)
	e.waitGate(gate, "the library's Delete call")
	if !slices.Equal(pv.Finalizers, []string{libFinalizer}) || pv.Spec.ClaimRef == nil {
		e.t.Errorf("released volume: finalizers %q, claimRef %v; want [%s] and the deleted claim", pv.Finalizers, pv.Spec.ClaimRef, libFinalizer)
	}
	e.checkpoint("released")
	gate.Release()
	e.waitGone(name)
	e.checkDeleted(name)
	e.checkFinalizerKept(name)
	if got := e.phases(name); !slices.Equal(got, []v1.PersistentVolumePhase{v1.VolumePending, v1.VolumeBound, v1.VolumeReleased}) &&
		!slices.Equal(got, []v1.PersistentVolumePhase{v1.VolumeBound, v1.VolumeReleased}) {
		e.t.Errorf("volume %s went through %q, want Bound then Released", name, got)
	}
	e.checkpoint("deleted")
}

// caseRetain: the bound claim of a Retain volume is deleted while the
// binder is down; the volume ends Released with its claimRef, the library
// removes its finalizer (a Retain volume is not its to delete) and never
// deletes it.
func caseRetain(e *env) {
	name := e.bindOne(v1.PersistentVolumeReclaimRetain)
	e.binder.restart(e.t, func() { e.deleteClaim("data") })
	e.waitVolumePhase(name, v1.VolumeReleased)
	e.eventually(time.Minute, "the library to remove its finalizer from the Retain volume", func(ctx context.Context) (bool, error) {
		return len(e.volume(name).Finalizers) == 0, nil
	})
	pv := e.volume(name)
	if pv.Status.Phase != v1.VolumeReleased || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "data" {
		e.t.Errorf("retained volume %s = %s, claimRef %v; want Released with the deleted claim's claimRef", name, pv.Status.Phase, pv.Spec.ClaimRef)
	}
	if got := e.prov.Deletes(); len(got) != 0 {
		e.t.Errorf("library Delete calls = %q, want none for a Retain volume", got)
	}
	e.checkpoint("released")
}

// caseFailsTwice: the provisioner fails the first two Provision calls; the
// library reports each (Warning ProvisioningFailed) and retries; the binder
// is restarted after the first failure; the third call succeeds and the
// claim is Bound.
func caseFailsTwice(e *env) {
	class := e.createClass("", testDriver, storagev1.VolumeBindingImmediate, v1.PersistentVolumeReclaimDelete)
	e.prov.FailProvision(e.key("data"), 2)
	e.createClaim("data", class)
	e.waitEvent(e.ns, "data", v1.EventTypeWarning, "ProvisioningFailed")
	e.binder.restart(e.t, nil)
	e.checkBound("data", testDriver, testDriver)
	calls := e.prov.Provisions(e.key("data"))
	if len(calls) != 3 || !errors.Is(calls[0].Err, provisioner.ErrInjected) || !errors.Is(calls[1].Err, provisioner.ErrInjected) || calls[2].Err != nil {
		e.t.Errorf("Provision calls = %+v, want two injected failures and a success", calls)
	}
	e.eventually(time.Minute, "two ProvisioningFailed events (one per failed call)", func(ctx context.Context) (bool, error) {
		evs, err := e.events(ctx, e.ns, "data", "ProvisioningFailed")
		return len(evs) >= 2, err
	})
	e.waitEvent(e.ns, "data", v1.EventTypeNormal, "ProvisioningSucceeded")
	e.checkpoint("bound")
}

// caseClaimDeletedInFlight: the claim is deleted while the library's
// Provision call is in flight, and re-created with the same name while the
// binder is down. The first claim's volume is created afterwards, pre-bound
// to the gone claim: it must become Released and be deleted by the library,
// never Bound, while the new claim gets a volume of its own.
func caseClaimDeletedInFlight(e *env) {
	class := e.createClass("", testDriver, storagev1.VolumeBindingImmediate, v1.PersistentVolumeReclaimDelete)
	gate := e.prov.HoldProvision(e.key("data"))
	first := e.createClaim("data", class)
	// The binder's event goes out after its write that lets the library
	// call Provision: wait for it, or the restart may stop the binder
	// before the event is written. kube-controller-manager drops what it
	// has not sent when it stops (volbind writes it first), so the
	// compared events would depend on the race.
	e.waitEvent(e.ns, "data", v1.EventTypeNormal, "ExternalProvisioning")
	e.waitGate(gate, "the Provision call")
	var second *v1.PersistentVolumeClaim
	e.binder.restart(e.t, func() {
		e.deleteClaim("data")
		second = e.createClaim("data", class)
	})
	e.checkBound("data", testDriver, testDriver)
	orphan := "pvc-" + string(first.UID)
	deleteGate := e.prov.HoldDelete(e.key("data"))
	gate.Release()
	pv := e.waitVolumePhase(orphan, v1.VolumeReleased)
	e.waitGate(deleteGate, "the library's Delete call of the orphan")
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != first.UID {
		e.t.Errorf("orphan volume claimRef = %+v, want the first claim (uid %s)", pv.Spec.ClaimRef, first.UID)
	}
	e.checkpoint("released")
	deleteGate.Release()
	e.waitGone(orphan)
	for _, v := range e.hist.volumeVersions(orphan) {
		if v.Status.Phase == v1.VolumeBound || v.Spec.ClaimRef == nil || v.Spec.ClaimRef.UID != first.UID {
			e.t.Errorf("orphan volume version %s: %s, claimRef %+v; want never Bound, always the first claim", v.ResourceVersion, v.Status.Phase, v.Spec.ClaimRef)
		}
	}
	for _, c := range e.hist.claimVersions("data") {
		if c.Spec.VolumeName == orphan {
			e.t.Errorf("claim data (uid %s) version %s names the orphan volume", c.UID, c.ResourceVersion)
		}
	}
	if got := e.claim("data"); got.UID != second.UID || got.Status.Phase != v1.ClaimBound {
		e.t.Errorf("claim data = uid %s %s, want the re-created %s Bound", got.UID, got.Status.Phase, second.UID)
	}
	e.checkpoint("final")
}

// caseMigrated: a claim of a class of the in-tree GCE PD plugin, which
// CSI migration hands to pd.csi.storage.gke.io: both provisioner
// annotations name the CSI driver; the driver's provisioner (the library
// with the in-tree name as an additional name) provisions an in-tree
// volume, as the CSI external-provisioner does; the binder is restarted
// meanwhile; the binder marks the volume migrated-to; deleting the claim
// leaves the volume to the library, which deletes it.
func caseMigrated(e *env) {
	class := e.createClass("", gcePlugin, storagev1.VolumeBindingImmediate, v1.PersistentVolumeReclaimDelete)
	gate := e.prov.HoldProvision(e.key("data"))
	e.createClaim("data", class)
	e.waitEvent(e.ns, "data", v1.EventTypeNormal, "ExternalProvisioning")
	e.waitGate(gate, "the Provision call")
	e.binder.restart(e.t, nil)
	gate.Release()
	_, pv := e.checkBound("data", gceDriver, gcePlugin)
	if pv.Spec.GCEPersistentDisk == nil {
		e.t.Errorf("volume %s source = %+v, want the in-tree GCE PD form", pv.Name, pv.Spec.PersistentVolumeSource)
	}
	e.eventually(time.Minute, "migrated-to on the volume", func(ctx context.Context) (bool, error) {
		return e.volume(pv.Name).Annotations[volume.AnnMigratedTo] == gceDriver, nil
	})
	e.checkpoint("bound")
	e.deleteClaim("data")
	e.waitGone(pv.Name)
	e.checkDeleted(pv.Name)
	e.checkFinalizerKept(pv.Name)
	e.checkpoint("deleted")
}
