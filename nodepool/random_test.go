package nodepool

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/volbind/volbind/zones"
)

var seedFlag = flag.Uint64("nodepool.seed", 0, "seed of TestComputeMatchesBruteForce (0: time-based)")

// bruteFits is the documented pod/node rule, written independently of the
// class and group machinery: capacity type defaults to on-demand, extra
// keys a pod does not name must be absent, then node affinity.
func bruteFits(t *testing.T, p *v1.Pod, n *v1.Node, extra []string) bool {
	t.Helper()
	names := map[string]bool{}
	for k := range p.Spec.NodeSelector {
		names[k] = true
	}
	if ns := requiredSelector(p); ns != nil {
		for _, term := range ns.NodeSelectorTerms {
			for _, r := range term.MatchExpressions {
				names[r.Key] = true
			}
		}
	}
	if !names[DefaultCapacityTypeKey] {
		if ct := n.Labels[DefaultCapacityTypeKey]; ct != "" && ct != CapacityOnDemand {
			return false
		}
	}
	for _, k := range extra {
		if !names[k] && n.Labels[k] != "" {
			return false
		}
	}
	ok, err := nodeaffinity.GetRequiredNodeAffinity(p).Match(n)
	if err != nil {
		t.Fatalf("Match(%s, %s): %v", p.Name, n.Name, err)
	}
	return ok
}

func bruteStandbyFits(sp StandbySpec, n *v1.Node, extra []string) bool {
	ct := n.Labels[DefaultCapacityTypeKey]
	if ct == "" {
		ct = CapacityOnDemand
	}
	want := sp.CapacityType
	if want == "" {
		want = CapacityOnDemand
	}
	if n.Labels[InstanceTypeLabel] != sp.InstanceType || ct != want {
		return false
	}
	for k, v := range sp.Labels {
		if n.Labels[k] != v {
			return false
		}
	}
	for _, k := range extra {
		if _, ok := sp.Labels[k]; !ok && n.Labels[k] != "" {
			return false
		}
	}
	return true
}

// bruteBest returns the lexicographically best (pods matched, standby
// nodes kept) over every assignment of nodes to pods, specs or nothing.
func bruteBest(fit [][]bool, sfit [][]bool, counts []int) (bestPods, bestStandby int) {
	nNodes := len(fit)
	usedPod := make([]bool, 0)
	if nNodes > 0 {
		usedPod = make([]bool, len(fit[0]))
	}
	left := slices.Clone(counts)
	var rec func(i, pods, standby int)
	rec = func(i, pods, standby int) {
		if i == nNodes {
			if pods > bestPods || pods == bestPods && standby > bestStandby {
				bestPods, bestStandby = pods, standby
			}
			return
		}
		rec(i+1, pods, standby)
		for p, ok := range fit[i] {
			if ok && !usedPod[p] {
				usedPod[p] = true
				rec(i+1, pods+1, standby)
				usedPod[p] = false
			}
		}
		for j, ok := range sfit[i] {
			if ok && left[j] > 0 {
				left[j]--
				rec(i+1, pods, standby+1)
				left[j]++
			}
		}
	}
	rec(0, 0, 0)
	return bestPods, bestStandby
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func randomPod(r *rand.Rand, name string) *v1.Pod {
	var opts []podOpt
	switch r.IntN(4) {
	case 1:
		opts = append(opts, instance("a"))
	case 2:
		opts = append(opts, instance("b"))
	case 3:
		opts = append(opts, affinity(req(InstanceTypeLabel, v1.NodeSelectorOpIn, "b", "a"),
			req(zones.ZoneLabel, v1.NodeSelectorOpNotIn, pick(r, "x", "y", "z"))))
	}
	switch r.IntN(4) {
	case 1:
		opts = append(opts, zonePod(pick(r, "x", "y", "z")))
	case 2:
		opts = append(opts, affinity(req(zones.ZoneLabel, v1.NodeSelectorOpIn, "x", "y")))
	}
	switch r.IntN(4) {
	case 1:
		opts = append(opts, spotPod())
	case 2:
		opts = append(opts, affinity(req(DefaultCapacityTypeKey, v1.NodeSelectorOpIn, CapacitySpot, CapacityOnDemand)))
	}
	if r.IntN(5) == 0 {
		opts = append(opts, sel(gpuKey, "1"))
	}
	if r.IntN(8) == 0 {
		opts = append(opts, podPhase(v1.PodRunning))
	}
	return newPod(name, opts...)
}

func randomNode(r *rand.Rand, name string, pods []*v1.Pod) *v1.Node {
	opts := []nodeOpt{nodeType(pick(r, "a", "b"))}
	if z := pick(r, "x", "y", "z", ""); z != "" {
		opts = append(opts, zoneNode(z))
	}
	switch r.IntN(3) {
	case 1:
		opts = append(opts, spotNode())
	case 2:
		opts = append(opts, onDemandNode())
	}
	if r.IntN(5) == 0 {
		opts = append(opts, lbl(gpuKey, "1"))
	}
	opts = append(opts, phase(pick(r, PhaseAvailable, PhaseAvailable, PhaseCreating, PhaseCreated, PhaseClaimed)))
	if len(pods) > 0 && r.IntN(4) == 0 {
		opts = append(opts, boundTo("default/"+pods[r.IntN(len(pods))].Name))
	}
	return newNode(name, opts...)
}

func randomStandby(r *rand.Rand) []StandbySpec {
	var specs []StandbySpec
	for range r.IntN(3) {
		sp := StandbySpec{InstanceType: pick(r, "a", "b"), CapacityType: pick(r, "", CapacitySpot), Count: r.IntN(3)}
		if r.IntN(2) == 0 {
			sp.Labels = map[string]string{zones.ZoneLabel: pick(r, "x", "y")}
		}
		specs = append(specs, sp)
	}
	return specs
}

// TestComputeMatchesBruteForce checks Compute against an exhaustive search
// on small random instances: it binds as many pods as any assignment can,
// and among those keeps as many standby nodes as any can.
func TestComputeMatchesBruteForce(t *testing.T) {
	t.Parallel()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -nodepool.seed=%d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	extra := []string{gpuKey}
	const cases = 500
	for c := range cases {
		pods := make([]*v1.Pod, r.IntN(6))
		for i := range pods {
			pods[i] = randomPod(r, fmt.Sprintf("p%d", i))
		}
		nodes := make([]*v1.Node, r.IntN(7))
		for i := range nodes {
			nodes[i] = randomNode(r, fmt.Sprintf("n%d", i), pods)
		}
		standby := randomStandby(r)
		s := mustNew(t, Config{ExtraKeys: extra, Standby: standby, DefaultInstanceType: "a", MaxBootsPerRound: -1})
		// Shuffle the input: the outcome must not depend on its order.
		r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
		r.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			checkAgainstBruteForce(t, s, nodes, pods, standby, extra)
		})
		if t.Failed() {
			t.Fatalf("case %d failed; seed %d", c, seed)
		}
	}
}

func checkAgainstBruteForce(t *testing.T, s *Scaler, nodes []*v1.Node, pods []*v1.Pod, standby []StandbySpec, extra []string) {
	round := mustCompute(t, s, nodes, pods)

	// Kept bindings, as documented: the first node by name bound to a
	// waiting pod that it fits.
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b *v1.Node) int { return cmpString(a.Name, b.Name) })
	waiting := map[string]*v1.Pod{}
	for _, p := range pods {
		if IsWaiting(p) {
			waiting["default/"+p.Name] = p
		}
	}
	kept := map[string]string{}
	taken := map[*v1.Pod]bool{}
	var free []*v1.Node
	for _, n := range sorted {
		if !NodePhase(n).takesPart() {
			continue
		}
		if p := waiting[n.Annotations[BoundPodAnnotation]]; p != nil && !taken[p] && bruteFits(t, p, n, extra) {
			taken[p] = true
			kept[p.Name] = n.Name
			continue
		}
		free = append(free, n)
	}
	var freePods []*v1.Pod
	for _, p := range pods {
		if IsWaiting(p) && !taken[p] {
			freePods = append(freePods, p)
		}
	}
	fit := make([][]bool, len(free))
	sfit := make([][]bool, len(free))
	counts := make([]int, len(standby))
	for j, sp := range standby {
		counts[j] = sp.Count
	}
	for i, n := range free {
		fit[i] = make([]bool, len(freePods))
		for j, p := range freePods {
			fit[i][j] = bruteFits(t, p, n, extra)
		}
		sfit[i] = make([]bool, len(standby))
		for j, sp := range standby {
			sfit[i][j] = bruteStandbyFits(sp, n, extra)
		}
	}
	wantPods, wantStandby := bruteBest(fit, sfit, counts)

	newBindings := 0
	for _, b := range round.Bindings {
		if !bruteFits(t, b.Pod, b.Node, extra) {
			t.Errorf("binding %s->%s does not fit", b.Pod.Name, b.Node.Name)
		}
		if kept[b.Pod.Name] == b.Node.Name {
			delete(kept, b.Pod.Name)
			continue
		}
		newBindings++
	}
	if len(kept) > 0 {
		t.Errorf("bindings %v not kept", kept)
	}
	if newBindings != wantPods || len(round.Standby) != wantStandby {
		t.Errorf("new bindings %d, standby %d; brute force: %d, %d\npods %v\nnodes %v\nstandby %+v\nround bindings %v standby %v",
			newBindings, len(round.Standby), wantPods, wantStandby, podsString(pods), nodesString(nodes), standby, bindingStrings(round), names(round.Standby))
	}
	for _, n := range round.Standby {
		if !slices.ContainsFunc(standby, func(sp StandbySpec) bool { return bruteStandbyFits(sp, n, extra) }) {
			t.Errorf("standby node %s fits no spec", n.Name)
		}
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	podBoots := 0
	for _, b := range round.Boots {
		if b.Pod != nil {
			podBoots++
			if !bruteFits(t, b.Pod, b.Node, extra) {
				t.Errorf("boot for %s has labels %v that do not fit it", b.Pod.Name, b.Node.Labels)
			}
		}
	}
	if podBoots+len(round.Unbound) != len(freePods)-wantPods {
		t.Errorf("pod boots %d + unbound %d, want %d", podBoots, len(round.Unbound), len(freePods)-wantPods)
	}
	if got := len(round.Boots) - podBoots; got != total-wantStandby {
		t.Errorf("standby boots %d, want %d", got, total-wantStandby)
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func podsString(pods []*v1.Pod) string {
	out := ""
	for _, p := range pods {
		out += fmt.Sprintf("%s%v/%v ", p.Name, p.Spec.NodeSelector, requiredSelector(p))
	}
	return out
}

func nodesString(nodes []*v1.Node) string {
	out := ""
	for _, n := range nodes {
		out += fmt.Sprintf("%s%v%v ", n.Name, n.Labels, n.Annotations)
	}
	return out
}
