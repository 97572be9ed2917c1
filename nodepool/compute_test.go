package nodepool

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestComputeBindings(t *testing.T) {
	t.Parallel()
	const a = "t2.A"
	tests := []struct {
		name     string
		cfg      Config
		pods     []*v1.Pod
		nodes    []*v1.Node
		bindings []string
		updates  []string
		stop     []string
		standby  []string
		boots    int
	}{
		{
			// kip's greedy order lets the wildcard pod take the only node
			// the constrained pod can use.
			name:     "wildcard pod does not take the constrained pod's node",
			pods:     []*v1.Pod{newPod("a-any"), newPod("b-gpu", sel(gpuKey, "1"))},
			nodes:    []*v1.Node{newNode("n1", lbl(gpuKey, "1")), newNode("n2")},
			cfg:      Config{ExtraKeys: []string{gpuKey}, DefaultInstanceType: a},
			bindings: []string{"a-any->n2", "b-gpu->n1"},
			updates:  []string{"n2=a-any", "n1=b-gpu"},
		},
		{
			name:     "existing binding kept, no write",
			pods:     []*v1.Pod{newPod("p", instance(a))},
			nodes:    []*v1.Node{newNode("n1", nodeType(a), boundTo("default/p"), phase(PhaseCreating)), newNode("n0", nodeType(a))},
			bindings: []string{"p->n1"},
			stop:     []string{"n0"},
		},
		{
			name:     "binding to a pod that no longer waits is cleared",
			pods:     []*v1.Pod{newPod("p", instance(a), podPhase(v1.PodRunning))},
			nodes:    []*v1.Node{newNode("n1", nodeType(a), boundTo("default/p"))},
			updates:  []string{"n1="},
			stop:     []string{"n1"},
			bindings: []string{},
		},
		{
			name:     "binding to a deleted pod is cleared and the node rebound",
			pods:     []*v1.Pod{newPod("q", instance(a))},
			nodes:    []*v1.Node{newNode("n1", nodeType(a), boundTo("default/gone"))},
			bindings: []string{"q->n1"},
			updates:  []string{"n1=q"},
		},
		{
			name:     "malformed binding cleared",
			nodes:    []*v1.Node{newNode("n1", nodeType(a), boundTo("no-slash"))},
			updates:  []string{"n1="},
			stop:     []string{"n1"},
			bindings: []string{},
		},
		{
			name:     "two nodes bound to one pod: first by name kept",
			pods:     []*v1.Pod{newPod("p", instance(a))},
			nodes:    []*v1.Node{newNode("n2", nodeType(a), boundTo("default/p")), newNode("n1", nodeType(a), boundTo("default/p"))},
			bindings: []string{"p->n1"},
			updates:  []string{"n2="},
			stop:     []string{"n2"},
		},
		{
			name:     "binding to a pod the node no longer fits is cleared",
			pods:     []*v1.Pod{newPod("p", instance("other"))},
			nodes:    []*v1.Node{newNode("n1", nodeType(a), boundTo("default/p"))},
			bindings: []string{},
			updates:  []string{"n1="},
			stop:     []string{"n1"},
			boots:    1,
		},
		{
			name: "claimed, cleaning and terminating nodes",
			pods: []*v1.Pod{newPod("p", instance(a))},
			nodes: []*v1.Node{
				newNode("claimed", nodeType(a), phase(PhaseClaimed)),
				newNode("cleaning", nodeType(a), phase(PhaseCleaning), boundTo("default/old")),
				newNode("terminating", nodeType(a), phase(PhaseTerminating)),
			},
			bindings: []string{},
			stop:     []string{"cleaning"},
			boots:    1,
		},
		{
			name:     "available node preferred over creating",
			pods:     []*v1.Pod{newPod("p", instance(a))},
			nodes:    []*v1.Node{newNode("n1", nodeType(a), phase(PhaseCreating)), newNode("n2", nodeType(a)), newNode("n3", nodeType(a), phase(PhaseCreated))},
			bindings: []string{"p->n2"},
			updates:  []string{"n2=p"},
			stop:     []string{"n1", "n3"},
		},
		{
			name: "node without phase annotation: ready is available",
			pods: []*v1.Pod{newPod("p", instance(a))},
			nodes: []*v1.Node{
				func() *v1.Node {
					n := newNode("n1", nodeType(a))
					delete(n.Annotations, PhaseAnnotation)
					n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
					return n
				}(),
				func() *v1.Node { n := newNode("n0", nodeType(a)); delete(n.Annotations, PhaseAnnotation); return n }(),
			},
			bindings: []string{"p->n1"},
			updates:  []string{"n1=p"},
			stop:     []string{"n0"},
		},
		{
			name:     "duplicate standby specs add up",
			cfg:      Config{Standby: []StandbySpec{{InstanceType: a, Count: 1}, {InstanceType: a, Count: 1}, {InstanceType: a, Count: 1}}},
			nodes:    []*v1.Node{newNode("n1", nodeType(a)), newNode("n2", nodeType(a))},
			standby:  []string{"n1", "n2"},
			bindings: []string{},
			boots:    1,
		},
		{
			// Both pods fit both nodes, but only n2 fits the standby spec:
			// among the maximum matchings, the one keeping n2 is chosen.
			name:     "pod leaves the standby-shaped node",
			cfg:      Config{DefaultInstanceType: a, Standby: []StandbySpec{{InstanceType: "b", Count: 1}}},
			pods:     []*v1.Pod{newPod("p", affinity(req(InstanceTypeLabel, v1.NodeSelectorOpIn, a, "b")))},
			nodes:    []*v1.Node{newNode("n2", nodeType("b")), newNode("n1", nodeType(a))},
			bindings: []string{"p->n1"},
			updates:  []string{"n1=p"},
			standby:  []string{"n2"},
		},
		{
			name: "matchFields pins a node by name",
			pods: []*v1.Pod{newPod("p", func(p *v1.Pod) {
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", v1.NodeSelectorOpIn, "n2")}}}}}}
			}, instance(a))},
			nodes:    []*v1.Node{newNode("n1", nodeType(a)), newNode("n2", nodeType(a)), newNode("n3", nodeType(a))},
			bindings: []string{"p->n2"},
			updates:  []string{"n2=p"},
			stop:     []string{"n1", "n3"},
		},
		{
			name:     "pod names a key outside the configured keys",
			pods:     []*v1.Pod{newPod("p", instance(a), sel("team", "blue"))},
			nodes:    []*v1.Node{newNode("n1", nodeType(a), lbl("team", "red")), newNode("n2", nodeType(a), lbl("team", "blue"))},
			bindings: []string{"p->n2"},
			updates:  []string{"n2=p"},
			stop:     []string{"n1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mustNew(t, tc.cfg)
			r := mustCompute(t, s, tc.nodes, tc.pods)
			if tc.bindings != nil {
				if diff := cmp.Diff(tc.bindings, bindingStrings(r), cmpEmpty); diff != "" {
					t.Errorf("bindings (-want +got):\n%s", diff)
				}
			}
			var updates []string
			for _, u := range r.Updates {
				updates = append(updates, u.Node.Name+"="+u.Pod.Name)
			}
			if diff := cmp.Diff(tc.updates, updates, cmpEmpty); diff != "" {
				t.Errorf("updates (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.stop, names(r.Stop), cmpEmpty); diff != "" {
				t.Errorf("stop (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.standby, names(r.Standby), cmpEmpty); diff != "" {
				t.Errorf("standby (-want +got):\n%s", diff)
			}
			if len(r.Boots) != tc.boots {
				t.Errorf("boots = %d, want %d", len(r.Boots), tc.boots)
			}
		})
	}
}

// cmpEmpty treats nil and empty slices alike.
var cmpEmpty = cmp.Transformer("empty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

func TestComputeErrors(t *testing.T) {
	t.Parallel()
	s := mustNew(t, Config{})
	tests := []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		want  string
	}{
		{"nil pod", nil, []*v1.Pod{newPod("a"), nil}, "pod 1 is nil"},
		{"nil node", []*v1.Node{nil}, nil, "node 0 is nil"},
		{"duplicate pod", nil, []*v1.Pod{newPod("a"), newPod("a")}, "duplicate pod default/a"},
		{"duplicate node", []*v1.Node{newNode("n"), newNode("n")}, nil, `duplicate node "n"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Compute(tc.nodes, tc.pods)
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Compute() error = %v, want ErrInvalidInput naming %q", err, tc.want)
			}
		})
	}
}

func TestComputeUnbound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		pod  *v1.Pod
		want error
	}{
		{"no instance type, no default", Config{}, newPod("p"), ErrUnsatisfiable},
		{"Exists needs an invented value", Config{}, newPod("p", instance("a"), affinity(req("team", v1.NodeSelectorOpExists))), ErrUnsatisfiable},
		{"Gt needs an invented value", Config{}, newPod("p", instance("a"), affinity(req("cpus", v1.NodeSelectorOpGt, "4"))), ErrUnsatisfiable},
		{"contradiction", Config{}, newPod("p", instance("a"), affinity(req(InstanceTypeLabel, v1.NodeSelectorOpNotIn, "a"))), ErrUnsatisfiable},
		{"invalid affinity", Config{}, newPod("p", instance("a"), affinity(req("bad key!", v1.NodeSelectorOpIn, "x"))), ErrInvalidPod},
		{"matchFields only", Config{}, newPod("p", instance("a"), func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", v1.NodeSelectorOpIn, "x")}}}}}}
		}), ErrUnsatisfiable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mustNew(t, tc.cfg)
			r := mustCompute(t, s, nil, []*v1.Pod{tc.pod})
			if len(r.Boots) != 0 || len(r.Unbound) != 1 || !errors.Is(r.Unbound[0].Err, tc.want) {
				t.Fatalf("boots %v unbound %v, want one pod unbound with %v", r.Boots, r.Unbound, tc.want)
			}
			if !strings.Contains(r.Unbound[0].Err.Error(), "default/p") {
				t.Errorf("error %q does not name the pod", r.Unbound[0].Err)
			}
		})
	}
}

func TestComputeSecondTermBoots(t *testing.T) {
	t.Parallel()
	s := mustNew(t, Config{})
	// The first term cannot be booted (Exists), the second can.
	p := newPod("p", affinity(req("team", v1.NodeSelectorOpExists)), affinity(req(InstanceTypeLabel, v1.NodeSelectorOpIn, "m5", "c5")))
	r := mustCompute(t, s, nil, []*v1.Pod{p})
	if len(r.Boots) != 1 || r.Boots[0].Node.Labels[InstanceTypeLabel] != "c5" {
		t.Fatalf("boots = %+v, want one c5 node", r.Boots)
	}
	if r.Boots[0].Node.GenerateName != DefaultGenerateName || NodePhase(r.Boots[0].Node) != PhaseCreating {
		t.Errorf("boot node meta = %+v", r.Boots[0].Node.ObjectMeta)
	}
}

// TestComputeBootCapFair: the per-round cap picks round-robin across
// shapes, so a shape with many pods does not starve the others, and an
// unavailable shape does not use up the cap.
func TestComputeBootCapFair(t *testing.T) {
	t.Parallel()
	lim := NewBootLimiter(BootLimiterConfig{})
	lim.MarkUnavailable(Shape{InstanceType: "dead", CapacityType: CapacityOnDemand})
	s := mustNew(t, Config{MaxBootsPerRound: 4, Limiter: lim, Standby: []StandbySpec{{InstanceType: "sb", Count: 3}}})
	var pods []*v1.Pod
	for i := range 20 {
		pods = append(pods, newPod(fmt.Sprintf("big-%02d", i), instance("big")))
		pods = append(pods, newPod(fmt.Sprintf("dead-%02d", i), instance("dead")))
	}
	pods = append(pods, newPod("small-0", instance("small")), newPod("mid-0", instance("mid")), newPod("mid-1", instance("mid")))
	r := mustCompute(t, s, nil, pods)
	var got []string
	for _, b := range r.Boots {
		got = append(got, b.Pod.Name)
	}
	want := []string{"big-00", "mid-0", "small-0", "big-01"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("booted (-want +got):\n%s", diff)
	}
	counts := map[error]int{}
	for _, u := range r.Unbound {
		switch {
		case errors.Is(u.Err, ErrShapeUnavailable):
			counts[ErrShapeUnavailable]++
		case errors.Is(u.Err, ErrBootLimit):
			counts[ErrBootLimit]++
		}
	}
	if counts[ErrShapeUnavailable] != 20 || counts[ErrBootLimit] != 19 {
		t.Errorf("unbound: %d unavailable, %d over the cap; want 20, 19", counts[ErrShapeUnavailable], counts[ErrBootLimit])
	}

	// With room left, standby refills follow the pods.
	s = mustNew(t, Config{MaxBootsPerRound: 3, Standby: []StandbySpec{{InstanceType: "sb", Count: 3}, {InstanceType: "sc", Count: 1}}})
	r = mustCompute(t, s, nil, []*v1.Pod{newPod("p", instance("x"))})
	got = got[:0]
	for _, b := range r.Boots {
		got = append(got, fmt.Sprintf("%s/%d", b.Node.Labels[InstanceTypeLabel], b.Standby))
	}
	if diff := cmp.Diff([]string{"x/-1", "sb/0", "sc/1"}, got); diff != "" {
		t.Errorf("boots (-want +got):\n%s", diff)
	}

	// Negative: no cap.
	s = mustNew(t, Config{MaxBootsPerRound: -1})
	if r := mustCompute(t, s, nil, pods[:40]); len(r.Boots) != 40 {
		t.Errorf("uncapped boots = %d, want 40", len(r.Boots))
	}
}

// TestComputeDeterministicAndPure: the round does not depend on input order
// and does not modify its inputs.
func TestComputeDeterministicAndPure(t *testing.T) {
	t.Parallel()
	nodes, pods := benchCluster(300)
	for i := 0; i < len(nodes); i += 7 {
		nodes[i].Annotations[BoundPodAnnotation] = "default/" + pods[(i*13)%len(pods)].Name
	}
	nodes[5].Annotations[PhaseAnnotation] = string(PhaseCreating)
	s := mustNew(t, Config{Standby: []StandbySpec{{InstanceType: "m5.1xlarge", Count: 4}, {InstanceType: "m5.2xlarge", CapacityType: CapacitySpot, Count: 2}}, MaxBootsPerRound: -1})
	before := make([]*v1.Node, len(nodes))
	for i, n := range nodes {
		before[i] = n.DeepCopy()
	}
	podsBefore := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		podsBefore[i] = p.DeepCopy()
	}
	want := summary(mustCompute(t, s, nodes, pods))
	r := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		sn, sp := append([]*v1.Node(nil), nodes...), append([]*v1.Pod(nil), pods...)
		r.Shuffle(len(sn), func(i, j int) { sn[i], sn[j] = sn[j], sn[i] })
		r.Shuffle(len(sp), func(i, j int) { sp[i], sp[j] = sp[j], sp[i] })
		if diff := cmp.Diff(want, summary(mustCompute(t, s, sn, sp))); diff != "" {
			t.Fatalf("round differs with shuffled input (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(before, nodes); diff != "" {
		t.Errorf("Compute modified nodes:\n%s", diff)
	}
	if diff := cmp.Diff(podsBefore, pods); diff != "" {
		t.Errorf("Compute modified pods:\n%s", diff)
	}
}

func summary(r *Round) []string {
	var out []string
	for _, b := range r.Bindings {
		out = append(out, "bind "+b.Pod.Name+" "+b.Node.Name)
	}
	for _, b := range r.Boots {
		pod := ""
		if b.Pod != nil {
			pod = b.Pod.Name
		}
		out = append(out, fmt.Sprintf("boot %s %d %v", pod, b.Standby, b.Node.Labels))
	}
	for _, n := range r.Stop {
		out = append(out, "stop "+n.Name)
	}
	for _, n := range r.Standby {
		out = append(out, "standby "+n.Name)
	}
	for _, u := range r.Updates {
		out = append(out, "update "+u.Node.Name+" "+u.Pod.String())
	}
	for _, u := range r.Unbound {
		out = append(out, "unbound "+u.Pod.Name+" "+u.Err.Error())
	}
	return out
}

func TestNodeUpdate(t *testing.T) {
	t.Parallel()
	n := newNode("n", boundTo("default/old"))
	set := NodeUpdate{Node: n, Pod: types.NamespacedName{Namespace: "ns", Name: "p"}}
	if got := set.Apply().Annotations[BoundPodAnnotation]; got != "ns/p" {
		t.Errorf("Apply() annotation = %q, want ns/p", got)
	}
	if got := string(set.MergePatch()); got != `{"metadata":{"annotations":{"nodepool.volbind.io/bound-pod":"ns/p"}}}` {
		t.Errorf("MergePatch() = %s", got)
	}
	clear := NodeUpdate{Node: n}
	if _, ok := clear.Apply().Annotations[BoundPodAnnotation]; ok || !clear.Clear() {
		t.Errorf("clear Apply() kept the annotation")
	}
	if got := string(clear.MergePatch()); got != `{"metadata":{"annotations":{"nodepool.volbind.io/bound-pod":null}}}` {
		t.Errorf("clear MergePatch() = %s", got)
	}
	if n.Annotations[BoundPodAnnotation] != "default/old" {
		t.Errorf("Apply modified its input")
	}
	bare := NodeUpdate{Node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}, Pod: set.Pod}
	if got := bare.Apply().Annotations[BoundPodAnnotation]; got != "ns/p" {
		t.Errorf("Apply() on a node without annotations = %q", got)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"standby without instance type", Config{Standby: []StandbySpec{{Count: 1}}}},
		{"negative count", Config{Standby: []StandbySpec{{InstanceType: "a", Count: -1}}}},
		{"standby label on instance type", Config{Standby: []StandbySpec{{InstanceType: "a", Labels: map[string]string{InstanceTypeLabel: "b"}}}}},
		{"fixed disk without size", Config{FixedSizeDisk: true}},
		{"empty extra key", Config{ExtraKeys: []string{""}}},
		{"extra key is a shape key", Config{ExtraKeys: []string{InstanceTypeLabel}}},
		{"negative disk size", Config{DefaultDiskSize: resource.MustParse("-1Gi")}},
		{"extra key not a label key", Config{ExtraKeys: []string{"gpu type"}}},
		{"capacity type key not a label key", Config{CapacityTypeKey: "-spot"}},
		{"default instance type not a label value", Config{DefaultInstanceType: "m5 large"}},
		{"standby instance type not a label value", Config{Standby: []StandbySpec{{InstanceType: "m5/large", Count: 1}}}},
		{"standby label value not a label value", Config{Standby: []StandbySpec{{InstanceType: "a", Labels: map[string]string{"zone": "a b"}}}}},
		{"standby label key not a label key", Config{Standby: []StandbySpec{{InstanceType: "a", Labels: map[string]string{"a/b/c": "x"}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("New() error = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestIsWaiting(t *testing.T) {
	t.Parallel()
	deleted := newPod("p")
	deleted.DeletionTimestamp = &metav1.Time{}
	scheduled := newPod("p")
	scheduled.Spec.NodeName = "virtual-kubelet"
	tests := []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"pending", newPod("p"), true},
		{"no phase yet", newPod("p", podPhase("")), true},
		{"on the virtual node, pending", scheduled, true},
		{"running", newPod("p", podPhase(v1.PodRunning)), false},
		{"failed", newPod("p", podPhase(v1.PodFailed)), false},
		{"being deleted", deleted, false},
	}
	for _, tc := range tests {
		if got := IsWaiting(tc.pod); got != tc.want {
			t.Errorf("%s: IsWaiting() = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A custom predicate replaces the default.
	s := mustNew(t, Config{IsWaiting: func(p *v1.Pod) bool { return p.Labels["wait"] == "yes" }})
	p := newPod("p", instance("a"))
	if r := mustCompute(t, s, nil, []*v1.Pod{p}); len(r.Boots) != 0 {
		t.Errorf("custom IsWaiting ignored: boots %v", r.Boots)
	}
}

// TestComputeStaleBindingWrites: a node whose recorded binding no longer
// holds gets exactly one write per round: the new pod's binding when the
// round gives it one (no clear beside it), nothing when its annotation
// already names that pod, and a clear otherwise.
func TestComputeStaleBindingWrites(t *testing.T) {
	t.Parallel()
	noNamespace := func(p *v1.Pod) { p.Namespace = "" }
	tests := []struct {
		name     string
		pods     []*v1.Pod
		nodes    []*v1.Node
		bindings []string
		updates  []string
	}{{
		name:     "stale node rebound to another pod",
		pods:     []*v1.Pod{newPod("p")},
		nodes:    []*v1.Node{newNode("n", boundTo("default/gone"))},
		bindings: []string{"p->n"},
		updates:  []string{"n=default/p"},
	}, {
		name:     "stale node not rebound is cleared",
		nodes:    []*v1.Node{newNode("n", boundTo("default/gone"))},
		bindings: nil,
		updates:  []string{"n="},
	}, {
		// "/p" does not parse as a binding (no namespace), so the binding is
		// stale; the round binds the same pod again and the annotation
		// already says so.
		name:     "stale node rebound to the pod it names",
		pods:     []*v1.Pod{newPod("p", noNamespace)},
		nodes:    []*v1.Node{newNode("n", boundTo("/p"))},
		bindings: []string{"p->n"},
		updates:  nil,
	}, {
		name:     "second node naming a kept pod is rebound to another",
		pods:     []*v1.Pod{newPod("p"), newPod("q")},
		nodes:    []*v1.Node{newNode("n1", boundTo("default/p")), newNode("n2", boundTo("default/p"))},
		bindings: []string{"p->n1", "q->n2"},
		updates:  []string{"n2=default/q"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustCompute(t, mustNew(t, Config{}), tc.nodes, tc.pods)
			if diff := cmp.Diff(tc.bindings, bindingStrings(r), cmpEmpty); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
			var updates []string
			for _, u := range r.Updates {
				pod := ""
				if !u.Clear() {
					pod = u.Pod.String()
				}
				updates = append(updates, u.Node.Name+"="+pod)
			}
			if diff := cmp.Diff(tc.updates, updates, cmpEmpty); diff != "" {
				t.Errorf("updates (-want +got):\n%s", diff)
			}
		})
	}
}
