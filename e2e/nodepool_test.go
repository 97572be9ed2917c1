//go:build e2e && linux

package e2e

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/volbind/volbind/nodepool"
	"github.com/volbind/volbind/zones"
)

// gpuKey is the extra shape key of the nodepool tests.
const gpuKey = "e2e.volbind.io/gpu"

// nodepoolScaler returns a Scaler whose boot specs are named after the
// fixture's namespace, with a disk size label, an extra key and one spot
// standby node in zone-b.
func nodepoolScaler(t *testing.T, f *fixture) *nodepool.Scaler {
	t.Helper()
	s, err := nodepool.New(nodepool.Config{
		GenerateName:     f.ns + "-",
		ExtraKeys:        []string{gpuKey},
		DefaultDiskSize:  resource.MustParse("50Gi"),
		FixedSizeDisk:    true,
		MaxBootsPerRound: -1,
		Standby: []nodepool.StandbySpec{{
			InstanceType: "t3.small", CapacityType: nodepool.CapacitySpot, Count: 1,
			Labels: map[string]string{zones.ZoneLabel: "zone-b"},
		}},
	})
	if err != nil {
		t.Fatalf("nodepool.New: %v", err)
	}
	return s
}

// gpuPod is a pending pod of the fixture's namespace that needs an m5.large
// in zone-a with a GPU (a100 or h100) and a 20 GB disk. It exists only in
// memory: Compute reads pods, it does not need them on the server.
func gpuPod(f *fixture, name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: v1.PodSpec{
			NodeSelector: map[string]string{nodepool.InstanceTypeLabel: "m5.large", zones.ZoneLabel: "zone-a"},
			Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: gpuKey, Operator: v1.NodeSelectorOpIn, Values: []string{"h100", "a100"}},
				}}},
			}}},
			Containers: []v1.Container{{Name: "c", Image: "busybox", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("20G")},
			}}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

// spotPod is a pending pod that fits the standby spec of nodepoolScaler.
func spotPod(f *fixture, name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: v1.PodSpec{NodeSelector: map[string]string{
			nodepool.InstanceTypeLabel: "t3.small", nodepool.DefaultCapacityTypeKey: nodepool.CapacitySpot, zones.ZoneLabel: "zone-b",
		}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

// bootNodes creates the round's boot specs as they are and deletes them at
// cleanup. It returns the created nodes, in the round's order.
func bootNodes(t *testing.T, f *fixture, r *nodepool.Round) []*v1.Node {
	t.Helper()
	out := make([]*v1.Node, 0, len(r.Boots))
	for _, b := range r.Boots {
		n, err := f.cs.CoreV1().Nodes().Create(t.Context(), b.Node, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create boot spec %+v: %v", b.Node.ObjectMeta, err)
		}
		t.Cleanup(func() {
			err := f.cs.CoreV1().Nodes().Delete(context.Background(), n.Name, deleteNow())
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete node %s: %v", n.Name, err)
			}
		})
		out = append(out, n)
	}
	return out
}

// getNodes reads the nodes back from the API server.
func getNodes(t *testing.T, f *fixture, nodes ...*v1.Node) []*v1.Node {
	t.Helper()
	out := make([]*v1.Node, len(nodes))
	for i, n := range nodes {
		got, err := f.cs.CoreV1().Nodes().Get(t.Context(), n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get node %s: %v", n.Name, err)
		}
		out[i] = got
	}
	return out
}

// compute runs one round and fails the test on error.
func compute(t *testing.T, s *nodepool.Scaler, nodes []*v1.Node, pods ...*v1.Pod) *nodepool.Round {
	t.Helper()
	r, err := s.Compute(nodes, pods)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	if len(r.Unbound) > 0 {
		t.Fatalf("Compute left pods unbound: %+v", r.Unbound)
	}
	return r
}

// bootRound computes the first round for pod (no nodes yet), checks that
// it boots the pod's node and one standby node, creates both and checks
// that the API server accepted them as they were: generated names with the
// configured prefix, the labels and annotations of the specs. It returns
// the pod's node and the standby node, read back.
func bootRound(t *testing.T, f *fixture, s *nodepool.Scaler, pod *v1.Pod) (podNode, standby *v1.Node) {
	t.Helper()
	r := compute(t, s, nil, pod)
	if len(r.Boots) != 2 || r.Boots[0].Pod != pod || r.Boots[1].Pod != nil {
		t.Fatalf("first round boots %+v, want the pod's node then a standby node", r.Boots)
	}
	created := getNodes(t, f, bootNodes(t, f, r)...)
	for i, n := range created {
		spec := r.Boots[i].Node
		if !strings.HasPrefix(n.Name, f.ns+"-") || len(n.Name) <= len(f.ns)+1 {
			t.Errorf("node %s: name not generated from %q", n.Name, spec.GenerateName)
		}
		if !maps.Equal(n.Labels, spec.Labels) {
			t.Errorf("node %s labels = %v, want the boot spec's %v", n.Name, n.Labels, spec.Labels)
		}
		if !maps.Equal(n.Annotations, spec.Annotations) {
			t.Errorf("node %s annotations = %v, want the boot spec's %v", n.Name, n.Annotations, spec.Annotations)
		}
		if p := nodepool.NodePhase(n); p != nodepool.PhaseCreating {
			t.Errorf("node %s phase = %s, want %s", n.Name, p, nodepool.PhaseCreating)
		}
	}
	podNode, standby = created[0], created[1]
	wantPodNode := map[string]string{
		nodepool.InstanceTypeLabel: "m5.large", zones.ZoneLabel: "zone-a", gpuKey: "a100",
		nodepool.DefaultCapacityTypeKey: nodepool.CapacityOnDemand, nodepool.DefaultDiskSizeKey: "20G",
	}
	if !maps.Equal(podNode.Labels, wantPodNode) {
		t.Errorf("pod's node labels = %v, want %v", podNode.Labels, wantPodNode)
	}
	if got, ok := nodepool.BoundPod(podNode); !ok || got != (types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}) {
		t.Errorf("pod's node is bound to %v (%t), want %s/%s", got, ok, pod.Namespace, pod.Name)
	}
	wantStandby := map[string]string{
		nodepool.InstanceTypeLabel: "t3.small", zones.ZoneLabel: "zone-b",
		nodepool.DefaultCapacityTypeKey: nodepool.CapacitySpot, nodepool.DefaultDiskSizeKey: "50Gi",
	}
	if !maps.Equal(standby.Labels, wantStandby) {
		t.Errorf("standby node labels = %v, want %v", standby.Labels, wantStandby)
	}
	if got, ok := nodepool.BoundPod(standby); ok {
		t.Errorf("standby node is bound to %v, want unbound", got)
	}
	return podNode, standby
}

// patchUpdate applies u to the server with its merge patch and checks that
// the node read back has the labels and annotations u.Apply gives on a
// local copy. It returns the node read back.
func patchUpdate(t *testing.T, f *fixture, u nodepool.NodeUpdate) *v1.Node {
	t.Helper()
	if _, err := f.cs.CoreV1().Nodes().Patch(t.Context(), u.Node.Name, types.MergePatchType, u.MergePatch(), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch node %s with %s: %v", u.Node.Name, u.MergePatch(), err)
	}
	got := getNodes(t, f, u.Node)[0]
	want := u.Apply()
	if !maps.Equal(got.Labels, want.Labels) || !maps.Equal(got.Annotations, want.Annotations) {
		t.Errorf("node %s after patch %s: labels %v, annotations %v; Apply gives labels %v, annotations %v",
			got.Name, u.MergePatch(), got.Labels, got.Annotations, want.Labels, want.Annotations)
	}
	return got
}

// TestNodepoolBootAndMergePatch creates the nodes a Scaler boots on the
// real API server and applies the binding writes of the next rounds with
// NodeUpdate.MergePatch: the server accepts the boot specs as they are,
// and the merge patches set and clear the binding annotation exactly as
// NodeUpdate.Apply does on a local copy, leaving the other annotations and
// the labels alone.
func TestNodepoolBootAndMergePatch(t *testing.T) {
	f := newFixture(t)
	s := nodepoolScaler(t, f)
	gpu, spot := gpuPod(f, "gpu"), spotPod(f, "spot")
	podNode, standby := bootRound(t, f, s, gpu)

	// Round 2: the spot pod takes the standby node; the gpu pod keeps its
	// node without a write.
	r := compute(t, s, getNodes(t, f, podNode, standby), gpu, spot)
	if len(r.Updates) != 1 || r.Updates[0].Node.Name != standby.Name || r.Updates[0].Clear() {
		t.Fatalf("second round updates = %+v, want one binding of %s", r.Updates, standby.Name)
	}
	bound := patchUpdate(t, f, r.Updates[0])
	if got, ok := nodepool.BoundPod(bound); !ok || got.Namespace != f.ns || got.Name != spot.Name {
		t.Errorf("standby node after the binding patch is bound to %v (%t), want %s/%s", got, ok, f.ns, spot.Name)
	}
	if nodepool.NodePhase(bound) != nodepool.PhaseCreating {
		t.Errorf("binding patch changed the phase annotation: %v", bound.Annotations)
	}

	// Round 3: the spot pod is gone; its binding is cleared with a null.
	r = compute(t, s, getNodes(t, f, podNode, standby), gpu)
	var clear *nodepool.NodeUpdate
	for i := range r.Updates {
		if r.Updates[i].Node.Name == standby.Name {
			clear = &r.Updates[i]
		}
	}
	if clear == nil || !clear.Clear() {
		t.Fatalf("third round updates = %+v, want a clear of %s", r.Updates, standby.Name)
	}
	cleared := patchUpdate(t, f, *clear)
	if _, ok := cleared.Annotations[nodepool.BoundPodAnnotation]; ok {
		t.Errorf("standby node after the clear patch still has %s: %v", nodepool.BoundPodAnnotation, cleared.Annotations)
	}
	if nodepool.NodePhase(cleared) != nodepool.PhaseCreating || !maps.Equal(cleared.Labels, standby.Labels) {
		t.Errorf("clear patch changed more than the binding: labels %v, annotations %v", cleared.Labels, cleared.Annotations)
	}
	// The gpu pod's node was never written.
	if got := getNodes(t, f, podNode)[0]; got.ResourceVersion != podNode.ResourceVersion {
		t.Errorf("pod's node written (resourceVersion %s → %s) although its binding held", podNode.ResourceVersion, got.ResourceVersion)
	}

	// A clear of a node that has no annotations at all is a no-op on both
	// paths.
	bare := cleared.DeepCopy()
	bare.Annotations = nil
	bare, err := f.cs.CoreV1().Nodes().Update(t.Context(), bare, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("strip the annotations of %s: %v", cleared.Name, err)
	}
	if got := patchUpdate(t, f, nodepool.NodeUpdate{Node: bare}); len(got.Annotations) != 0 {
		t.Errorf("clear of an unannotated node left annotations %v", got.Annotations)
	}
}

// conflictingNodes is a NodeAPI on the real API server that, when armed,
// changes the node behind the caller's back just before the caller's next
// update, so that the update carries a stale resourceVersion and gets a
// real 409.
type conflictingNodes struct {
	nodepool.ClientsetNodes
	other kubernetes.Interface

	mu        sync.Mutex
	armed     bool
	updates   int
	conflicts int
}

func (c *conflictingNodes) arm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = true
}

func (c *conflictingNodes) counts() (updates, conflicts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.updates, c.conflicts
}

func (c *conflictingNodes) UpdateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	c.mu.Lock()
	armed := c.armed
	c.armed = false
	c.updates++
	c.mu.Unlock()
	if armed {
		patch := []byte(`{"metadata":{"annotations":{"e2e.volbind.io/behind-the-back":"` + node.ResourceVersion + `"}}}`)
		if _, err := c.other.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return nil, err
		}
	}
	n, err := c.ClientsetNodes.UpdateNode(ctx, node)
	if apierrors.IsConflict(err) {
		c.mu.Lock()
		c.conflicts++
		c.mu.Unlock()
	}
	return n, err
}

// TestNodepoolDispenserConflict claims a bound node through the Dispenser
// on the real API server while another writer changes the node between
// the Dispenser's read and its update: the update gets a real 409, the
// Dispenser reads the node again and claims it, and the other writer's
// change survives. Returning the used node after another such conflict
// sends it to cleanup and keeps its binding.
func TestNodepoolDispenserConflict(t *testing.T) {
	f := newFixture(t)
	s := nodepoolScaler(t, f)
	gpu := gpuPod(f, "gpu")
	podNode, _ := bootRound(t, f, s, gpu)

	// The caller's boot code marks the machine Available once it is up.
	avail := []byte(`{"metadata":{"annotations":{"` + nodepool.PhaseAnnotation + `":"` + string(nodepool.PhaseAvailable) + `"}}}`)
	if _, err := f.cs.CoreV1().Nodes().Patch(t.Context(), podNode.Name, types.MergePatchType, avail, metav1.PatchOptions{}); err != nil {
		t.Fatalf("mark %s Available: %v", podNode.Name, err)
	}
	r := compute(t, s, getNodes(t, f, podNode), gpu)
	if len(r.Bindings) != 1 || r.Bindings[0].Node.Name != podNode.Name || r.Bindings[0].Pod != gpu {
		t.Fatalf("round bindings = %+v, want the gpu pod on %s", r.Bindings, podNode.Name)
	}
	api := &conflictingNodes{ClientsetNodes: nodepool.ClientsetNodes{Client: f.cs}, other: newClientAs(t, 100, 200, "volbind-e2e-other")}
	d := nodepool.NewDispenser(api)
	d.Publish(r)

	api.arm()
	reply, err := d.Request(t.Context(), gpu)
	if err != nil || reply.Status != nodepool.StatusBound || reply.Node == nil || reply.Node.Name != podNode.Name {
		t.Fatalf("Request = %+v, %v; want %s Bound", reply, err, podNode.Name)
	}
	if updates, conflicts := api.counts(); updates != 2 || conflicts != 1 {
		t.Errorf("Request made %d updates with %d conflicts, want 2 with 1 real 409", updates, conflicts)
	}
	claimed := getNodes(t, f, podNode)[0]
	if p := nodepool.NodePhase(claimed); p != nodepool.PhaseClaimed {
		t.Errorf("node %s phase = %s after Request, want %s", claimed.Name, p, nodepool.PhaseClaimed)
	}
	if got, ok := nodepool.BoundPod(claimed); !ok || got.Namespace != f.ns || got.Name != gpu.Name {
		t.Errorf("node %s bound to %v (%t) after Request, want %s/%s", claimed.Name, got, ok, f.ns, gpu.Name)
	}
	if _, ok := claimed.Annotations["e2e.volbind.io/behind-the-back"]; !ok {
		t.Errorf("Request overwrote the other writer's annotation: %v", claimed.Annotations)
	}
	if claimed.ResourceVersion != reply.Node.ResourceVersion {
		t.Errorf("Request returned resourceVersion %s, the server has %s", reply.Node.ResourceVersion, claimed.ResourceVersion)
	}

	api.arm()
	if err := d.Return(t.Context(), podNode.Name, false); err != nil {
		t.Fatalf("Return: %v", err)
	}
	if updates, conflicts := api.counts(); updates != 4 || conflicts != 2 {
		t.Errorf("after Return: %d updates with %d conflicts, want 4 with 2 real 409s", updates, conflicts)
	}
	returned := getNodes(t, f, podNode)[0]
	if p := nodepool.NodePhase(returned); p != nodepool.PhaseCleaning {
		t.Errorf("node %s phase = %s after Return of a used node, want %s", returned.Name, p, nodepool.PhaseCleaning)
	}
	if got, ok := nodepool.BoundPod(returned); !ok || got.Name != gpu.Name {
		t.Errorf("Return of a used node dropped its binding: %v", returned.Annotations)
	}
	if !maps.Equal(returned.Labels, podNode.Labels) {
		t.Errorf("Dispenser writes changed the labels: %v, want %v", returned.Labels, podNode.Labels)
	}
}
