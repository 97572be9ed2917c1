package nodepool

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

// This file ports elotl kip's nodemanager scaler tests
// (scaling_algorithm_test.go and node_scaler_test.go) as data. kip's pod
// spot policy and resource flags become node selectors; its node fields
// become labels. Started and stopped nodes are compared as multisets of
// shapes, not names.

// kipPod and kipNode are kip's mkPod and mkNode: a template that builds a
// fresh object with a given name, so a row may list a node twice.
type kipPod func(name string) *v1.Pod
type kipNode func(name string) *v1.Node

func mkPod(inst string, privateIP, spot bool, opts ...podOpt) kipPod {
	return func(name string) *v1.Pod {
		o := append([]podOpt{instance(inst)}, opts...)
		if privateIP {
			o = append(o, privateIPPod())
		}
		if spot {
			o = append(o, spotPod())
		}
		return newPod(name, o...)
	}
}

func mkNode(inst string, privateIP, spot bool, opts ...nodeOpt) kipNode {
	return func(name string) *v1.Node {
		o := append([]nodeOpt{nodeType(inst)}, opts...)
		if privateIP {
			o = append(o, privateIPNode())
		}
		if spot {
			o = append(o, spotNode())
		} else {
			o = append(o, onDemandNode())
		}
		return newNode(name, o...)
	}
}

// kipRow is one row of the ported scaler table. Pods and nodes are named
// by their position in the row (p0.., n0..), which the bindings use.
type kipRow struct {
	name        string
	standby     []StandbySpec
	unavailable []Shape
	pods        []kipPod
	nodes       []kipNode
	start, stop []kipNode
	unbound     int
	// bindings, when set, are the expected "pod->node" pairs.
	bindings []string
	// updates, when set, are the expected "node=pod" writes ("node=" clears).
	updates []string
	cfg     func(*Config)
}

func (row kipRow) build() (pods []*v1.Pod, nodes []*v1.Node) {
	for i, p := range row.pods {
		pods = append(pods, p(fmt.Sprintf("p%d", i)))
	}
	for i, n := range row.nodes {
		nodes = append(nodes, n(fmt.Sprintf("n%d", i)))
	}
	return pods, nodes
}

func expectShapes(tmpl []kipNode) []string {
	nodes := make([]*v1.Node, 0, len(tmpl))
	for i, n := range tmpl {
		nodes = append(nodes, n(fmt.Sprintf("want%d", i)))
	}
	return shapes(nodes)
}

func runKipRows(t *testing.T, rows []kipRow) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			lim := NewBootLimiter(BootLimiterConfig{Clock: testingclock.NewFakePassiveClock(fakeNow)})
			for _, sh := range row.unavailable {
				lim.MarkUnavailable(sh)
			}
			cfg := Config{ExtraKeys: []string{privateIPKey, gpuKey}, Standby: row.standby, Limiter: lim}
			if row.cfg != nil {
				row.cfg(&cfg)
			}
			s := mustNew(t, cfg)
			pods, nodes := row.build()
			r := mustCompute(t, s, nodes, pods)
			if diff := cmp.Diff(expectShapes(row.start), shapes(bootNodes(r))); diff != "" {
				t.Errorf("started nodes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(expectShapes(row.stop), shapes(r.Stop)); diff != "" {
				t.Errorf("stopped nodes (-want +got):\n%s", diff)
			}
			if len(r.Unbound) != row.unbound {
				t.Errorf("unbound pods = %v, want %d", r.Unbound, row.unbound)
			}
			if row.bindings != nil {
				if diff := cmp.Diff(row.bindings, bindingStrings(r)); diff != "" {
					t.Errorf("bindings (-want +got):\n%s", diff)
				}
			}
			if row.updates != nil {
				var got []string
				for _, u := range r.Updates {
					got = append(got, u.Node.Name+"="+u.Pod.Name)
				}
				if diff := cmp.Diff(row.updates, got); diff != "" {
					t.Errorf("updates (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestKipScalerTable(t *testing.T) {
	t.Parallel()
	const a, b, c = "t2.A", "t2.B", "t2.C"
	// TestOnDemandScalingNoStandby
	pa1, pa2, pb1 := mkPod(a, false, false), mkPod(a, false, false), mkPod(b, true, false)
	na1, nb1 := mkNode(a, false, false), mkNode(b, true, false)
	// TestSpotScaling
	sa1 := mkPod(a, false, true)
	sa4 := mkPod(a, false, false, podPhase(v1.PodFailed))
	sb1, sc1 := mkPod(b, false, true), mkPod(c, false, true)
	spotA, spotB := mkNode(a, false, true), mkNode(b, false, true)
	standbyA := []StandbySpec{
		{InstanceType: a, Count: 2},
		// kip: "this tests for a bug where we buffered a node for a pool
		// with a count of 0".
		{InstanceType: a, Count: 0},
	}
	unavailC := []Shape{{InstanceType: c, CapacityType: CapacitySpot}}
	rows := []kipRow{
		// TestOnDemandScalingNoStandby
		{name: "no pods no nodes"},
		{name: "1 pod no nodes boots 1", pods: []kipPod{pa1}, start: []kipNode{na1}},
		{name: "2 different pods boot 2", pods: []kipPod{pa1, pb1}, start: []kipNode{na1, nb1}},
		{name: "2 different pods 1 matching node boots 1", pods: []kipPod{pa1, pb1}, nodes: []kipNode{na1}, start: []kipNode{nb1},
			bindings: []string{"p0->n0"}, updates: []string{"n0=p0"}},
		{name: "2 same pods 1 node boots 1", pods: []kipPod{pa1, pa2}, nodes: []kipNode{na1}, start: []kipNode{na1}},
		{name: "1 idle node stopped", nodes: []kipNode{na1}, stop: []kipNode{na1}},
		{name: "2 identical idle nodes stopped", nodes: []kipNode{na1, na1}, stop: []kipNode{na1, na1}},
		{name: "2 different idle nodes stopped", nodes: []kipNode{na1, nb1}, stop: []kipNode{na1, nb1}},
		{name: "2 pods one matching node one other", pods: []kipPod{pa1, pa2}, nodes: []kipNode{na1, nb1}, start: []kipNode{na1}, stop: []kipNode{nb1}},
		// TestOnDemandScalingWithStandby
		{name: "standby fills empty pool", standby: standbyA, start: []kipNode{na1, na1}},
		{name: "pod takes standby node and it is refilled", standby: standbyA, pods: []kipPod{pa1}, nodes: []kipNode{na1, na1}, start: []kipNode{na1}},
		{name: "standby surplus stopped", standby: standbyA, nodes: []kipNode{na1, na1, na1}, stop: []kipNode{na1}},
		{name: "other pod boots and standby refilled", standby: standbyA, pods: []kipPod{pb1}, nodes: []kipNode{na1}, start: []kipNode{na1, nb1}},
		// TestSpotScaling
		{name: "spot no pods no nodes", unavailable: unavailC},
		{name: "spot pod boots spot node", unavailable: unavailC, pods: []kipPod{sa1}, start: []kipNode{spotA}},
		{name: "spot and on-demand pods boot one each", unavailable: unavailC, pods: []kipPod{sa1, pa2}, start: []kipNode{spotA, na1}},
		{name: "spot pod with spot node", unavailable: unavailC, pods: []kipPod{sa1}, nodes: []kipNode{spotA}},
		{name: "spot pod ignores on-demand node", unavailable: unavailC, pods: []kipPod{sa1}, nodes: []kipNode{na1}, start: []kipNode{spotA}, stop: []kipNode{na1}},
		{name: "2 spot pods 2 spot nodes", unavailable: unavailC, pods: []kipPod{sa1, sa1}, nodes: []kipNode{spotA, spotA}},
		{name: "failed pod needs nothing", unavailable: unavailC, pods: []kipPod{sa4}},
		{name: "idle spot node stopped", unavailable: unavailC, nodes: []kipNode{spotA}, stop: []kipNode{spotA}},
		{name: "spare spot node stopped", unavailable: unavailC, pods: []kipPod{sa1}, nodes: []kipNode{spotA, spotA}, stop: []kipNode{spotA}},
		{name: "2 spot pods of 2 types boot 2", unavailable: unavailC, pods: []kipPod{sa1, sb1}, start: []kipNode{spotA, spotB}},
		{name: "unavailable spot shape boots nothing", unavailable: unavailC, pods: []kipPod{sc1}, unbound: 1},
		// node_scaler_test.go
		{name: "unbinds and rebinds", pods: []kipPod{pa1},
			nodes:    []kipNode{mkNode(a, false, false, boundTo("default/doesn't-exist"))},
			bindings: []string{"p0->n0"}, updates: []string{"n0=p0"}},
		{name: "pod matches standby node", standby: []StandbySpec{{InstanceType: a, Count: 1}}, pods: []kipPod{pa1}, nodes: []kipNode{na1},
			start: []kipNode{na1}, bindings: []string{"p0->n0"}},
		{name: "full standby pool", standby: []StandbySpec{{InstanceType: "t3.nano", Count: 2}},
			nodes: []kipNode{mkNode("t3.nano", false, false), mkNode("t3.nano", false, false)}},
	}
	if len(rows) < 26 {
		t.Fatalf("ported %d rows, kip has at least 26", len(rows))
	}
	runKipRows(t, rows)
}

// TestKipDiskSize ports kip's disk-size cases (TestNodeScalerDiskMatches,
// TestCreateNodeForPodVolumeSize, TestNodeMatchesStandbySpec) with a 5G
// default disk.
func TestKipDiskSize(t *testing.T) {
	t.Parallel()
	const a = "t2.A"
	fixed := func(c *Config) { c.DefaultDiskSize = resource.MustParse("5G"); c.FixedSizeDisk = true }
	resizable := func(c *Config) { c.DefaultDiskSize = resource.MustParse("5G") }
	p5, p6, p10, pNone := mkPod(a, false, false, disk("5G")), mkPod(a, false, false, disk("6G")), mkPod(a, false, false, disk("10G")), mkPod(a, false, false)
	n5, n6, n10, nNoLabel := mkNode(a, false, false, diskNode("5G")), mkNode(a, false, false, diskNode("6G")), mkNode(a, false, false, diskNode("10G")), mkNode(a, false, false)
	runKipRows(t, []kipRow{
		{name: "fixed: same size matches", cfg: fixed, pods: []kipPod{p5}, nodes: []kipNode{n5}, bindings: []string{"p0->n0"}},
		{name: "fixed: no request matches default", cfg: fixed, pods: []kipPod{pNone}, nodes: []kipNode{n5}, bindings: []string{"p0->n0"}},
		{name: "fixed: larger request does not match", cfg: fixed, pods: []kipPod{p6}, nodes: []kipNode{n5}, start: []kipNode{n6}, stop: []kipNode{n5}},
		{name: "fixed: smaller request does not match", cfg: fixed, pods: []kipPod{p5}, nodes: []kipNode{n6}, start: []kipNode{n5}, stop: []kipNode{n6}},
		{name: "fixed: node without label has default size", cfg: fixed, pods: []kipPod{pNone}, nodes: []kipNode{nNoLabel}, bindings: []string{"p0->n0"}},
		{name: "resizable: any size matches", cfg: resizable, pods: []kipPod{p6}, nodes: []kipNode{n5}, bindings: []string{"p0->n0"}},
		{name: "resizable: boot default size", cfg: resizable, pods: []kipPod{p10}, start: []kipNode{n5}},
		{name: "fixed: boot default size without request", cfg: fixed, pods: []kipPod{pNone}, start: []kipNode{n5}},
		{name: "fixed: boot requested size", cfg: fixed, pods: []kipPod{p10}, start: []kipNode{n10}},
		{name: "fixed: boot default size for default request", cfg: fixed, pods: []kipPod{p5}, start: []kipNode{n5}},
		{name: "standby needs default size", cfg: resizable, standby: []StandbySpec{{InstanceType: a, Count: 1}}, nodes: []kipNode{n10}, start: []kipNode{n5}, stop: []kipNode{n10}},
		{name: "standby keeps default size", cfg: resizable, standby: []StandbySpec{{InstanceType: a, Count: 1}}, nodes: []kipNode{n5}},
		{name: "standby keeps node without size label", cfg: resizable, standby: []StandbySpec{{InstanceType: a, Count: 1}}, nodes: []kipNode{nNoLabel}},
	})
}

// TestZonePlacement covers zone placement: a pod naming a zone gets a node
// there, one naming none may go anywhere, and new nodes take the pod's zone.
func TestZonePlacement(t *testing.T) {
	t.Parallel()
	const a = "t2.A"
	za, zb := mkNode(a, false, false, zoneNode("a")), mkNode(a, false, false, zoneNode("b"))
	zc := mkNode(a, false, false, zoneNode("c"))
	betaA := mkNode(a, false, false, lbl("failure-domain.beta.kubernetes.io/zone", "a"))
	anyZone, inA, inB := mkPod(a, false, false), mkPod(a, false, false, zonePod("a")), mkPod(a, false, false, zonePod("b"))
	runKipRows(t, []kipRow{
		{name: "pod in zone takes node in zone", pods: []kipPod{inA}, nodes: []kipNode{zb, za}, stop: []kipNode{zb}, bindings: []string{"p0->n1"}},
		{name: "pod without zone takes any zone", pods: []kipPod{anyZone}, nodes: []kipNode{zb}, bindings: []string{"p0->n0"}},
		{name: "pod in zone boots node in zone", pods: []kipPod{inA}, nodes: []kipNode{zb}, start: []kipNode{za}, stop: []kipNode{zb}},
		{name: "pod without zone boots node without zone", pods: []kipPod{anyZone}, start: []kipNode{mkNode(a, false, false)}},
		{name: "affinity In zones boots smallest zone", pods: []kipPod{mkPod(a, false, false, affinity(req("topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "c", "a")))},
			start: []kipNode{za}},
		{name: "affinity In zones takes any listed zone", pods: []kipPod{mkPod(a, false, false, affinity(req("topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "c", "a")))},
			nodes: []kipNode{zb, zc}, stop: []kipNode{zb}, bindings: []string{"p0->n1"}},
		{name: "affinity NotIn zone", pods: []kipPod{mkPod(a, false, false, affinity(req("topology.kubernetes.io/zone", v1.NodeSelectorOpNotIn, "a")))},
			nodes: []kipNode{za, zb}, stop: []kipNode{za}, bindings: []string{"p0->n1"}},
		{name: "beta zone key", pods: []kipPod{mkPod(a, false, false, sel("failure-domain.beta.kubernetes.io/zone", "a"))}, nodes: []kipNode{za, betaA},
			stop: []kipNode{za}, bindings: []string{"p0->n1"}},
		{name: "region must match too", pods: []kipPod{mkPod(a, false, false, zonePod("a"), sel("topology.kubernetes.io/region", "r1"))},
			nodes: []kipNode{mkNode(a, false, false, zoneNode("a"), lbl("topology.kubernetes.io/region", "r2"))},
			start: []kipNode{za}, stop: []kipNode{za}},
		{name: "maximum matching: wildcard pod leaves zone node to zoned pod", pods: []kipPod{anyZone, inA}, nodes: []kipNode{za, zb},
			bindings: []string{"p0->n1", "p1->n0"}},
		{name: "maximum matching over three zones", pods: []kipPod{anyZone, inA, inB, anyZone}, nodes: []kipNode{za, zb, zc},
			bindings: []string{"p0->n2", "p1->n0", "p2->n1"}, start: []kipNode{mkNode(a, false, false)}},
		{name: "standby in zone", standby: []StandbySpec{{InstanceType: a, Count: 1, Labels: map[string]string{"topology.kubernetes.io/zone": "a"}}},
			nodes: []kipNode{zb}, start: []kipNode{za}, stop: []kipNode{zb}},
		{name: "unavailable in one zone only", unavailable: []Shape{{InstanceType: a, CapacityType: CapacityOnDemand, Zone: "a"}},
			pods: []kipPod{inA, inB}, start: []kipNode{zb}, unbound: 1},
		{name: "unavailable in every zone", unavailable: []Shape{{InstanceType: a, CapacityType: CapacityOnDemand}},
			pods: []kipPod{inA, inB}, unbound: 2},
	})
}

// TestKipPodMatchesNode ports TestSpotMatches and TestPodMatchesNode: a
// node booted for a pod fits it; changing the instance type, the
// private-IP flag or the capacity type of the pod breaks the fit.
func TestKipPodMatchesNode(t *testing.T) {
	t.Parallel()
	s := mustNew(t, Config{ExtraKeys: []string{privateIPKey, gpuKey}})
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want bool
	}{
		{"on-demand pod, on-demand node", newPod("p", instance("a")), newNode("n", nodeType("a"), onDemandNode()), true},
		{"on-demand pod, spot node", newPod("p", instance("a")), newNode("n", nodeType("a"), spotNode()), false},
		{"spot pod, spot node", newPod("p", instance("a"), spotPod()), newNode("n", nodeType("a"), spotNode()), true},
		{"spot pod, on-demand node", newPod("p", instance("a"), spotPod()), newNode("n", nodeType("a"), onDemandNode()), false},
		{"spot pod, unlabelled node", newPod("p", instance("a"), spotPod()), newNode("n", nodeType("a")), false},
		{"other instance type", newPod("p", instance("p3.xlarge")), newNode("n", nodeType("a")), false},
		{"private-IP pod, public node", newPod("p", instance("a"), privateIPPod()), newNode("n", nodeType("a")), false},
		{"public pod, private-IP node", newPod("p", instance("a")), newNode("n", nodeType("a"), privateIPNode()), false},
		{"GPU-less pod, GPU node", newPod("p", instance("a")), newNode("n", nodeType("a"), lbl(gpuKey, "1")), false},
		{"GPU pod, GPU node", newPod("p", instance("a"), sel(gpuKey, "1")), newNode("n", nodeType("a"), lbl(gpuKey, "1")), true},
		{"either capacity type", newPod("p", instance("a"), affinity(req(DefaultCapacityTypeKey, v1.NodeSelectorOpIn, CapacitySpot, CapacityOnDemand))),
			newNode("n", nodeType("a"), spotNode()), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCompute(t, s, []*v1.Node{tc.node}, []*v1.Pod{tc.pod})
			if got := len(r.Bindings) == 1; got != tc.want {
				t.Errorf("pod bound = %v, want %v (round %+v)", got, tc.want, r)
			}
			// A node booted for the pod always fits it.
			r = mustCompute(t, s, nil, []*v1.Pod{tc.pod})
			if len(r.Boots) != 1 {
				t.Fatalf("boots = %d, want 1 (unbound %v)", len(r.Boots), r.Unbound)
			}
			booted := r.Boots[0].Node.DeepCopy()
			booted.Name = "booted"
			booted.Annotations[PhaseAnnotation] = string(PhaseAvailable)
			r = mustCompute(t, s, []*v1.Node{booted}, []*v1.Pod{tc.pod})
			if len(r.Bindings) != 1 || len(r.Updates) != 0 {
				t.Errorf("booted node %v: bindings %v updates %v, want the kept pre-binding", booted.Labels, bindingStrings(r), r.Updates)
			}
		})
	}
}

// TestKipBootUnavailable ports TestCreateNodeForPodUnavailable.
func TestKipBootUnavailable(t *testing.T) {
	t.Parallel()
	clk := testingclock.NewFakePassiveClock(fakeNow)
	lim := NewBootLimiter(BootLimiterConfig{Clock: clk})
	s := mustNew(t, Config{Limiter: lim})
	onDemand, spot := newPod("p", instance("a")), newPod("p", instance("a"), spotPod())
	boot := func(p *v1.Pod) *Round { return mustCompute(t, s, nil, []*v1.Pod{p}) }
	if r := boot(onDemand); len(r.Boots) != 1 || r.Boots[0].Node.Labels[DefaultCapacityTypeKey] != CapacityOnDemand || r.Boots[0].Pod != onDemand {
		t.Fatalf("on-demand boot = %+v", r.Boots)
	}
	if got, _ := BoundPod(boot(onDemand).Boots[0].Node); got != (types.NamespacedName{Namespace: "default", Name: "p"}) {
		t.Errorf("boot bound to %v, want default/p", got)
	}
	if r := boot(spot); len(r.Boots) != 1 || r.Boots[0].Node.Labels[DefaultCapacityTypeKey] != CapacitySpot {
		t.Fatalf("spot boot = %+v", r.Boots)
	}
	lim.MarkUnavailable(Shape{InstanceType: "a", CapacityType: CapacitySpot})
	r := boot(spot)
	if len(r.Boots) != 0 || len(r.Unbound) != 1 || !errors.Is(r.Unbound[0].Err, ErrShapeUnavailable) {
		t.Fatalf("unavailable spot: boots %v unbound %v, want ErrShapeUnavailable", r.Boots, r.Unbound)
	}
	if r := boot(onDemand); len(r.Boots) != 1 {
		t.Errorf("on-demand still available, boots = %v", r.Boots)
	}
	lim.MarkUnavailable(Shape{InstanceType: "a", CapacityType: CapacityOnDemand})
	if r := boot(onDemand); len(r.Boots) != 0 {
		t.Errorf("all unavailable, boots = %v", r.Boots)
	}
	clk.SetTime(fakeNow.Add(DefaultUnavailableFor))
	if r := boot(spot); len(r.Boots) != 1 {
		t.Errorf("after %v spot boots again; boots = %v unbound %v", DefaultUnavailableFor, r.Boots, r.Unbound)
	}
}
