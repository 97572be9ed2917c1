package binder

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/zones"
)

const diskProvisioner = "disk.example.com"

// provEnv is an env whose Binder provisions class "gold" (Immediate) and
// "wffc" (WaitForFirstConsumer) with p, and reads nodes from the server.
func provEnv(t *testing.T, p Provisioner, objs ...runtime.Object) (*env, *Binder) {
	t.Helper()
	objs = append([]runtime.Object{
		provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate),
		provClass("wffc", diskProvisioner, storagev1.VolumeBindingWaitForFirstConsumer),
		provClass("external", "example.com/external", storagev1.VolumeBindingImmediate),
		provClass("intree", "kubernetes.io/rbd", storagev1.VolumeBindingImmediate),
	}, objs...)
	e := newEnv(t, objs...)
	b := e.newBinder(Config{Provisioning: &ProvisioningConfig{
		Provisioners:         map[string]Provisioner{diskProvisioner: p},
		Nodes:                e.srv,
		CreateVolumeRetries:  2,
		CreateVolumeInterval: time.Second,
	}})
	e.srv.ResetStats()
	return e, b
}

func goldClaim(name, size string, opts ...pvcOpt) *v1.PersistentVolumeClaim {
	return newPVC(name, size, append([]pvcOpt{pvcClass(ptr.To("gold"))}, opts...)...)
}

// TestProvision: a claim of a class with an internal provisioner gets a
// volume "pvc-<uid>" of the rounded-up size, pre-bound and then bound to
// it, in five writes, with the request Kubernetes' VolumeOptions carry.
func TestProvision(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	e, b := provEnv(t, p, goldClaim("claim1", "1500Mi"))
	e.run(b)
	e.settle(b)

	pv := e.volume("pvc-uid-claim1")
	claim := e.claim("claim1")
	if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName != pv.Name || pv.Status.Phase != v1.VolumeBound {
		t.Fatalf("claim %s to %q, volume %s; want both Bound", claim.Status.Phase, claim.Spec.VolumeName, pv.Status.Phase)
	}
	wantCap := resource.MustParse("2Gi")
	if got := pv.Spec.Capacity[v1.ResourceStorage]; got.Cmp(wantCap) != 0 {
		t.Errorf("capacity = %s, want 2Gi (1500Mi rounded up to GiB)", got.String())
	}
	if pv.Spec.StorageClassName != "gold" || pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete ||
		!slices.Equal(pv.Spec.AccessModes, []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}) {
		t.Errorf("volume spec = class %q policy %s modes %v", pv.Spec.StorageClassName, pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.AccessModes)
	}
	if pv.Annotations[volume.AnnDynamicallyProvisioned] != diskProvisioner || pv.Annotations[volume.AnnBoundByController] != "yes" {
		t.Errorf("volume annotations = %v", pv.Annotations)
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != "uid-claim1" {
		t.Errorf("claimRef = %v", pv.Spec.ClaimRef)
	}
	if claim.Annotations[volume.AnnStorageProvisioner] != diskProvisioner || claim.Annotations[volume.AnnBetaStorageProvisioner] != diskProvisioner {
		t.Errorf("claim annotations = %v, want both provisioner keys", claim.Annotations)
	}
	reqs := p.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d Provision calls, want 1", len(reqs))
	}
	req := reqs[0]
	wantTags := map[string]string{CloudTagClaimName: "claim1", CloudTagClaimNamespace: ns, CloudTagVolumeName: "pvc-uid-claim1"}
	if diff := cmp.Diff(wantTags, req.CloudTags); diff != "" {
		t.Errorf("cloud tags (-want +got):\n%s", diff)
	}
	if req.Size != (zones.Allocation{Units: 2, Unit: zones.GiB}) || req.Zones != nil || req.SelectedNode != nil || req.Class.Name != "gold" {
		t.Errorf("request = size %v zones %v node %v class %s", req.Size, req.Zones, req.SelectedNode, req.Class.Name)
	}
	if got := reasons(e.events()); !slices.Equal(got, []string{ReasonProvisioningSucceeded}) {
		t.Errorf("events = %v, want [ProvisioningSucceeded]", got)
	}
	// Annotate the claim, create the volume, then three bind writes (the
	// claimRef is there already).
	if got := e.writes(); got != 5 {
		t.Errorf("writes = %d (%v), want 5", got, e.srv.Stats().Writes)
	}
}

// TestProvisionBackoff: a failing Provisioner gets a ProvisioningFailed
// event per failure, is not called again before the backoff has passed,
// and its later success binds the claim.
// TestProvisionedVolumeBindsUnderPreboundRules: a volume provisioned for a
// claim with a selector (which provisioning ignores, as Kubernetes' PV
// controller does) is pre-bound to the claim at creation and binds under
// the pre-bound rules, not rolled back for the selector it cannot match.
func TestProvisionedVolumeBindsUnderPreboundRules(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}
	e, b := provEnv(t, p, goldClaim("claim1", "1Gi", pvcSelector(sel)))
	e.run(b)
	e.settle(b)
	claim := e.claim("claim1")
	if claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName != "pvc-uid-claim1" {
		t.Fatalf("claim %s to %q; want Bound to pvc-uid-claim1", claim.Status.Phase, claim.Spec.VolumeName)
	}
	if pv := e.volume("pvc-uid-claim1"); pv.Status.Phase != v1.VolumeBound {
		t.Errorf("volume %s, want Bound", pv.Status.Phase)
	}
}

// TestProvisionedVolumeThatDoesNotFit: in-tree provisioning does not copy
// the claim's VolumeAttributesClass, so the volume provisioned for such a
// claim never binds to it (Kubernetes alike): the Binder provisions once,
// leaves the volume pre-bound to the claim (no other claim takes it) and
// does not resync the claim in a loop; the Binder comes to rest.
func TestProvisionedVolumeThatDoesNotFit(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	vac := func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = ptr.To("fast") }
	e, b := provEnv(t, p, goldClaim("claim1", "1Gi", vac), goldClaim("claim2", "1Gi"))
	e.run(b)
	e.settle(b)
	e.stepPastBackoff(time.Minute)
	e.settle(b)
	if got := p.callList(); len(got) != 2 {
		t.Errorf("Provision calls %v, want one per claim", got)
	}
	if c := e.claim("claim1"); c.Status.Phase != v1.ClaimPending || c.Spec.VolumeName != "" {
		t.Errorf("claim1 %s to %q, want Pending to none", c.Status.Phase, c.Spec.VolumeName)
	}
	pv := e.volume("pvc-uid-claim1")
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != "claim1" || ref.UID != "uid-claim1" {
		t.Errorf("pvc-uid-claim1 claimRef %v, want claim1's", ref)
	}
	if c := e.claim("claim2"); c.Spec.VolumeName != "pvc-uid-claim2" {
		t.Errorf("claim2 bound to %q, want its own pvc-uid-claim2", c.Spec.VolumeName)
	}
}

func TestProvisionBackoff(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	p.fail = 2
	e, b := provEnv(t, p, goldClaim("claim1", "1Gi"))
	e.syncClaimAndWait(b, "claim1")
	for range 10 {
		e.syncClaimAndWait(b, "claim1")
	}
	if got := len(p.callList()); got != 1 {
		t.Fatalf("Provision calls during the backoff = %d, want 1", got)
	}
	e.stepPastBackoff(500 * time.Millisecond)
	e.syncClaimAndWait(b, "claim1")
	e.stepPastBackoff(time.Second)
	e.syncClaimAndWait(b, "claim1")
	if got := len(p.callList()); got != 3 || !e.exists("pvc-uid-claim1") {
		t.Fatalf("Provision calls = %d, volume exists = %v; want 3 and the volume", got, e.exists("pvc-uid-claim1"))
	}
	e.syncClaimAndWait(b, "claim1")
	if got := e.claim("claim1"); got.Status.Phase != v1.ClaimBound {
		t.Errorf("claim = %s, want Bound", got.Status.Phase)
	}
	events := e.events()
	want := []string{ReasonProvisioningFailed, ReasonProvisioningFailed, ReasonProvisioningSucceeded}
	if got := reasons(events); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	if !eventWith(events, ReasonProvisioningFailed, `Failed to provision volume with StorageClass "gold": `+errPlugin.Error()) {
		t.Errorf("events = %v, want Kubernetes' failure message", events)
	}
}

// TestProvisionNeverTwice: syncs fired while the Provisioner runs start no
// second Provision, nor do the syncs after it.
func TestProvisionNeverTwice(t *testing.T) {
	t.Parallel()
	e, b, p := heldProvision(t)
	for range 50 {
		if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
			t.Fatal(err)
		}
	}
	close(p.gate)
	e.waitOps(b)
	for range 10 {
		e.syncClaimAndWait(b, "claim1")
	}
	if got := p.callList(); len(got) != 1 {
		t.Errorf("Provision calls = %v, want 1", got)
	}
	if got := e.claim("claim1"); got.Spec.VolumeName != "pvc-uid-claim1" || got.Status.Phase != v1.ClaimBound {
		t.Errorf("claim = %s to %q, want Bound to pvc-uid-claim1", got.Status.Phase, got.Spec.VolumeName)
	}
}

// TestProvisionRestart: a volume created by an earlier run (or by a racing
// writer) is found by its deterministic name and never provisioned again;
// a volume of that name bound to another claim is refused.
func TestProvisionRestart(t *testing.T) {
	t.Parallel()
	ours := newPV("pvc-uid-claim1", "1Gi", pvClass("gold"), boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController),
		func(pv *v1.PersistentVolume) { pv.Status.Phase = v1.VolumePending })
	foreign := newPV("pvc-uid-claim1", "1Gi", pvClass("gold"), boundTo("other", "uid-other"))

	t.Run("volume created, claim not updated", func(t *testing.T) {
		t.Parallel()
		p := newPlugin()
		e := newEnv(t, provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim1", "1Gi"), ours)
		// A new Binder whose volume informer has not delivered the volume
		// yet: it knows only claims and classes.
		b, err := New(e.srv, Config{Clock: e.fc, Provisioning: &ProvisioningConfig{Provisioners: map[string]Provisioner{diskProvisioner: p}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.srv.AddEventHandler(bindertest.KindStorageClass, b.ClassHandler()))
		t.Cleanup(e.srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler()))
		e.syncClaimAndWait(b, "claim1")
		e.syncClaimAndWait(b, "claim1")
		if got := p.callList(); len(got) != 0 {
			t.Errorf("Provision calls = %v, want none", got)
		}
		if got := e.claim("claim1"); got.Spec.VolumeName != "pvc-uid-claim1" || got.Status.Phase != v1.ClaimBound {
			t.Errorf("claim = %s to %q, want Bound to the existing volume", got.Status.Phase, got.Spec.VolumeName)
		}
	})
	t.Run("created concurrently: AlreadyExists is ours", func(t *testing.T) {
		t.Parallel()
		p := newPlugin()
		var e *env
		p.onProvision = func(ctx context.Context, req *ProvisionRequest) {
			if _, err := e.srv.CreateVolume(ctx, ours.DeepCopy()); err != nil {
				t.Error(err)
			}
		}
		e, b := provEnv(t, p, goldClaim("claim1", "1Gi"))
		e.syncClaimAndWait(b, "claim1")
		e.syncClaimAndWait(b, "claim1")
		if got := e.claim("claim1"); got.Spec.VolumeName != "pvc-uid-claim1" || got.Status.Phase != v1.ClaimBound {
			t.Errorf("claim = %s to %q, want Bound", got.Status.Phase, got.Spec.VolumeName)
		}
		if got := reasons(e.events()); !slices.Equal(got, []string{ReasonProvisioningSucceeded}) {
			t.Errorf("events = %v", got)
		}
	})
	t.Run("name taken by a volume of another claim", func(t *testing.T) {
		t.Parallel()
		p := newPlugin()
		e, b := provEnv(t, p, goldClaim("claim1", "1Gi"), foreign)
		e.syncClaimAndWait(b, "claim1")
		if got := p.callList(); len(got) != 0 {
			t.Errorf("Provision calls = %v, want none", got)
		}
		if ev := e.events(); !eventWith(ev, ReasonProvisioningFailed, `volume "pvc-uid-claim1" already exists and is not bound to claim default/claim1`) {
			t.Errorf("events = %v", ev)
		}
	})
}

// TestProvisionCreateFails: when the volume object cannot be created, the
// storage is deleted again (the Provisioner is its own Deleter) and the
// claim gets ProvisioningFailed.
func TestProvisionCreateFails(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	e, b := provEnv(t, p, goldClaim("claim1", "1Gi"))
	e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbCreate, Kind: bindertest.KindVolume, Err: errPlugin})
	if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
		t.Fatal(err)
	}
	// Two create attempts a second apart, then two deletes a second apart.
	for len(p.callList()) < 2 {
		if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true,
			func(context.Context) (bool, error) { return e.fc.HasWaiters() || len(p.callList()) >= 2, nil }); err != nil {
			t.Fatal(err)
		}
		e.fc.Step(time.Second)
	}
	e.waitOps(b)
	want := []string{"provision pvc-uid-claim1", "delete pvc-uid-claim1"}
	if got := p.callList(); !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	if ev := e.events(); !eventWith(ev, ReasonProvisioningFailed, "Error creating provisioned PV object for claim default/claim1") {
		t.Errorf("events = %v", ev)
	}
}

// TestProvisionWithoutInternalProvisioner: external provisioners get the
// claim annotated and an ExternalProvisioning event; a missing class or an
// unknown in-tree provisioner get ProvisioningFailed; disabled
// provisioning does nothing.
func TestProvisionWithoutInternalProvisioner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		class      string
		disabled   bool
		wantEvent  string
		wantText   string
		wantWrites int64
	}{
		{name: "external provisioner", class: "external", wantEvent: ReasonExternalProvisioning,
			wantText: "Waiting for a volume to be created either by the external provisioner 'example.com/external'", wantWrites: 1},
		{name: "missing class", class: "none", wantEvent: ReasonProvisioningFailed, wantText: `storageclass.storage.k8s.io "none" not found`},
		{name: "unregistered in-tree provisioner", class: "intree", wantEvent: ReasonProvisioningFailed, wantText: "no volume plugin matched name: kubernetes.io/rbd"},
		{name: "provisioning disabled", class: "external", disabled: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, b := provEnv(t, newPlugin(), newPVC("claim1", "1Gi", pvcClass(ptr.To(tc.class))))
			if tc.disabled {
				b = e.newBinder(Config{})
			}
			for range 3 {
				e.syncClaimAndWait(b, "claim1")
			}
			events := e.events()
			if tc.wantEvent == "" && len(events) != 0 || tc.wantEvent != "" && !eventWith(events, tc.wantEvent, tc.wantText) {
				t.Errorf("events = %v, want %s %q", events, tc.wantEvent, tc.wantText)
			}
			if got := e.writes(); got != tc.wantWrites {
				t.Errorf("writes = %d (%v), want %d", got, e.srv.Stats().Writes, tc.wantWrites)
			}
			claim := e.claim("claim1")
			annotated := claim.Annotations[volume.AnnStorageProvisioner] == "example.com/external" &&
				claim.Annotations[volume.AnnBetaStorageProvisioner] == "example.com/external"
			if annotated != (tc.wantWrites == 1) || len(e.srv.Volumes()) != 0 {
				t.Errorf("claim annotations = %v, volumes = %d", claim.Annotations, len(e.srv.Volumes()))
			}
		})
	}
}

// TestProvisionDefaultClass: a claim without class gets the default class
// (which the in-memory API accepts, as kube-apiserver does) and is then
// provisioned by its provisioner.
func TestProvisionDefaultClass(t *testing.T) {
	t.Parallel()
	def := provClass("default", diskProvisioner, storagev1.VolumeBindingImmediate)
	def.Annotations = map[string]string{annDefaultClass: "true"}
	p := newPlugin()
	e, b := provEnv(t, p, def, newPVC("claim1", "1Gi", pvcClass(nil)))
	e.run(b)
	e.settle(b)
	claim := e.claim("claim1")
	if ptr.Deref(claim.Spec.StorageClassName, "") != "default" || claim.Status.Phase != v1.ClaimBound {
		t.Errorf("claim = class %v, %s; want the default class and Bound", claim.Spec.StorageClassName, claim.Status.Phase)
	}
	if got := len(p.callList()); got != 1 {
		t.Errorf("Provision calls = %d, want 1", got)
	}
}

// TestProvisionWaitForFirstConsumer: a delayed claim is neither bound nor
// provisioned until the scheduler selects a node; then it is provisioned
// in that node's zone and labelled with it.
func TestProvisionWaitForFirstConsumer(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	e, b := provEnv(t, zonal{p}, zoneNode("node-a", "zone-a"), zoneNode("node-b", "zone-b"),
		newPV("pv-free", "10Gi", pvClass("wffc")), newPVC("claim1", "1Gi", pvcClass(ptr.To("wffc"))))
	e.run(b)
	e.settle(b)
	if got := e.claim("claim1"); got.Spec.VolumeName != "" || len(p.callList()) != 0 {
		t.Fatalf("claim bound to %q with %d Provision calls before a node was selected", got.Spec.VolumeName, len(p.callList()))
	}
	if got := reasons(e.events()); !slices.Contains(got, ReasonWaitForFirstConsumer) {
		t.Errorf("events = %v, want WaitForFirstConsumer", got)
	}

	claim := e.claim("claim1")
	claim.Annotations = map[string]string{volume.AnnSelectedNode: "node-b"}
	if _, err := e.srv.UpdateClaim(e.ctx, claim); err != nil {
		t.Fatal(err)
	}
	e.settle(b)
	pv := e.volume("pvc-uid-claim1")
	if got := e.claim("claim1"); got.Spec.VolumeName != pv.Name || got.Status.Phase != v1.ClaimBound {
		t.Fatalf("claim = %s to %q, want Bound to %s", got.Status.Phase, got.Spec.VolumeName, pv.Name)
	}
	if got := pv.Labels[zones.ZoneLabel]; got != "zone-b" {
		t.Errorf("zone label = %q, want zone-b", got)
	}
	if ok, err := zones.Matches(pv, zoneNode("node-a", "zone-a")); ok || err != nil {
		t.Errorf("volume usable from zone-a = %v, %v; want false", ok, err)
	}
	req := p.requests()[0]
	if req.SelectedNode == nil || req.SelectedNode.Name != "node-b" || !req.Zones.Equal(sets.New("zone-b")) {
		t.Errorf("request: node %v zones %v, want node-b in zone-b", req.SelectedNode, req.Zones)
	}
	if got := e.volume("pv-free"); got.Spec.ClaimRef != nil {
		t.Errorf("the existing volume was bound by the claim sync; that is the scheduler's job")
	}
}

// TestProvisionZones: a ZonalProvisioner's volumes are placed by the
// class's allowedTopologies, else among the zones with nodes.
func TestProvisionZones(t *testing.T) {
	t.Parallel()
	restricted := provClass("restricted", diskProvisioner, storagev1.VolumeBindingImmediate)
	restricted.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
		{Key: zones.ZoneLabel, Values: []string{"zone-c"}},
	}}}
	tests := []struct {
		name  string
		class string
		want  sets.Set[string]
	}{
		{"allowedTopologies", "restricted", sets.New("zone-c")},
		{"zones with nodes", "gold", sets.New("zone-a")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPlugin()
			e, b := provEnv(t, zonal{p}, restricted, zoneNode("node-a", "zone-a"), newPVC("claim1", "1Gi", pvcClass(ptr.To(tc.class))))
			e.syncClaimAndWait(b, "claim1")
			pv := e.volume("pvc-uid-claim1")
			if got, _ := zones.VolumeZones(pv); !got.Equal(tc.want) {
				t.Errorf("volume zones = %v, want %v", sets.List(got), sets.List(tc.want))
			}
		})
	}
}

// TestProvisionFailureReschedules: a failed provisioning of a claim with a
// selected node removes the annotation, so that the scheduler chooses
// again; a selected node that does not exist fails with Kubernetes'
// message.
func TestProvisionFailureReschedules(t *testing.T) {
	t.Parallel()
	t.Run("provisioner fails", func(t *testing.T) {
		t.Parallel()
		p := newPlugin()
		p.fail = 1
		e, b := provEnv(t, p, zoneNode("node-a", "zone-a"),
			newPVC("claim1", "1Gi", pvcClass(ptr.To("wffc")), pvcAnnValue(volume.AnnSelectedNode, "node-a")))
		e.syncClaimAndWait(b, "claim1")
		if got := e.claim("claim1").Annotations; got[volume.AnnSelectedNode] != "" {
			t.Errorf("claim annotations = %v, want the selected node removed", got)
		}
	})
	t.Run("node missing", func(t *testing.T) {
		t.Parallel()
		p := newPlugin()
		e, b := provEnv(t, p, newPVC("claim1", "1Gi", pvcClass(ptr.To("wffc")), pvcAnnValue(volume.AnnSelectedNode, "node-x")))
		e.syncClaimAndWait(b, "claim1")
		if ev := e.events(); !eventWith(ev, ReasonProvisioningFailed, "Failed to get target node: ") || len(p.callList()) != 0 {
			t.Errorf("events = %v, calls = %v", ev, p.callList())
		}
	})
}

// TestProvisioningClaimWaits: while its storage is being provisioned, a
// claim binds no other volume, even one a user pre-binds to it by name
// meanwhile (Kubernetes would bind that one and unbind the provisioned
// volume, leaving a Retain class's storage behind as an Available volume
// nobody asked for). The provisioned volume is the claim's once saved; the
// pre-bound one stays Available, pre-bound by name.
func TestProvisioningClaimWaits(t *testing.T) {
	t.Parallel()
	e, b, p := heldProvision(t)
	if _, err := e.srv.CreateVolume(e.ctx, newPV("pv0", "1Gi", boundTo("claim1", ""), pvClass("gold"))); err != nil {
		t.Fatal(err)
	}
	if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
		t.Fatal(err)
	}
	if got := e.claim("claim1"); got.Spec.VolumeName != "" {
		t.Fatalf("claim1 took %q while its volume was being provisioned", got.Spec.VolumeName)
	}
	close(p.gate)
	e.waitOps(b)
	e.syncClaimAndWait(b, "claim1")
	if got := e.claim("claim1"); got.Spec.VolumeName != "pvc-uid-claim1" || got.Status.Phase != v1.ClaimBound {
		t.Errorf("claim1 is %s with volume %q, want Bound to pvc-uid-claim1", got.Status.Phase, got.Spec.VolumeName)
	}
	if err := b.SyncVolume(e.ctx, "pv0"); err != nil {
		t.Fatal(err)
	}
	if pv := e.volume("pv0"); pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != "" || pv.Status.Phase != v1.VolumeAvailable {
		t.Errorf("pv0 is %s with claimRef %v, want Available, pre-bound to claim1 by name", pv.Status.Phase, pv.Spec.ClaimRef)
	}
	if got := p.callList(); len(got) != 1 {
		t.Errorf("Provision calls = %v, want 1", got)
	}
}

// heldProvision returns a Binder whose Provisioner is held (close p.gate to
// let it go) in the Provision call for claim1, which its first sync started.
func heldProvision(t *testing.T) (*env, *Binder, *plugin) {
	t.Helper()
	p := newPlugin()
	p.gate = make(chan struct{})
	e, b := provEnv(t, p, goldClaim("claim1", "1Gi"))
	if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
		t.Fatal(err)
	}
	e.waitStarted(p, 1)
	return e, b, p
}

// TestFailedProvisioningSearchesAgain: a claim whose syncs waited for its
// provisioning searches again as soon as the operation fails, and binds a
// volume that became Available meanwhile, without waiting for its resync
// (the clock is never stepped).
func TestFailedProvisioningSearchesAgain(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	p.fail, p.gate = 1, make(chan struct{})
	e, b := provEnv(t, p, goldClaim("claim1", "1Gi"))
	e.run(b)
	e.waitStarted(p, 1)
	if _, err := e.srv.CreateVolume(e.ctx, newPV("pv0", "1Gi", pvClass("gold"))); err != nil {
		t.Fatal(err)
	}
	// Available for the Binder: in its index, which the claim's sync
	// searches. The API has the version a moment before (the answer to
	// the Binder's write is still on its way): a sync in that moment
	// finds no candidate, as Kubernetes' would, and waits for its resync.
	if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) {
			pv, ok := b.store.index.Get("pv0")
			return ok && pv.Status.Phase == v1.VolumeAvailable, nil
		}); err != nil {
		t.Fatalf("pv0 never became Available in the Binder's index: %v", err)
	}
	close(p.gate)
	e.quiesce(b)
	if got := e.claim("claim1"); got.Spec.VolumeName != "pv0" || got.Status.Phase != v1.ClaimBound {
		t.Errorf("claim1 is %s with volume %q, want Bound to pv0 once its provisioning failed", got.Status.Phase, got.Spec.VolumeName)
	}
}
