package binder

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
)

// The cases of this file are the ones of Kubernetes v1.37.2's
// pkg/controller/volume/persistentvolume tests (IDs "8-13", "6-11", ...)
// about finalizers, volumes being deleted, CSI volumes, pods using a
// released claim and CSI migration, plus the cases that map Kubernetes'
// in-tree plugins to the Binder's registered ones. Each asserts the
// objects, phases, messages, finalizers, annotations and exact events
// (type, reason and message) Kubernetes produces.

// Kubernetes' names in its tests.
const (
	gceDriver    = "pd.csi.storage.gke.io"
	gcePlugin    = "kubernetes.io/gce-pd"
	mockPlugin   = "kubernetes.io/mock-volume"
	mockCSIDrv   = "vendor.com/MockCSIDriver"
	csiDriver    = "csi.example.com"
	externalProv = "example.com/external"
)

// Recycle makes the fake plugin a VolumeRecycler.
func (p *plugin) Recycle(ctx context.Context, pv *v1.PersistentVolume) error {
	return p.call(ctx, "recycle "+pv.Name)
}

// factory is a DeleterFactory whose NewDeleter fails with err, or returns
// its plugin.
type factory struct {
	*plugin
	err error
}

var _ DeleterFactory = factory{}

func (f factory) NewDeleter(context.Context, *v1.PersistentVolume) (Deleter, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.plugin, nil
}

// noMountOptions is a Provisioner that declares no mount-option support.
type noMountOptions struct{ *plugin }

var _ MountOptionsSupport = noMountOptions{}

func (noMountOptions) SupportsMountOption() bool { return false }

// allMigrated is Kubernetes' fakeCSIMigratedPluginManager with its
// fakeCSINameTranslator: every name is migrated, to vendor.com/MockCSIDriver.
type allMigrated struct{}

func (allMigrated) IsMigrationEnabledForPlugin(string) bool { return true }
func (allMigrated) GetCSINameFromInTreeName(string) (string, error) {
	return mockCSIDrv, nil
}

// serverPods is the ClaimPods of a bindertest.Server's pods.
type serverPods struct{ srv *bindertest.Server }

func (p serverPods) PodsUsingClaim(namespace, name string) ([]*v1.Pod, error) {
	var out []*v1.Pod
	for _, pod := range p.srv.Pods() {
		keys, _ := PodClaimKeys(pod)
		if slices.Contains(keys, namespace+"/"+name) {
			out = append(out, pod)
		}
	}
	return out, nil
}

// podUsing is a pod of node "node1" (none when node is "") in the given
// phase whose volume uses the claim.
func podUsing(name, claim, node string, phase v1.PodPhase) *v1.Pod {
	pod := &v1.Pod{}
	pod.Name, pod.Namespace, pod.UID = name, ns, types.UID("uid-"+name)
	pod.Spec.NodeName = node
	pod.Spec.Containers = []v1.Container{{Name: "c", Image: "busybox"}}
	pod.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	pod.Status.Phase = phase
	return pod
}

func csiSource(driver string) pvOpt {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "handle-" + pv.Name}
	}
}

// unusedPV is an Available volume without claim, with a host path.
func unusedPV(name string, policy v1.PersistentVolumeReclaimPolicy, opts ...pvOpt) *v1.PersistentVolume {
	return newPV(name, "1Gi", append([]pvOpt{pvPolicy(policy), hostPath}, opts...)...)
}

// volWant is what a case expects of a volume; nil in kcmCase.wantVolumes
// means the volume must be gone.
type volWant struct {
	phase      v1.PersistentVolumePhase
	message    string
	finalizers []string
	// migratedTo is the wanted pv.kubernetes.io/migrated-to ("" = none).
	migratedTo string
}

// kcmCase is one Kubernetes test case: seed, configure, one sync (and the
// operation it starts), then the objects, events, writes and plugin calls.
type kcmCase struct {
	name string
	objs []runtime.Object
	// cfg configures the Binder; p is the fake plugin of the case.
	cfg func(e *env, p *plugin) Config
	// prepare runs after the Binder is created, before the sync.
	prepare func(t *testing.T, e *env)
	// sync is "claim/<name>" or "volume/<name>".
	sync        string
	wantVolumes map[string]*volWant
	// wantClaimAnn are annotations of claims that must be exactly these
	// (key absent in the claim when the value is "").
	wantClaimAnn map[string]map[string]string
	// wantEvents are the exact events, "Type Reason Message".
	wantEvents []string
	wantWrites int64
	wantCalls  []string
	// stepClock steps the fake clock until the operations end, for
	// operations that wait between attempts.
	stepClock bool
}

func runKCMCases(t *testing.T, cases []kcmCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.objs...)
			p := newPlugin()
			cfg := tc.cfg(e, p)
			if cfg.OperationMarkTTL == 0 {
				// Kubernetes writes no operation mark (it relies on
				// leader election alone): compare its writes exactly.
				cfg.OperationMarkTTL = -1
			}
			b := e.newBinder(cfg)
			if tc.prepare != nil {
				tc.prepare(t, e)
			}
			e.srv.ResetStats()
			kind, name, _ := strings.Cut(tc.sync, "/")
			var err error
			if kind == "claim" {
				err = b.SyncClaim(e.ctx, ns+"/"+name)
			} else {
				err = b.SyncVolume(e.ctx, name)
			}
			if err != nil {
				t.Fatalf("sync %s: %v", tc.sync, err)
			}
			if tc.stepClock {
				e.driveOps(b)
			} else if err := b.WaitForOperations(e.ctx); err != nil {
				t.Fatalf("WaitForOperations: %v", err)
			}
			for vname, want := range tc.wantVolumes {
				checkVolume(t, e, vname, want)
			}
			for cname, want := range tc.wantClaimAnn {
				got := e.claim(cname).Annotations
				for k, v := range want {
					if gv, ok := got[k]; gv != v || ok != (v != "") {
						t.Errorf("claim %s annotation %s = %q (present %v), want %q", cname, k, gv, ok, v)
					}
				}
			}
			if diff := cmp.Diff(tc.wantEvents, e.events(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := e.writes(); got != tc.wantWrites {
				t.Errorf("writes = %d (%v), want %d", got, e.srv.Stats().Writes, tc.wantWrites)
			}
			if diff := cmp.Diff(tc.wantCalls, p.callList(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("plugin calls (-want +got):\n%s", diff)
			}
		})
	}
}

func checkVolume(t *testing.T, e *env, name string, want *volWant) {
	t.Helper()
	pv, err := e.srv.GetVolume(e.ctx, name)
	if want == nil {
		if err == nil {
			t.Errorf("volume %s exists (%s, finalizers %v), want it gone", name, pv.Status.Phase, pv.Finalizers)
		}
		return
	}
	if err != nil {
		t.Fatalf("GetVolume(%s): %v", name, err)
	}
	if pv.Status.Phase != want.phase || pv.Status.Message != want.message {
		t.Errorf("volume %s = %s %q, want %s %q", name, pv.Status.Phase, pv.Status.Message, want.phase, want.message)
	}
	if !cmp.Equal(pv.Finalizers, want.finalizers, cmpopts.EquateEmpty()) {
		t.Errorf("volume %s finalizers = %v, want %v", name, pv.Finalizers, want.finalizers)
	}
	if got := pv.Annotations[volume.AnnMigratedTo]; got != want.migratedTo {
		t.Errorf("volume %s migrated-to = %q, want %q", name, got, want.migratedTo)
	}
}

// reclaimWith is a Config with Reclaim and the fake plugin registered as
// Deleter under the names.
func reclaimWith(names ...string) func(*env, *plugin) Config {
	return func(_ *env, p *plugin) Config {
		r := &ReclaimConfig{Deleters: map[string]Deleter{}, Recycler: p}
		for _, n := range names {
			r.Deleters[n] = p
		}
		return Config{Reclaim: r}
	}
}

// TestKubernetesFinalizers: the volume sync keeps kubernetes.io/pv-controller
// on dynamically provisioned volumes as Kubernetes' modifyDeletionFinalizers
// (5-9 and its rules), also on volumes the Binder did not provision.
func TestKubernetesFinalizers(t *testing.T) {
	t.Parallel()
	pvc := FinalizerPVController
	ext := volume.PVDeletionProtectionFinalizer
	runKCMCases(t, []kcmCase{{
		name: "5-9 migration disabled: external finalizer and migrated-to removed, in-tree finalizer added",
		objs: objs(unusedPV("volume-5-9", v1.PersistentVolumeReclaimDelete, provisionedBy(mockPlugin),
			func(pv *v1.PersistentVolume) { metav1SetAnn(pv, volume.AnnMigratedTo, gceDriver) }, pvFinalizers(ext))),
		cfg: func(e *env, p *plugin) Config {
			c := reclaimWith()(e, p)
			c.CSIMigration = NoCSIMigration{}
			return c
		},
		sync:        "volume/volume-5-9",
		wantVolumes: map[string]*volWant{"volume-5-9": {phase: v1.VolumeAvailable, finalizers: []string{pvc}}},
		wantWrites:  1,
	},
		pv1Case("in-tree provisioned Delete volume without the finalizer (upgrade): added", reclaimWith(), 1,
			&volWant{finalizers: []string{pvc}}, v1.PersistentVolumeReclaimDelete, provisionedBy(mockPlugin)),
		pv1Case("volume of a registered Deleter's provisioner: added", reclaimWith(diskProvisioner), 1,
			&volWant{finalizers: []string{"example.com/keep", pvc}}, v1.PersistentVolumeReclaimDelete, provisionedBy(diskProvisioner), pvFinalizers("example.com/keep")),
		pv1Case("policy changed to Retain: removed", reclaimWith(), 1,
			&volWant{}, v1.PersistentVolumeReclaimRetain, provisionedBy(mockPlugin), pvFinalizers(pvc)),
		pv1Case("policy changed to Recycle: removed", reclaimWith(), 1,
			&volWant{}, v1.PersistentVolumeReclaimRecycle, provisionedBy(mockPlugin), pvFinalizers(pvc)),
		pv1Case("Delete volume with the finalizer: no write", reclaimWith(), 0,
			&volWant{finalizers: []string{pvc}}, v1.PersistentVolumeReclaimDelete, provisionedBy(mockPlugin), pvFinalizers(pvc)),
		pv1Case("migrated plugin: in-tree finalizer removed, migrated-to set, one write", reclaimWith(), 1,
			&volWant{migratedTo: gceDriver}, v1.PersistentVolumeReclaimDelete, provisionedBy(gcePlugin), pvFinalizers(pvc)),
		pv1Case("external provisioner: its finalizer is left alone", reclaimWith(), 0,
			&volWant{finalizers: []string{ext}}, v1.PersistentVolumeReclaimDelete, provisionedBy(externalProv), pvFinalizers(ext)),
		pv1Case("statically provisioned volume: never finalized", reclaimWith("kubernetes.io/host-path"), 0,
			&volWant{}, v1.PersistentVolumeReclaimDelete),
		pv1Case("reclaim disabled: the Binder deletes nothing and keeps no finalizer", func(*env, *plugin) Config { return Config{} }, 0,
			&volWant{}, v1.PersistentVolumeReclaimDelete, provisionedBy(mockPlugin)),
	})
}

// pv1Case is a kcmCase that seeds the unused volume pv1 with the policy
// and options, syncs it once with cfg, and wants it Available as want
// says (its phase is set here) after writes writes.
func pv1Case(name string, cfg func(*env, *plugin) Config, writes int64, want *volWant, policy v1.PersistentVolumeReclaimPolicy, opts ...pvOpt) kcmCase {
	want.phase = v1.VolumeAvailable
	return kcmCase{
		name: name, objs: objs(unusedPV("pv1", policy, opts...)), cfg: cfg, sync: "volume/pv1",
		wantVolumes: map[string]*volWant{"pv1": want}, wantWrites: writes,
	}
}

// deleteNow sets the volume's deletionTimestamp: it has a finalizer, so
// the API server keeps it.
func deleteNow(name string) func(*testing.T, *env) {
	return func(t *testing.T, e *env) {
		t.Helper()
		if err := e.srv.DeleteVolume(e.ctx, name); err != nil {
			t.Fatalf("DeleteVolume(%s): %v", name, err)
		}
		if pv := e.volume(name); pv.DeletionTimestamp == nil {
			t.Fatalf("volume %s has no deletionTimestamp after DeleteVolume", name)
		}
	}
}

// TestKubernetesDelete: the Delete policy's cases of Kubernetes'
// delete_test.go about finalizers, volumes being deleted, CSI and
// external deleters, and its failure texts.
func TestKubernetesDelete(t *testing.T) {
	t.Parallel()
	failedText := func(msg string) []string { return []string{"Warning VolumeFailedDelete " + msg} }
	runKCMCases(t, []kcmCase{{
		name: "8-13 volume with deletion timestamp: storage deleted, finalizer removed, gone",
		objs: objs(releasedPV("volume8-13", v1.PersistentVolumeReclaimDelete, hostPath, provisionedBy(mockPlugin), pvFinalizers(FinalizerPVController))),
		cfg:  reclaimWith(mockPlugin), prepare: deleteNow("volume8-13"),
		sync:        "volume/volume8-13",
		wantVolumes: map[string]*volWant{"volume8-13": nil},
		wantWrites:  3, // Released; finalizer removed (the API server then deletes it); the delete request
		wantCalls:   []string{"delete volume8-13"},
	}, {
		name:        "8-1 provisioned volume: finalizer removed after the storage, then deleted",
		objs:        objs(releasedPV("volume8-1", v1.PersistentVolumeReclaimDelete, hostPath, provisionedBy(mockPlugin), pvFinalizers(FinalizerPVController))),
		cfg:         reclaimWith(mockPlugin),
		sync:        "volume/volume8-1",
		wantVolumes: map[string]*volWant{"volume8-1": nil},
		wantWrites:  3,
		wantCalls:   []string{"delete volume8-1"},
	}, {
		name:        "8-10-2 static CSI volume: Released for the external provisioner, no event",
		objs:        objs(releasedPV("volume8-10-2", v1.PersistentVolumeReclaimDelete, csiSource(gceDriver))),
		cfg:         reclaimWith("kubernetes.io/host-path"),
		sync:        "volume/volume8-10-2",
		wantVolumes: map[string]*volWant{"volume8-10-2": {phase: v1.VolumeReleased}},
		wantWrites:  1,
	}, {
		name:        "static CSI volume of a driver with a Deleter: deleted",
		objs:        objs(releasedPV("pv1", v1.PersistentVolumeReclaimDelete, csiSource(csiDriver))),
		cfg:         reclaimWith(csiDriver),
		sync:        "volume/pv1",
		wantVolumes: map[string]*volWant{"pv1": nil},
		wantWrites:  2,
		wantCalls:   []string{"delete pv1"},
	}, {
		name:        "8-10-1 external provisioner: Released, no event",
		objs:        objs(releasedPV("volume8-10-1", v1.PersistentVolumeReclaimDelete, csiSource(gceDriver), provisionedBy("external.io/test"))),
		cfg:         reclaimWith(),
		sync:        "volume/volume8-10-1",
		wantVolumes: map[string]*volWant{"volume8-10-1": {phase: v1.VolumeReleased}},
		wantWrites:  1,
	}, {
		name: "8-10-3 migrated volume: Released for the CSI driver, no event",
		objs: objs(releasedPV("volume8-10-3", v1.PersistentVolumeReclaimDelete, hostPath, provisionedBy(gcePlugin),
			func(pv *v1.PersistentVolume) { metav1SetAnn(pv, volume.AnnMigratedTo, gceDriver) })),
		cfg:         reclaimWith(gcePlugin),
		sync:        "volume/volume8-10-3",
		wantVolumes: map[string]*volWant{"volume8-10-3": {phase: v1.VolumeReleased, migratedTo: gceDriver}},
		wantWrites:  1,
	}, {
		name:        "8-3 no plugin: Failed with Kubernetes' text",
		objs:        objs(releasedPV("volume8-3", v1.PersistentVolumeReclaimDelete, hostPath)),
		cfg:         reclaimWith(),
		sync:        "volume/volume8-3",
		wantVolumes: map[string]*volWant{"volume8-3": {phase: v1.VolumeFailed, message: `error getting deleter volume plugin for volume "volume8-3": no volume plugin matched`}},
		wantEvents:  failedText(`error getting deleter volume plugin for volume "volume8-3": no volume plugin matched`),
		wantWrites:  2,
	}, {
		name: "8-4 NewDeleter fails: Failed",
		objs: objs(releasedPV("volume8-4", v1.PersistentVolumeReclaimDelete, hostPath)),
		cfg: func(_ *env, p *plugin) Config {
			return Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{
				"kubernetes.io/host-path": factory{p, errors.New("Mock plugin error: no deleteCalls configured")}}}}
		},
		sync:        "volume/volume8-4",
		wantVolumes: map[string]*volWant{"volume8-4": {phase: v1.VolumeFailed, message: `failed to create deleter for volume "volume8-4": Mock plugin error: no deleteCalls configured`}},
		wantEvents:  failedText(`failed to create deleter for volume "volume8-4": Mock plugin error: no deleteCalls configured`),
		wantWrites:  2,
	}, {
		name: "NewDeleter succeeds: its Deleter deletes",
		objs: objs(releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath)),
		cfg: func(_ *env, p *plugin) Config {
			return Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{"kubernetes.io/host-path": factory{plugin: p}}}}
		},
		sync:        "volume/pv1",
		wantVolumes: map[string]*volWant{"pv1": nil},
		wantWrites:  2,
		wantCalls:   []string{"delete pv1"},
	}, {
		name:        "unregistered in-tree provisioner: Failed, finalizer kept",
		objs:        objs(releasedPV("pv1", v1.PersistentVolumeReclaimDelete, hostPath, provisionedBy(mockPlugin), pvFinalizers(FinalizerPVController))),
		cfg:         reclaimWith(),
		sync:        "volume/pv1",
		wantVolumes: map[string]*volWant{"pv1": {phase: v1.VolumeFailed, message: "no volume plugin matched name: " + mockPlugin, finalizers: []string{FinalizerPVController}}},
		wantEvents:  failedText("no volume plugin matched name: " + mockPlugin),
		wantWrites:  2,
	}})
}

// TestKubernetesRecycleUsedByPods: recycle_test.go's 6-11 to 6-14: a
// released volume is not scrubbed while pods that have not terminated use
// its deleted claim.
func TestKubernetesRecycleUsedByPods(t *testing.T) {
	t.Parallel()
	withPods := func(e *env, p *plugin) Config {
		return Config{Reclaim: &ReclaimConfig{Recycler: p}, Pods: serverPods{e.srv}}
	}
	recycled := &volWant{phase: v1.VolumeAvailable}
	runKCMCases(t, []kcmCase{{
		name:        "6-11 used by running pod: Normal VolumeFailedRecycle, stays Released",
		objs:        objs(releasedPV("volume6-11", v1.PersistentVolumeReclaimRecycle, hostPath, boundTo("running-claim", "uid6-11")), podUsing("running-pod", "running-claim", "node1", v1.PodRunning)),
		cfg:         withPods,
		sync:        "volume/volume6-11",
		wantVolumes: map[string]*volWant{"volume6-11": {phase: v1.VolumeReleased}},
		wantEvents:  []string{"Normal VolumeFailedRecycle Volume is used by pods: default/running-pod"},
		wantWrites:  1,
	}, {
		name: "6-12 used by pending pods: all named, sorted",
		objs: objs(releasedPV("volume6-12", v1.PersistentVolumeReclaimRecycle, hostPath, boundTo("pending-claim", "uid6-12")),
			podUsing("pending-pod2", "pending-claim", "", v1.PodPending), podUsing("pending-pod", "pending-claim", "", v1.PodPending)),
		cfg:         withPods,
		sync:        "volume/volume6-12",
		wantVolumes: map[string]*volWant{"volume6-12": {phase: v1.VolumeReleased}},
		wantEvents:  []string{"Normal VolumeFailedRecycle Volume is used by pods: default/pending-pod,default/pending-pod2"},
		wantWrites:  1,
	}, {
		name:        "6-13 used by completed pod: recycled",
		objs:        objs(releasedPV("volume6-13", v1.PersistentVolumeReclaimRecycle, hostPath, boundTo("completed-claim", "uid6-13")), podUsing("completed-pod", "completed-claim", "node1", v1.PodSucceeded)),
		cfg:         withPods,
		sync:        "volume/volume6-13",
		wantVolumes: map[string]*volWant{"volume6-13": recycled},
		wantEvents:  []string{"Normal VolumeRecycled Volume recycled"},
		wantWrites:  3, // Released, claimRef removed, Available
		wantCalls:   []string{"recycle volume6-13"},
	}, {
		name: "6-14 seemingly used: the pod uses a new claim of the same name, recycled",
		objs: objs(releasedPV("volume6-14", v1.PersistentVolumeReclaimRecycle, hostPath, boundTo("running-claim", "uid6-14")),
			newPVC("running-claim", "1Gi"), podUsing("running-pod", "running-claim", "node1", v1.PodRunning)),
		cfg:         withPods,
		sync:        "volume/volume6-14",
		wantVolumes: map[string]*volWant{"volume6-14": recycled},
		wantEvents:  []string{"Normal VolumeRecycled Volume recycled"},
		wantWrites:  3,
		wantCalls:   []string{"recycle volume6-14"},
	}, {
		name:        "no pod lister: recycled",
		objs:        objs(releasedPV("pv1", v1.PersistentVolumeReclaimRecycle, hostPath, boundTo("running-claim", "uid-x")), podUsing("running-pod", "running-claim", "node1", v1.PodRunning)),
		cfg:         func(_ *env, p *plugin) Config { return Config{Reclaim: &ReclaimConfig{Recycler: p}} },
		sync:        "volume/pv1",
		wantVolumes: map[string]*volWant{"pv1": recycled},
		wantEvents:  []string{"Normal VolumeRecycled Volume recycled"},
		wantWrites:  3,
		wantCalls:   []string{"recycle pv1"},
	}})
}

// TestDeletedWhileBound: a volume the user deletes while it is bound stays
// Bound and keeps its storage while its claim exists; once the claim is
// deleted it is reclaimed by its policy (storage deleted, finalizer
// removed) and disappears, as in Kubernetes.
func TestDeletedWhileBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		newPV("pv1", "10Gi", csiSource(csiDriver), boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound), pvAnn(volume.AnnBoundByController),
			pvPolicy(v1.PersistentVolumeReclaimDelete), provisionedBy(diskProvisioner), pvFinalizers(FinalizerPVController)),
		newPVC("claim1", "1Gi", pvcBound("pv1")))
	p := newPlugin()
	b := e.newBinder(Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{diskProvisioner: p}}})
	deleteNow("pv1")(t, e)
	e.srv.ResetStats()

	e.syncVolumeAndWait(b, "pv1")
	if pv := e.volume("pv1"); pv.Status.Phase != v1.VolumeBound || !slices.Equal(pv.Finalizers, []string{FinalizerPVController}) {
		t.Fatalf("volume being deleted with its claim = %s, finalizers %v; want Bound with %s", pv.Status.Phase, pv.Finalizers, FinalizerPVController)
	}
	if calls := p.callList(); len(calls) != 0 || e.writes() != 0 {
		t.Fatalf("while bound: deleter calls %v, writes %d; want none", calls, e.writes())
	}

	if err := e.srv.DeleteClaim(e.ctx, ns, "claim1"); err != nil {
		t.Fatal(err)
	}
	e.syncVolumeAndWait(b, "pv1")
	if e.exists("pv1") {
		t.Errorf("volume still exists: %+v", e.volume("pv1").ObjectMeta)
	}
	if calls := p.callList(); !slices.Equal(calls, []string{"delete pv1"}) {
		t.Errorf("deleter calls = %v, want [delete pv1]", calls)
	}
	if ev := e.events(); len(ev) != 0 {
		t.Errorf("events = %v, want none", ev)
	}
}

// TestNoFinalizerOnReleased: the finalizer is not added back to a Released
// or Failed volume (its deletion removed it and is about to delete the
// object) nor to a volume being deleted; it is added to a Bound one.
func TestNoFinalizerOnReleased(t *testing.T) {
	t.Parallel()
	for _, phase := range []v1.PersistentVolumePhase{v1.VolumeReleased, v1.VolumeFailed, v1.VolumeBound, v1.VolumeAvailable} {
		b := &Binder{cfg: Config{Reclaim: &ReclaimConfig{}, CSIMigration: TranslationLibMigration{}}}
		pv := unusedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy(mockPlugin), pvPhase(phase))
		got, changed := b.deletionFinalizers(pv)
		want := phase == v1.VolumeBound || phase == v1.VolumeAvailable
		if changed != want || (want && !slices.Equal(got, []string{FinalizerPVController})) {
			t.Errorf("%s volume: finalizers %v (changed %v), want added: %v", phase, got, changed, want)
		}
		deleting := pv.DeepCopy()
		deleting.DeletionTimestamp = &metav1.Time{}
		if _, changed := b.deletionFinalizers(deleting); changed {
			t.Errorf("%s volume being deleted: finalizer added", phase)
		}
	}
}
