package nodepool

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/zones"
)

// Extra label keys of the tests, standing for kip's resource flags.
const (
	privateIPKey = "example.com/private-ip-only"
	gpuKey       = "example.com/gpu"
)

// podOpt and nodeOpt tweak test objects.
type podOpt func(*v1.Pod)
type nodeOpt func(*v1.Node)

func newPod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func sel(kv ...string) podOpt {
	return func(p *v1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func instance(t string) podOpt { return sel(InstanceTypeLabel, t) }
func spotPod() podOpt          { return sel(DefaultCapacityTypeKey, CapacitySpot) }
func privateIPPod() podOpt     { return sel(privateIPKey, "true") }
func zonePod(z string) podOpt  { return sel(zones.ZoneLabel, z) }

// affinity adds a required node affinity term per call (terms are ORed).
func affinity(reqs ...v1.NodeSelectorRequirement) podOpt {
	return func(p *v1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{}}}
		}
		ns := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, v1.NodeSelectorTerm{MatchExpressions: reqs})
	}
}

func req(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func disk(q string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse(q)},
		}})
	}
}

func podPhase(ph v1.PodPhase) podOpt { return func(p *v1.Pod) { p.Status.Phase = ph } }

func newNode(name string, opts ...nodeOpt) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{},
		Annotations: map[string]string{PhaseAnnotation: string(PhaseAvailable)}}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func lbl(kv ...string) nodeOpt {
	return func(n *v1.Node) {
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

func nodeType(t string) nodeOpt  { return lbl(InstanceTypeLabel, t) }
func spotNode() nodeOpt          { return lbl(DefaultCapacityTypeKey, CapacitySpot) }
func onDemandNode() nodeOpt      { return lbl(DefaultCapacityTypeKey, CapacityOnDemand) }
func privateIPNode() nodeOpt     { return lbl(privateIPKey, "true") }
func zoneNode(z string) nodeOpt  { return lbl(zones.ZoneLabel, z) }
func phase(p Phase) nodeOpt      { return func(n *v1.Node) { n.Annotations[PhaseAnnotation] = string(p) } }
func boundTo(pod string) nodeOpt { return func(n *v1.Node) { n.Annotations[BoundPodAnnotation] = pod } }
func diskNode(q string) nodeOpt  { return lbl(DefaultDiskSizeKey, q) }

// shapeString names a node's shape for multiset comparison: instance type,
// capacity type, private-IP flag, GPU, zone and disk size.
func shapeString(n *v1.Node) string {
	l := n.Labels
	ct := l[DefaultCapacityTypeKey]
	if ct == "" {
		ct = CapacityOnDemand
	}
	parts := []string{l[InstanceTypeLabel], ct}
	if l[privateIPKey] != "" {
		parts = append(parts, "private")
	}
	if l[gpuKey] != "" {
		parts = append(parts, "gpu="+l[gpuKey])
	}
	if z := l[zones.ZoneLabel]; z != "" {
		parts = append(parts, "zone="+z)
	}
	if d := l[DefaultDiskSizeKey]; d != "" {
		parts = append(parts, "disk="+d)
	}
	return strings.Join(parts, "/")
}

// shapes returns the sorted multiset of the nodes' shapes.
func shapes(nodes []*v1.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, shapeString(n))
	}
	slices.Sort(out)
	return out
}

func bootNodes(r *Round) []*v1.Node {
	out := make([]*v1.Node, 0, len(r.Boots))
	for _, b := range r.Boots {
		out = append(out, b.Node)
	}
	return out
}

func mustNew(t testing.TB, cfg Config) *Scaler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func mustCompute(t testing.TB, s *Scaler, nodes []*v1.Node, pods []*v1.Pod) *Round {
	t.Helper()
	r, err := s.Compute(nodes, pods)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	checkRound(t, r)
	return r
}

// checkRound checks invariants every Round must hold: no node or pod used
// twice, and every node in at most one of bindings, standby and stop.
func checkRound(t testing.TB, r *Round) {
	t.Helper()
	seenNode := map[*v1.Node]string{}
	use := func(n *v1.Node, as string) {
		if prev, ok := seenNode[n]; ok {
			t.Errorf("node %s is in %s and %s", n.Name, prev, as)
		}
		seenNode[n] = as
	}
	seenPod := map[*v1.Pod]string{}
	usePod := func(p *v1.Pod, as string) {
		if prev, ok := seenPod[p]; ok {
			t.Errorf("pod %s is in %s and %s", p.Name, prev, as)
		}
		seenPod[p] = as
	}
	for _, b := range r.Bindings {
		use(b.Node, "Bindings")
		usePod(b.Pod, "Bindings")
	}
	for _, n := range r.Standby {
		use(n, "Standby")
	}
	for _, n := range r.Stop {
		use(n, "Stop")
	}
	for _, b := range r.Boots {
		if b.Pod != nil {
			usePod(b.Pod, "Boots")
			if got, _ := BoundPod(b.Node); got != podKey(b.Pod) {
				t.Errorf("boot for pod %s is annotated %v", b.Pod.Name, got)
			}
		}
	}
	for _, u := range r.Unbound {
		usePod(u.Pod, "Unbound")
		if u.Err == nil {
			t.Errorf("unbound pod %s has no error", u.Pod.Name)
		}
	}
}

func names(nodes []*v1.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

func bindingStrings(r *Round) []string {
	out := make([]string, 0, len(r.Bindings))
	for _, b := range r.Bindings {
		out = append(out, fmt.Sprintf("%s->%s", b.Pod.Name, b.Node.Name))
	}
	slices.Sort(out)
	return out
}

var fakeNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
