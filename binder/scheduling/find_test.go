package scheduling_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/zones"
)

// capacityFunc is a scheduling.CapacityChecker.
type capacityFunc func(class *storagev1.StorageClass, claim *v1.PersistentVolumeClaim, node *v1.Node) (bool, error)

func (f capacityFunc) HasCapacity(_ context.Context, class *storagev1.StorageClass, claim *v1.PersistentVolumeClaim, node *v1.Node) (bool, error) {
	return f(class, claim, node)
}

var _ scheduling.CapacityChecker = capacityFunc(nil)

// baseObjects are two nodes in zones a and b and the classes:
// "wffc" (WaitForFirstConsumer, no provisioner), "dyn" (WFFC with a
// provisioner), "dyn-a" (WFFC, provisioner, allowedTopologies zone a),
// "dyn-zone-b" (WFFC, provisioner, parameter zone=b) and "imm" (Immediate).
func baseObjects() []runtime.Object {
	return []runtime.Object{
		node("node-a", "a"), node("node-b", "b"),
		class("wffc", true, volume.NotSupportedProvisioner),
		class("dyn", true, "example.com/csi"),
		class("dyn-a", true, "example.com/csi", allowedZones("a")),
		class("dyn-zone-b", true, "example.com/csi", func(sc *storagev1.StorageClass) {
			sc.Parameters = map[string]string{"Zone": "b"}
		}),
		class("imm", false, "example.com/csi"),
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	noMode := class("no-mode", true, "example.com/csi")
	noMode.VolumeBindingMode = nil
	deleting := pvc("gone", "1Gi", "wffc")
	deleting.DeletionTimestamp = &metav1.Time{}
	deleting.Finalizers = []string{"kubernetes.io/pvc-protection"}
	tests := []struct {
		name     string
		objs     []runtime.Object
		pod      *v1.Pod
		node     string
		capacity scheduling.CapacityChecker
		// volumeZone and classZones turn the Config's options on.
		volumeZone, classZones bool
		// want: reason kinds (and the messages, when set), bindings
		// claim->volume, provisioned claims.
		wantKinds      []scheduling.ReasonKind
		wantMessages   []string
		wantBindings   map[string]string
		wantProvisions []string
		wantErr        error
	}{{
		name: "no claims",
		pod:  pod("p"),
		node: "node-a",
	}, {
		name: "bound claim, volume in the node's zone",
		objs: []runtime.Object{boundPV(pv("pv1", "1Gi", "wffc", zones.ZoneLabel, "a"), "c1"), boundPVC(pvc("c1", "1Gi", "wffc"), "pv1")},
		pod:  pod("p", "c1"),
		node: "node-a",
	}, {
		name:         "bound claim, volume in another zone",
		objs:         []runtime.Object{boundPV(pv("pv1", "1Gi", "wffc", zones.ZoneLabel, "b"), "c1"), boundPVC(pvc("c1", "1Gi", "wffc"), "pv1")},
		pod:          pod("p", "c1"),
		node:         "node-a",
		wantKinds:    []scheduling.ReasonKind{scheduling.VolumeNodeAffinityConflict},
		wantMessages: []string{"node(s) didn't match PersistentVolume's node affinity"},
	}, {
		name: "bound claim, volume zone label only: VolumeBinding checks node affinity only",
		objs: []runtime.Object{zoneLabelled(boundPV(pv("pv1", "1Gi", "wffc", "", ""), "c1"), "b"), boundPVC(pvc("c1", "1Gi", "wffc"), "pv1")},
		pod:  pod("p", "c1"),
		node: "node-a",
	}, {
		name:         "bound claim, volume zone label only, with the VolumeZone rule",
		objs:         []runtime.Object{zoneLabelled(boundPV(pv("pv1", "1Gi", "wffc", "", ""), "c1"), "b"), boundPVC(pvc("c1", "1Gi", "wffc"), "pv1")},
		pod:          pod("p", "c1"),
		node:         "node-a",
		volumeZone:   true,
		wantKinds:    []scheduling.ReasonKind{scheduling.VolumeZoneConflict},
		wantMessages: []string{"node(s) had no available volume zone"},
	}, {
		name:       "bound claim, multi-zone label admits the node, with the VolumeZone rule",
		objs:       []runtime.Object{zoneLabelled(boundPV(pv("pv1", "1Gi", "wffc", "", ""), "c1"), "b__a"), boundPVC(pvc("c1", "1Gi", "wffc"), "pv1")},
		pod:        pod("p", "c1"),
		node:       "node-a",
		volumeZone: true,
	}, {
		name:       "bound claim, affinity conflict hides the VolumeZone rule",
		objs:       []runtime.Object{zoneLabelled(boundPV(pv("pv1", "1Gi", "wffc", zones.ZoneLabel, "b"), "c1"), "b"), boundPVC(pvc("c1", "1Gi", "wffc"), "pv1")},
		pod:        pod("p", "c1"),
		node:       "node-a",
		volumeZone: true,
		wantKinds:  []scheduling.ReasonKind{scheduling.VolumeNodeAffinityConflict},
	}, {
		name:         "bound claim, volume missing, with the VolumeZone rule: pod-level",
		objs:         []runtime.Object{boundPVC(pvc("c1", "1Gi", "wffc"), "pv-missing")},
		pod:          pod("p", "c1"),
		node:         "node-a",
		volumeZone:   true,
		wantKinds:    []scheduling.ReasonKind{scheduling.VolumeMissing},
		wantMessages: []string{`persistentvolume "pv-missing" not found`},
	}, {
		name:         "bound claim, volume missing",
		objs:         []runtime.Object{boundPVC(pvc("c1", "1Gi", "wffc"), "pv-missing")},
		pod:          pod("p", "c1"),
		node:         "node-a",
		wantKinds:    []scheduling.ReasonKind{scheduling.VolumeNotExist},
		wantMessages: []string{"node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"},
	}, {
		name: "lost claim fails the pod, whatever comes after it",
		objs: []runtime.Object{lost(pvc("c1", "1Gi", "wffc"), "pv-gone"), pvc("c2", "1Gi", "imm")},
		pod:  pod("p", "c2", "c1"),
		node: "node-a",
		// The PreFilter checks every claim's existence and phase before
		// it sorts them: Lost wins over the unbound immediate c2.
		wantKinds:    []scheduling.ReasonKind{scheduling.ClaimLost},
		wantMessages: []string{`persistentvolumeclaim "c1" bound to non-existent persistentvolume "pv-gone"`},
	}, {
		name:         "unbound immediate claim",
		objs:         []runtime.Object{pvc("c1", "1Gi", "imm")},
		pod:          pod("p", "c1"),
		node:         "node-a",
		wantKinds:    []scheduling.ReasonKind{scheduling.UnboundImmediateClaim},
		wantMessages: []string{"pod has unbound immediate PersistentVolumeClaims"},
	}, {
		name:      "claim of a class that does not exist waits for the Binder",
		objs:      []runtime.Object{pvc("c1", "1Gi", "later")},
		pod:       pod("p", "c1"),
		node:      "node-a",
		wantKinds: []scheduling.ReasonKind{scheduling.UnboundImmediateClaim},
	}, {
		name:      "claim pre-bound by name waits for the Binder",
		objs:      []runtime.Object{pv("pv1", "1Gi", "wffc", "", ""), func() *v1.PersistentVolumeClaim { c := pvc("c1", "1Gi", "wffc"); c.Spec.VolumeName = "pv1"; return c }()},
		pod:       pod("p", "c1"),
		node:      "node-a",
		wantKinds: []scheduling.ReasonKind{scheduling.UnboundImmediateClaim},
	}, {
		name: "delayed claim, smallest volume on the node",
		objs: []runtime.Object{
			pv("pv-a-big", "10Gi", "wffc", zones.ZoneLabel, "a"),
			pv("pv-a-small", "2Gi", "wffc", zones.ZoneLabel, "a"),
			pv("pv-b-exact", "1Gi", "wffc", zones.ZoneLabel, "b"),
			pvc("c1", "1Gi", "wffc"),
		},
		pod:          pod("p", "c1"),
		node:         "node-a",
		wantBindings: map[string]string{"c1": "pv-a-small"},
	}, {
		name: "delayed claim, local volume only on another node",
		objs: []runtime.Object{
			pv("local-b", "1Gi", "wffc", v1.LabelHostname, "node-b"),
			pvc("c1", "1Gi", "wffc"),
		},
		pod:       pod("p", "c1"),
		node:      "node-a",
		wantKinds: []scheduling.ReasonKind{scheduling.NoMatchingVolume},
	}, {
		name: "delayed claim, local volume on the node",
		objs: []runtime.Object{
			pv("local-b", "1Gi", "wffc", v1.LabelHostname, "node-b"),
			pvc("c1", "1Gi", "wffc"),
		},
		pod:          pod("p", "c1"),
		node:         "node-b",
		wantBindings: map[string]string{"c1": "local-b"},
	}, {
		name: "two claims never share a volume",
		objs: []runtime.Object{
			pv("pv1", "5Gi", "wffc", zones.ZoneLabel, "a"),
			pvc("c1", "1Gi", "wffc"), pvc("c2", "1Gi", "wffc"),
		},
		pod:       pod("p", "c1", "c2"),
		node:      "node-a",
		wantKinds: []scheduling.ReasonKind{scheduling.NoMatchingVolume},
	}, {
		name: "two claims, smallest request first",
		objs: []runtime.Object{
			pv("pv-3", "3Gi", "wffc", zones.ZoneLabel, "a"),
			pv("pv-5", "5Gi", "wffc", zones.ZoneLabel, "a"),
			pvc("big", "4Gi", "wffc"), pvc("small", "2Gi", "wffc"),
		},
		pod:          pod("p", "big", "small"),
		node:         "node-a",
		wantBindings: map[string]string{"small": "pv-3", "big": "pv-5"},
	}, {
		name:           "no volume, provisionable anywhere",
		objs:           []runtime.Object{pvc("c1", "1Gi", "dyn")},
		pod:            pod("p", "c1"),
		node:           "node-b",
		wantProvisions: []string{"c1"},
	}, {
		name:           "no volume, allowedTopologies admit the node",
		objs:           []runtime.Object{pvc("c1", "1Gi", "dyn-a")},
		pod:            pod("p", "c1"),
		node:           "node-a",
		wantProvisions: []string{"c1"},
	}, {
		name:      "no volume, allowedTopologies exclude the node",
		objs:      []runtime.Object{pvc("c1", "1Gi", "dyn-a")},
		pod:       pod("p", "c1"),
		node:      "node-b",
		wantKinds: []scheduling.ReasonKind{scheduling.CannotProvision},
	}, {
		name:           "no volume, zone parameter ignored as Kubernetes does",
		objs:           []runtime.Object{pvc("c1", "1Gi", "dyn-zone-b")},
		pod:            pod("p", "c1"),
		node:           "node-a",
		wantProvisions: []string{"c1"},
	}, {
		name:         "no volume, zone parameter excludes the node with ClassZoneParameters",
		objs:         []runtime.Object{pvc("c1", "1Gi", "dyn-zone-b")},
		pod:          pod("p", "c1"),
		node:         "node-a",
		classZones:   true,
		wantKinds:    []scheduling.ReasonKind{scheduling.ClassZoneConflict},
		wantMessages: []string{"node(s) not in the zones allowed by the StorageClass's zone or zones parameter"},
	}, {
		name:           "no volume, zone parameter admits the node with ClassZoneParameters",
		objs:           []runtime.Object{pvc("c1", "1Gi", "dyn-zone-b")},
		pod:            pod("p", "c1"),
		node:           "node-b",
		classZones:     true,
		wantProvisions: []string{"c1"},
	}, {
		name: "no room to provision",
		objs: []runtime.Object{pvc("c1", "1Gi", "dyn")},
		pod:  pod("p", "c1"),
		node: "node-a",
		capacity: capacityFunc(func(_ *storagev1.StorageClass, _ *v1.PersistentVolumeClaim, n *v1.Node) (bool, error) {
			return n.Name != "node-a", nil
		}),
		wantKinds: []scheduling.ReasonKind{scheduling.NotEnoughSpace},
	}, {
		name:      "claim being provisioned for another node",
		objs:      []runtime.Object{annotate(pvc("c1", "1Gi", "dyn"), volume.AnnSelectedNode, "node-b")},
		pod:       pod("p", "c1"),
		node:      "node-a",
		wantKinds: []scheduling.ReasonKind{scheduling.SelectedNodeConflict},
	}, {
		name:           "claim being provisioned for this node",
		objs:           []runtime.Object{annotate(pvc("c1", "1Gi", "dyn"), volume.AnnSelectedNode, "node-a")},
		pod:            pod("p", "c1"),
		node:           "node-a",
		wantProvisions: []string{"c1"},
	}, {
		name: "volume for one claim, provisioning for the other",
		objs: []runtime.Object{
			pv("pv1", "1Gi", "dyn", zones.ZoneLabel, "a"),
			pvc("c1", "1Gi", "dyn"), pvc("c2", "1Gi", "dyn"),
		},
		pod:            pod("p", "c1", "c2"),
		node:           "node-a",
		wantBindings:   map[string]string{"c1": "pv1"},
		wantProvisions: []string{"c2"},
	}, {
		name: "bound conflict and no matching volume together",
		objs: []runtime.Object{
			boundPV(pv("pv1", "1Gi", "wffc", zones.ZoneLabel, "b"), "c1"), boundPVC(pvc("c1", "1Gi", "wffc"), "pv1"),
			pvc("c2", "1Gi", "wffc"),
		},
		pod:          pod("p", "c1", "c2"),
		node:         "node-a",
		wantKinds:    []scheduling.ReasonKind{scheduling.VolumeNodeAffinityConflict, scheduling.NoMatchingVolume},
		wantMessages: []string{"node(s) didn't match PersistentVolume's node affinity", "node(s) didn't find available persistent volumes to bind"},
	}, {
		name:         "missing claim",
		pod:          pod("p", "nope"),
		node:         "node-a",
		wantKinds:    []scheduling.ReasonKind{scheduling.ClaimMissing},
		wantMessages: []string{`persistentvolumeclaim "nope" not found`},
	}, {
		name:         "missing claim of a generic ephemeral volume",
		pod:          ephemeralPod("p", "scratch"),
		node:         "node-a",
		wantKinds:    []scheduling.ReasonKind{scheduling.ClaimMissing},
		wantMessages: []string{`waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"`},
	}, {
		name:         "claim of a generic ephemeral volume created for another pod",
		objs:         []runtime.Object{pvc("p-scratch", "1Gi", "dyn")},
		pod:          ephemeralPod("p", "scratch"),
		node:         "node-a",
		wantKinds:    []scheduling.ReasonKind{scheduling.ClaimNotOwned},
		wantMessages: []string{"PVC default/p-scratch was not created for pod default/p (pod is not owner)"},
	}, {
		name:         "claim being deleted",
		objs:         []runtime.Object{deleting},
		pod:          pod("p", "gone"),
		node:         "node-a",
		wantKinds:    []scheduling.ReasonKind{scheduling.ClaimDeleting},
		wantMessages: []string{`persistentvolumeclaim "gone" is being deleted`},
	}, {
		name:    "class without volumeBindingMode: an error, as kube-scheduler's",
		objs:    []runtime.Object{noMode, pvc("c1", "1Gi", "no-mode")},
		pod:     pod("p", "c1"),
		node:    "node-a",
		wantErr: errAny,
	}, {
		name: "claim selected for this node, class without provisioner",
		objs: []runtime.Object{annotate(pvc("c1", "1Gi", "wffc"), volume.AnnSelectedNode, "node-a")},
		pod:  pod("p", "c1"),
		node: "node-a",
		// It found no volume, it was selected: CannotProvision.
		wantKinds: []scheduling.ReasonKind{scheduling.CannotProvision},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := scheduling.Config{Capacity: tc.capacity, VolumeZone: tc.volumeZone, ClassZoneParameters: tc.classZones}
			e := newEnv(t, cfg, append(baseObjects(), tc.objs...)...)
			got, reasons, err := e.vb.Find(e.ctx, tc.pod, e.node(tc.node))
			if tc.wantErr != nil {
				if err == nil || tc.wantErr != errAny && !errors.Is(err, tc.wantErr) {
					t.Fatalf("Find() error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Find() error = %v", err)
			}
			var kinds []scheduling.ReasonKind
			for _, r := range reasons {
				kinds = append(kinds, r.Kind)
				if r.Claim == "" || r.Detail == "" || r.Message() == "" {
					t.Errorf("reason %v lacks claim, detail or message", r)
				}
				if keys := podClaimKeys(tc.pod); !slices.Contains(keys, r.Claim) {
					t.Errorf("reason %v names claim %q, not one of the pod's %q", r, r.Claim, keys)
				}
			}
			if diff := cmp.Diff(tc.wantKinds, kinds); diff != "" {
				t.Errorf("reasons %v (-want +got):\n%s", reasons, diff)
			}
			if tc.wantMessages != nil {
				if diff := cmp.Diff(tc.wantMessages, scheduling.Messages(reasons)); diff != "" {
					t.Errorf("Messages(%v) (-want +got):\n%s", reasons, diff)
				}
			}
			checkPodLevel(t, e, tc.pod, reasons)
			if len(reasons) > 0 {
				return
			}
			bindings := map[string]string{}
			for _, b := range got.StaticBindings {
				bindings[b.PVC.Name] = b.PV.Name
			}
			if tc.wantBindings == nil {
				tc.wantBindings = map[string]string{}
			}
			if diff := cmp.Diff(tc.wantBindings, bindings); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
			var provisions []string
			for _, c := range got.DynamicProvisions {
				provisions = append(provisions, c.Name)
			}
			if diff := cmp.Diff(tc.wantProvisions, provisions); diff != "" {
				t.Errorf("provisions (-want +got):\n%s", diff)
			}
			if got.Node.Name != tc.node {
				t.Errorf("Node = %q, want %q", got.Node.Name, tc.node)
			}
		})
	}
}

// errAny stands for any error in TestFind's table.
var errAny = errors.New("any error")

// checkPodLevel checks that Check answers the pod-level reason among a
// node's reasons, and nothing when there is none.
func checkPodLevel(t *testing.T, e *env, p *v1.Pod, reasons []scheduling.Reason) {
	t.Helper()
	got, err := e.vb.Check(e.ctx, p)
	if err != nil {
		t.Fatalf("Check() error = %v", err)
	}
	var want []scheduling.Reason
	if r, ok := scheduling.PodReason(reasons); ok {
		want = []scheduling.Reason{r}
		if len(reasons) != 1 {
			t.Errorf("reasons %v: a pod-level reason comes alone", reasons)
		}
	}
	if diff := cmp.Diff(scheduling.Messages(want), scheduling.Messages(got)); diff != "" {
		t.Errorf("Check() = %v (-Find's pod-level reason +Check):\n%s", got, diff)
	}
	for _, r := range got {
		if !r.Kind.PodLevel() || r.Code() != scheduling.CodeUnschedulableAndUnresolvable {
			t.Errorf("Check() reason %v: PodLevel %v, code %v", r, r.Kind.PodLevel(), r.Code())
		}
	}
}

func TestFindNilArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduling.Config{}, baseObjects()...)
	if _, _, err := e.vb.Find(e.ctx, nil, e.node("node-a")); !errors.Is(err, scheduling.ErrInvalidArgument) {
		t.Errorf("Find(nil pod) error = %v, want ErrInvalidArgument", err)
	}
	if _, _, err := e.vb.Find(e.ctx, pod("p"), nil); !errors.Is(err, scheduling.ErrInvalidArgument) {
		t.Errorf("Find(nil node) error = %v, want ErrInvalidArgument", err)
	}
}

func TestMessages(t *testing.T) {
	t.Parallel()
	got := scheduling.Messages([]scheduling.Reason{
		{Kind: scheduling.NoMatchingVolume}, {Kind: scheduling.VolumeNodeAffinityConflict},
		{Kind: scheduling.CannotProvision}, {Kind: scheduling.NotEnoughSpace}, {Kind: scheduling.VolumeNotExist},
	})
	// kube-scheduler's order for one node, each text once.
	want := []string{
		"node(s) didn't match PersistentVolume's node affinity",
		"node(s) didn't find available persistent volumes to bind",
		"node(s) did not have enough free storage",
		"node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}
	r := scheduling.Reason{Kind: scheduling.CannotProvision, Claim: "ns/c", Volume: "pv", Detail: "why"}
	if got, want := r.String(), "CannotProvision: claim ns/c, volume pv: why"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := scheduling.ReasonKind(99).String(); got != "ReasonKind(99)" {
		t.Errorf("String() = %q", got)
	}
}

// TestFindParallel runs Find for many nodes at once (run with -race) and
// checks every answer against a serial run.
func TestFindParallel(t *testing.T) {
	t.Parallel()
	const nodes = 30
	objs := []runtime.Object{class("wffc", true, volume.NotSupportedProvisioner)}
	for i := range nodes {
		n := fmt.Sprintf("node-%02d", i)
		objs = append(objs, node(n, fmt.Sprintf("z%d", i%3)))
		for j := range 3 {
			objs = append(objs, pv(fmt.Sprintf("pv-%02d-%d", i, j), fmt.Sprintf("%dGi", j+1), "wffc", v1.LabelHostname, n))
		}
	}
	objs = append(objs, pvc("c1", "1Gi", "wffc"), pvc("c2", "2Gi", "wffc"))
	e := newEnv(t, scheduling.Config{}, objs...)
	p := pod("p", "c1", "c2")
	want := make([][]string, nodes)
	for i := range nodes {
		want[i] = findNames(t, e, p, fmt.Sprintf("node-%02d", i))
	}
	const rounds = 4
	got := make([][][]string, rounds)
	var g errgroup.Group
	for round := range rounds {
		got[round] = make([][]string, nodes)
		for i := range nodes {
			g.Go(func() error {
				got[round][i] = findNames(t, e, p, fmt.Sprintf("node-%02d", i))
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		if diff := cmp.Diff(want, got[round]); diff != "" {
			t.Errorf("parallel Find, round %d (-serial +parallel):\n%s", round, diff)
		}
	}
	if want[0][0] != "c1=pv-00-0" || want[0][1] != "c2=pv-00-1" {
		t.Errorf("node-00 got %v, want c1=pv-00-0 c2=pv-00-1", want[0])
	}
}

func findNames(t *testing.T, e *env, p *v1.Pod, nodeName string) []string {
	got, reasons, err := e.vb.Find(e.ctx, p, e.node(nodeName))
	if err != nil || len(reasons) > 0 {
		t.Errorf("Find(%s) = %v, %v", nodeName, reasons, err)
		return nil
	}
	var out []string
	for _, b := range got.StaticBindings {
		out = append(out, b.PVC.Name+"="+b.PV.Name)
	}
	slices.Sort(out)
	return out
}

// podClaimKeys returns the keys ("namespace/name") of the claims pod's
// volumes use, ephemeral ones included.
func podClaimKeys(pod *v1.Pod) []string {
	var keys []string
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		switch {
		case vol.PersistentVolumeClaim != nil:
			keys = append(keys, cache.ClaimKey(pod.Namespace, vol.PersistentVolumeClaim.ClaimName))
		case vol.Ephemeral != nil:
			keys = append(keys, cache.ClaimKey(pod.Namespace, ephemeral.VolumeClaimName(pod, vol)))
		}
	}
	return keys
}
