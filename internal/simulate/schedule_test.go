package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/internal/manifest"
)

// Manifest pieces of the scheduling tests: two nodes in two zones, a
// WaitForFirstConsumer class without provisioner ("local"), one with a
// provisioner that simulate does not run ("csi-wffc") and an Immediate
// one ("zonal").
const (
	schedClasses = `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: csi-wffc}
provisioner: disk.csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: disk.csi.example.com
volumeBindingMode: Immediate
`
	schedNodes = `
---
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a, topology.kubernetes.io/zone: zone-a}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b, topology.kubernetes.io/zone: zone-b}}
`
)

// localPV is a 10Gi local volume of class "local" on host.
func localPV(name, host string) string {
	return fmt.Sprintf(`
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: %s}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/%s}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [%s]}]
`, name, name, host)
}

// zonalPV is a 10Gi volume of class "zonal" in zone.
func zonalPV(name, zone string) string {
	return fmt.Sprintf(`
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: %s}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: zonal
  csi: {driver: disk.csi.example.com, volumeHandle: %s}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [%s]}]
`, name, name, zone)
}

// claim is a 5Gi claim of class in namespace default.
func claim(name, class string) string {
	return fmt.Sprintf(`
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %s, namespace: default}
spec:
  storageClassName: %s
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 5Gi}}
`, name, class)
}

// pod is a pod of namespace default using the claims; extra is YAML added
// to its spec (indented by two spaces).
func pod(name, extra string, claims ...string) string {
	var vols strings.Builder
	for i, c := range claims {
		fmt.Fprintf(&vols, "  - {name: v%d, persistentVolumeClaim: {claimName: %s}}\n", i, c)
	}
	volumes := ""
	if len(claims) > 0 {
		volumes = "  volumes:\n" + vols.String()
	}
	return fmt.Sprintf(`
---
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  containers: [{name: app, image: registry.k8s.io/pause:3.10}]
%s%s`, name, extra, volumes)
}

// anyNode in a test's table: the pod must be on some node.
const anyNode = "*"

// TestSimulateSchedulesPods loads small clusters with pods and checks where
// the simulated scheduler put each pod, or why it left it pending, and
// that every scheduled pod's claims are Bound to volumes usable from its
// node, no volume serving two pods.
func TestSimulateSchedulesPods(t *testing.T) {
	const noVolume = "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."
	tests := []struct {
		name     string
		manifest string
		// nodes is where each pod must end: a node name, anyNode, or ""
		// for pending.
		nodes map[string]string
		// pending is the reason each pending pod must have (a substring).
		pending map[string]string
		// selected is the selected-node annotation a claim must have.
		selected map[string]string
		// provision runs the simulation with -provision.
		provision bool
	}{{
		name:     "local volume on the other node",
		manifest: schedClasses + schedNodes + localPV("local-b", "node-b") + claim("data", "local") + pod("web-0", "", "data"),
		nodes:    map[string]string{"web-0": "node-b"},
	}, {
		name: "two pods spread over their nodes' volumes",
		manifest: schedClasses + schedNodes + localPV("local-a", "node-a") + localPV("local-b", "node-b") +
			claim("data-0", "local") + claim("data-1", "local") + pod("web-0", "", "data-0") + pod("web-1", "", "data-1"),
		nodes: map[string]string{"web-0": anyNode, "web-1": anyNode},
	}, {
		name: "two pods, one volume: the second waits",
		manifest: schedClasses + schedNodes + localPV("local-a", "node-a") +
			claim("data-0", "local") + claim("data-1", "local") + pod("web-0", "", "data-0") + pod("web-1", "", "data-1"),
		nodes:   map[string]string{"web-0": "node-a", "web-1": ""},
		pending: map[string]string{"web-1": noVolume},
	}, {
		name: "a pod with two claims gets two volumes on one node",
		manifest: schedClasses + schedNodes + localPV("local-a1", "node-a") + localPV("local-b1", "node-b") + localPV("local-b2", "node-b") +
			claim("data", "local") + claim("logs", "local") + pod("web-0", "", "data", "logs"),
		nodes: map[string]string{"web-0": "node-b"},
	}, {
		name:     "a bound zonal volume pins the pod to its zone",
		manifest: schedClasses + schedNodes + zonalPV("disk-b", "zone-b") + claim("data", "zonal") + pod("web-0", "", "data"),
		nodes:    map[string]string{"web-0": "node-b"},
	}, {
		name: "node selector against the volume's node",
		manifest: schedClasses + schedNodes + localPV("local-b", "node-b") + claim("data", "local") +
			pod("web-0", "  nodeSelector: {kubernetes.io/hostname: node-a}\n", "data"),
		nodes: map[string]string{"web-0": ""},
		pending: map[string]string{"web-0": "0/2 nodes are available: 1 node(s) didn't find available persistent volumes to bind, " +
			"1 node(s) didn't match Pod's node affinity/selector."},
	}, {
		name:     "missing claim",
		manifest: schedClasses + schedNodes + pod("web-0", "", "nope"),
		nodes:    map[string]string{"web-0": ""},
		pending:  map[string]string{"web-0": `0/2 nodes are available: persistentvolumeclaim "nope" not found.`},
	}, {
		name: "ephemeral claim of another owner",
		manifest: schedClasses + schedNodes + claim("web-0-scratch", "local") + pod("web-0",
			"  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}]\n"),
		nodes:   map[string]string{"web-0": ""},
		pending: map[string]string{"web-0": "0/2 nodes are available: PVC default/web-0-scratch was not created for pod default/web-0 (pod is not owner)."},
	}, {
		name:     "unbound immediate claim",
		manifest: schedClasses + schedNodes + claim("data", "zonal") + pod("web-0", "", "data"),
		nodes:    map[string]string{"web-0": ""},
		pending:  map[string]string{"web-0": "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."},
	}, {
		name:     "no nodes",
		manifest: schedClasses + localPV("local-b", "node-b") + claim("data", "local") + pod("web-0", "", "data"),
		nodes:    map[string]string{"web-0": ""},
		pending:  map[string]string{"web-0": "no nodes available to schedule pods"},
	}, {
		name:     "pod without claims",
		manifest: schedClasses + schedNodes + pod("web-0", ""),
		nodes:    map[string]string{"web-0": anyNode},
	}, {
		name:     "scheduling gates",
		manifest: schedClasses + schedNodes + pod("web-0", "  schedulingGates: [{name: example.com/wait}]\n"),
		nodes:    map[string]string{"web-0": ""},
		pending:  map[string]string{"web-0": "Scheduling is blocked due to non-empty scheduling gates"},
	}, {
		name:     "pod already on a node",
		manifest: schedClasses + schedNodes + pod("web-0", "  nodeName: node-a\n"),
		nodes:    map[string]string{"web-0": "node-a"},
	}, {
		name:     "provisioning: the node is selected, no provisioner runs",
		manifest: schedClasses + schedNodes + claim("data", "csi-wffc") + pod("web-0", "  nodeSelector: {kubernetes.io/hostname: node-b}\n", "data"),
		nodes:    map[string]string{"web-0": ""},
		pending:  map[string]string{"web-0": "provision claim default/data: " + errSimulationSettled.Error()},
		selected: map[string]string{"data": "node-b"},
	}, {
		name:      "provisioning with -provision: a volume in the selected node's zone",
		manifest:  schedClasses + schedNodes + claim("data", "csi-wffc") + pod("web-0", "  nodeSelector: {kubernetes.io/hostname: node-b}\n", "data"),
		nodes:     map[string]string{"web-0": "node-b"},
		selected:  map[string]string{"data": "node-b"},
		provision: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs, err := manifest.LoadFiles([]string{"-"}, strings.NewReader(tc.manifest), manifest.Options{})
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			o := smallOptions()
			o.Provision = tc.provision
			res, err := runSimulation(quiet(t), o, objs, io.Discard)
			if err != nil {
				t.Fatalf("runSimulation: %v", err)
			}
			checkScheduled(t, res, tc.nodes, tc.pending)
			if tc.provision {
				// The provisioned volume admits zone-b only: checkScheduled
				// found it usable from node-b.
				c, _ := res.server.GetClaim(t.Context(), "default", "data")
				pv, err := res.server.GetVolume(t.Context(), c.Spec.VolumeName)
				if err != nil || volume.CheckNodeAffinity(pv, map[string]string{v1.LabelTopologyZone: "zone-a"}) == nil {
					t.Errorf("provisioned volume %q: %v; want one that zone-a cannot use", c.Spec.VolumeName, err)
				}
			}
			for name, node := range tc.selected {
				c, err := res.server.GetClaim(t.Context(), "default", name)
				if err != nil || c.Annotations[volume.AnnSelectedNode] != node {
					t.Errorf("claim %s: annotations %v, %v; want %s=%s", name, c.GetAnnotations(), err, volume.AnnSelectedNode, node)
				}
			}
		})
	}
}

// checkScheduled checks the pods' nodes and pending reasons, the report's
// pod counts, and that every pod's Bound claims have volumes of their
// own, usable from the pod's node.
func checkScheduled(t *testing.T, res *simulation, nodes, pending map[string]string) {
	t.Helper()
	r := res.report
	if !r.Completed || len(r.Violations) > 0 {
		t.Fatalf("report: completed %v, violations %q", r.Completed, r.Violations)
	}
	nodeByName := map[string]*v1.Node{}
	for _, o := range res.server.List(bindertest.KindNode) {
		n := o.(*v1.Node)
		nodeByName[n.Name] = n
	}
	volumes := map[string]*v1.PersistentVolume{}
	for _, pv := range res.server.Volumes() {
		volumes[pv.Name] = pv
	}
	claims := map[string]*v1.PersistentVolumeClaim{}
	for _, c := range res.server.Claims() {
		claims[c.Namespace+"/"+c.Name] = c
	}
	usedBy := map[string]string{} // volume → pod
	scheduled := 0
	for _, p := range res.server.Pods() {
		want, ok := nodes[p.Name]
		if !ok {
			t.Fatalf("pod %s not in the test's table", p.Name)
		}
		if got := p.Spec.NodeName; got != want && (want != anyNode || got == "") {
			t.Errorf("pod %s on node %q, want %q", p.Name, got, want)
		}
		if p.Spec.NodeName == "" {
			continue
		}
		scheduled++
		for _, vol := range p.Spec.Volumes {
			c := claims[p.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName]
			if c == nil || c.Status.Phase != v1.ClaimBound {
				t.Errorf("pod %s on %s: claim %s is %v, want Bound", p.Name, p.Spec.NodeName, vol.PersistentVolumeClaim.ClaimName, c)
				continue
			}
			pv := volumes[c.Spec.VolumeName]
			if err := volume.CheckNodeAffinity(pv, nodeByName[p.Spec.NodeName].Labels); err != nil {
				t.Errorf("pod %s on %s: volume %s of claim %s: %v", p.Name, p.Spec.NodeName, pv.Name, c.Name, err)
			}
			if other, dup := usedBy[pv.Name]; dup {
				t.Errorf("volume %s serves pods %s and %s", pv.Name, other, p.Name)
			}
			usedBy[pv.Name] = p.Name
		}
	}
	if r.Pods == nil || r.Pods.Total != len(nodes) || r.Pods.Scheduled != scheduled || r.Pods.Pending != len(nodes)-scheduled {
		t.Errorf("report pods = %+v, want %d of %d scheduled", r.Pods, scheduled, len(nodes))
	}
	got := map[string]string{}
	for _, s := range r.Pods.Unscheduled {
		got[strings.TrimPrefix(s.Name, "default/")] = s.Message
	}
	for name, want := range pending {
		if !strings.Contains(got[name], want) {
			t.Errorf("pod %s pending reason = %q, want it to contain %q", name, got[name], want)
		}
	}
}

// TestSimulateGeneratedPods: every pod of -pods is scheduled and its claim
// bound to a local volume of its node, with and without write faults (a
// pod whose Bind or binding failed is tried again).
func TestSimulateGeneratedPods(t *testing.T) {
	for _, faults := range []bool{false, true} {
		t.Run(fmt.Sprintf("faults=%v", faults), func(t *testing.T) {
			t.Parallel()
			o := smallOptions()
			o.Scenario.Volumes, o.Scenario.Claims, o.Scenario.Pods, o.Scenario.Nodes = 100, 100, 60, 6
			if faults {
				o.ConflictRate, o.FailRate = 0.05, 0.02
			}
			objs, exp := o.Scenario.generate()
			if exp.Pods != 60 || len(objs.Pods) != 60 || len(objs.Nodes) != 6+o.Scenario.Zones {
				t.Fatalf("generated %d pods, %d nodes; expectation %d pods", len(objs.Pods), len(objs.Nodes), exp.Pods)
			}
			nodes := map[string]string{} // before runSimulation, which consumes objs
			for _, p := range objs.Pods {
				nodes[p.Name] = anyNode
			}
			res, err := runSimulation(quiet(t), o, objs, io.Discard)
			if err != nil {
				t.Fatalf("runSimulation: %v", err)
			}
			checkScheduled(t, res, nodes, nil)
			r := res.report
			if r.Pods.ScheduledByRun != exp.Pods || r.ClaimsBound != exp.Bindable+exp.Pods {
				t.Errorf("report: %d pods scheduled by the run, %d claims bound; want %d and %d", r.Pods.ScheduledByRun, r.ClaimsBound, exp.Pods, exp.Bindable+exp.Pods)
			}
			perNode := map[string]int{}
			for _, p := range res.server.Pods() {
				perNode[p.Spec.NodeName]++
			}
			for n, c := range perNode {
				// A pod whose Bind failed is placed again later, on the
				// node with the fewest pods then.
				if !faults && c != exp.Pods/6 {
					t.Errorf("node %s has %d pods, want the pods spread evenly (%d each): %v", n, c, exp.Pods/6, perNode)
				}
			}
			if got := res.server.Stats().Writes[bindertest.KindPod][bindertest.VerbCreate]; !faults && got != int64(exp.Pods) {
				t.Errorf("pod bindings written = %d, want one per pod (%d)", got, exp.Pods)
			}
		})
	}
}

// TestPodsReportText: the text report counts the pods and says why the
// pending ones wait.
func TestPodsReportText(t *testing.T) {
	yml := schedClasses + schedNodes + localPV("local-a", "node-a") +
		claim("data-0", "local") + claim("data-1", "local") + pod("web-0", "", "data-0") + pod("web-1", "", "data-1")
	stdout, _, err := runSimulate(t, yml, "-f", "-", "-o", "text")
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	wantContains(t, "text report", stdout,
		"pods:              1 scheduled (1 by this run), 1 pending (of 2)\n",
		"why pods are pending:\n       1  FailedScheduling: 0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.\n",
		"  Pod default/web-1 (Pending): 0/2 nodes",
		// The Binder knows the pods: the claim names its pod.
		"PersistentVolumeClaim default/data-1 (Pending): WaitForPodScheduled: waiting for pod web-1 to be scheduled")
	stdout, _, err = runSimulate(t, "", "-volumes", "10", "-claims", "10")
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	if strings.Contains(stdout, "pods:") {
		t.Errorf("report of a cluster without pods has a pods line:\n%s", stdout)
	}
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ nodes, want int }{{0, 0}, {50, 50}, {99, 99}, {100, 100}, {200, 100}, {1000, 420}, {5000, 500}, {20_000, 1000}} {
		if got := numFeasibleNodesToFind(tc.nodes); got != tc.want {
			t.Errorf("numFeasibleNodesToFind(%d) = %d, want %d", tc.nodes, got, tc.want)
		}
	}
}

// TestFindNodesWindows: on a large cluster the search stops once
// kube-scheduler's number of feasible nodes is found, starts the next pod
// where it stopped, and finds the same nodes with one worker or several.
func TestFindNodesWindows(t *testing.T) {
	t.Parallel()
	o := smallOptions()
	o.Scenario.Volumes, o.Scenario.Claims, o.Scenario.Pods, o.Scenario.Nodes = 0, 0, 2, 250
	objs, _ := o.Scenario.generate()
	srv := bindertest.New()
	if err := srv.Seed(t.Context(), objs.All()...); err != nil {
		t.Fatal(err)
	}
	want := numFeasibleNodesToFind(len(objs.Nodes)) // 121 of 253 (250 and one per zone)
	var got [][]string
	for _, workers := range []int{1, 3} {
		s, err := newPodScheduler(srv, podKeys(objs.Pods))
		if err != nil {
			t.Fatal(err)
		}
		s.findWorkers = workers
		var names []string
		for _, p := range objs.Pods {
			feasible, reasons, err := s.findNodes(t.Context(), p)
			if err != nil || len(reasons) != 0 || len(feasible) != want {
				t.Fatalf("workers=%d: findNodes(%s) = %d feasible, %v, %v; want %d feasible", workers, p.Name, len(feasible), reasons, err, want)
			}
			names = append(names, feasible[0].node.Name, feasible[want-1].node.Name)
		}
		s.stop()
		if s.next != 2*want {
			t.Errorf("workers=%d: the next search starts at node %d, want %d", workers, s.next, 2*want)
		}
		got = append(got, names)
	}
	wantNames := []string{"node-000", nodeName(want - 1), nodeName(want), nodeName(2*want - 1)}
	for i, names := range got {
		if !slices.Equal(names, wantNames) {
			t.Errorf("run %d: first and last feasible nodes = %q, want %q", i, names, wantNames)
		}
	}
}

// TestSchedulerEndsBinds: when the run ends while Binds wait (here for a
// provisioner that never comes), run ends them, waits for them and
// returns ctx's error; the pod stays pending with the PreBind failure.
func TestSchedulerEndsBinds(t *testing.T) {
	t.Parallel()
	yml := schedClasses + schedNodes + claim("data", "csi-wffc") + pod("web-0", "", "data")
	objs, err := manifest.LoadFiles([]string{"-"}, strings.NewReader(yml), manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := bindertest.New()
	if err := srv.Seed(t.Context(), objs.All()...); err != nil {
		t.Fatal(err)
	}
	s, err := newPodScheduler(srv, podKeys(objs.Pods))
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	ctx, cancel := context.WithCancel(t.Context())
	settled := 0
	err = s.run(ctx, func(ctx context.Context) error {
		settled++
		cancel() // the deadline passes while the Binder settles
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || settled != 1 {
		t.Errorf("run = %v after %d settles, want context.Canceled after 1", err, settled)
	}
	if got := s.outcomes["default/web-0"]; !strings.HasPrefix(got, prebindPrefix) || !strings.Contains(got, "provision claim default/data") {
		t.Errorf("outcome of web-0 = %q, want a PreBind failure of claim default/data", got)
	}
	if c, _ := srv.GetClaim(t.Context(), "default", "data"); c.Annotations[volume.AnnSelectedNode] == "" {
		t.Errorf("claim data has no selected node: %v", c.Annotations)
	}
}
