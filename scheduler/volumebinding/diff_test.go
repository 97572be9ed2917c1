package volumebinding

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

var (
	diffSeed  = flag.Uint64("diff.seed", 1, "first seed of TestDifferential's random clusters")
	diffCases = flag.Int("diff.cases", 400, "number of TestDifferential cases (100 with -short)")
)

// plugin is every extension point both plugins implement.
type plugin interface {
	fwk.PreFilterPlugin
	fwk.FilterPlugin
	fwk.PreScorePlugin
	fwk.ScorePlugin
	fwk.ReservePlugin
	fwk.PreBindPlugin
}

// side is one plugin on its own fake API server holding the case's objects.
type side struct {
	cs *fake.Clientset
	pl plugin
}

func newSide(ctx context.Context, t testing.TB, c *cluster, build func(context.Context, fwk.Handle) (fwk.Plugin, error)) *side {
	t.Helper()
	objs := make([]runtime.Object, 0, len(c.objects)+len(c.nodes)+1)
	for _, o := range c.objects {
		objs = append(objs, o.DeepCopyObject())
	}
	for _, n := range c.nodes {
		objs = append(objs, n.DeepCopy())
	}
	objs = append(objs, c.pod.DeepCopy())
	cs := fake.NewClientset(objs...)
	inf := informers.NewSharedInformerFactory(cs, 0)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil,
		frameworkruntime.WithClientSet(cs), frameworkruntime.WithInformerFactory(inf))
	if err != nil {
		t.Fatal(err)
	}
	p, err := build(ctx, fh)
	if err != nil {
		t.Fatal(err)
	}
	inf.Start(ctx.Done())
	t.Cleanup(inf.Shutdown)
	inf.WaitForCacheSync(ctx.Done())
	return &side{cs: cs, pl: p.(plugin)}
}

func buildInTree(ctx context.Context, fh fwk.Handle) (fwk.Plugin, error) {
	args := &config.VolumeBindingArgs{BindTimeoutSeconds: 600, Shape: []config.UtilizationShapePoint{
		{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}}
	return intree.New(ctx, args, fh, feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
}

func buildOurs(ctx context.Context, fh fwk.Handle) (fwk.Plugin, error) {
	return NewFactory(Config{}).New(ctx, nil, fh)
}

// statusText is what a status means to the scheduler: its code, and its
// reasons unless it is an Error (whose texts name internals).
func statusText(s *fwk.Status) string {
	if s.IsSuccess() {
		return "Success"
	}
	if s.Code() == fwk.Error {
		return "Error"
	}
	return s.Code().String() + ": " + strings.Join(s.Reasons(), "; ")
}

// counts tallies what the cases covered, so that a generator that drifts
// into trivial cases is noticed.
type counts struct {
	cases, prefilterRejects, narrowed, fits, rejects, reserves, prebinds, writes int
	// scoredStatic and scoredCapacity count nonzero Scores of nodes that
	// bind existing volumes and of nodes that only provision.
	scoredStatic, scoredCapacity int
}

// TestDifferential runs the in-tree VolumeBinding plugin and ours on the
// same random clusters and requires equal PreFilter, Filter, PreScore,
// Score, Reserve and PreBindPreFlight answers node by node, and equal
// objects in the API after PreBind's writes. A failure names its seed;
// replay it with -diff.seed=N -diff.cases=1.
func TestDifferential(t *testing.T) {
	n := *diffCases
	if testing.Short() && n > 100 {
		n = 100
	}
	var total counts
	for i := range n {
		seed := *diffSeed + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			c := genCluster(seed)
			got := diffCase(t, c)
			if t.Failed() {
				t.Logf("replay: go test -run TestDifferential ./volumebinding -diff.seed=%d -diff.cases=1", seed)
			}
			total.add(got)
		})
	}
	t.Logf("%+v", total)
	if n >= 100 && slices.Contains([]int{total.prefilterRejects, total.narrowed, total.fits, total.rejects,
		total.reserves, total.prebinds, total.writes, total.scoredStatic, total.scoredCapacity}, 0) {
		t.Errorf("the generator no longer covers every outcome: %+v", total)
	}
}

func (c *counts) add(o counts) {
	c.cases += o.cases
	c.prefilterRejects += o.prefilterRejects
	c.narrowed += o.narrowed
	c.fits += o.fits
	c.rejects += o.rejects
	c.scoredStatic += o.scoredStatic
	c.scoredCapacity += o.scoredCapacity
	c.reserves += o.reserves
	c.prebinds += o.prebinds
	c.writes += o.writes
}

// countScore counts a nonzero score by the kind of decision it rates.
func (c *counts) countScore(t *testing.T, cs fwk.CycleState, node string, score int64) {
	t.Helper()
	if score == 0 {
		return
	}
	s, err := readState(cs)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.byNode[node].StaticBindings) > 0 {
		c.scoredStatic++
	} else {
		c.scoredCapacity++
	}
}

func diffCase(t *testing.T, c *cluster) (cnt counts) {
	cnt.cases = 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, ours := newSide(ctx, t, c, buildInTree), newSide(ctx, t, c, buildOurs)
	nodes := make([]fwk.NodeInfo, len(c.nodes))
	for i, n := range c.nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		nodes[i] = ni
	}
	inState, ourState := framework.NewCycleState(), framework.NewCycleState()

	_, inSt := in.pl.PreFilter(ctx, inState, c.pod, nodes)
	ourRes, ourSt := ours.pl.PreFilter(ctx, ourState, c.pod, nodes)
	if a, b := statusText(inSt), statusText(ourSt); a != b {
		t.Fatalf("PreFilter: in-tree %q, ours %q (%v / %v)", a, b, inSt, ourSt)
	}
	if !inSt.IsSuccess() {
		cnt.prefilterRejects++
		return cnt
	}
	if !ourRes.AllNodes() {
		cnt.narrowed++
	}

	var feasible []fwk.NodeInfo
	for _, ni := range nodes {
		name := ni.Node().Name
		inF := in.pl.Filter(ctx, inState, c.pod, ni)
		if !ourRes.AllNodes() && !ourRes.NodeNames.Has(name) {
			if inF.IsSuccess() {
				t.Errorf("PreFilter left out node %s, which the in-tree Filter admits", name)
			}
			continue
		}
		ourF := ours.pl.Filter(ctx, ourState, c.pod, ni)
		if a, b := statusText(inF), statusText(ourF); a != b {
			t.Errorf("Filter(%s): in-tree %q, ours %q", name, a, b)
		}
		if inF.IsSuccess() && ourF.IsSuccess() {
			feasible = append(feasible, ni)
			cnt.fits++
		} else {
			cnt.rejects++
		}
	}
	if t.Failed() || len(feasible) == 0 {
		return cnt
	}

	inPS, ourPS := in.pl.PreScore(ctx, inState, c.pod, feasible), ours.pl.PreScore(ctx, ourState, c.pod, feasible)
	if a, b := statusText(inPS), statusText(ourPS); a != b {
		t.Errorf("PreScore: in-tree %q, ours %q", a, b)
	}
	if inPS.IsSuccess() {
		for _, ni := range feasible {
			a, sa := in.pl.Score(ctx, inState, c.pod, ni)
			b, sb := ours.pl.Score(ctx, ourState, c.pod, ni)
			if a != b || statusText(sa) != statusText(sb) {
				t.Errorf("Score(%s): in-tree %d %q, ours %d %q", ni.Node().Name, a, statusText(sa), b, statusText(sb))
			}
			cnt.countScore(t, ourState, ni.Node().Name, a)
		}
	}

	node := feasible[0].Node().Name
	inR, ourR := in.pl.Reserve(ctx, inState, c.pod, node), ours.pl.Reserve(ctx, ourState, c.pod, node)
	if a, b := statusText(inR), statusText(ourR); a != b {
		t.Fatalf("Reserve(%s): in-tree %q, ours %q", node, a, b)
	}
	cnt.reserves++
	inPF, ourPF := preflight(ctx, in.pl, inState, c.pod, node), preflight(ctx, ours.pl, ourState, c.pod, node)
	if a, b := statusText(inPF), statusText(ourPF); a != b {
		t.Fatalf("PreBindPreFlight(%s): in-tree %q, ours %q", node, a, b)
	}
	if !inPF.IsSuccess() {
		return cnt
	}
	cnt.prebinds++
	s, err := readState(ourState)
	if err != nil {
		t.Fatal(err)
	}
	want := len(s.byNode[node].StaticBindings) + len(s.byNode[node].DynamicProvisions)
	cnt.writes += want
	inW, ourW := prebindWrites(ctx, t, in, inState, c.pod, node, want), prebindWrites(ctx, t, ours, ourState, c.pod, node, want)
	if d := cmp.Diff(inW, ourW); d != "" {
		t.Errorf("API objects after PreBind on %s (-in-tree +ours):\n%s", node, d)
	}
	in.pl.Unreserve(ctx, inState, c.pod, node)
	ours.pl.Unreserve(ctx, ourState, c.pod, node)
	return cnt
}

func preflight(ctx context.Context, pl plugin, cs fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	_, st := pl.PreBindPreFlight(ctx, cs, pod, node)
	return st
}

// prebindWrites runs PreBind until it has made want writes (nobody
// completes the bindings, so it would wait for its timeout), stops it and
// returns the volumes and claims in the API.
func prebindWrites(ctx context.Context, t *testing.T, s *side, cs fwk.CycleState, pod *v1.Pod, node string, want int) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan *fwk.Status, 1)
	go func() { done <- s.pl.PreBind(ctx, cs, pod, node) }()
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return updates(s.cs) >= want, nil })
	cancel()
	if st := <-done; st.IsSuccess() && want > 0 {
		t.Errorf("PreBind succeeded with no volume controller")
	}
	if err != nil {
		t.Errorf("PreBind made %d writes, want %d: %v", updates(s.cs), want, err)
	}
	return apiObjects(t, s.cs)
}

func updates(cs *fake.Clientset) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "update" {
			n++
		}
	}
	return n
}

// apiObjects renders the volumes and claims of the API with what a
// binding changes: claimRef, annotations, volumeName; volumes by class and
// size rather than name.
func apiObjects(t *testing.T, cs *fake.Clientset) []string {
	t.Helper()
	ctx := context.Background()
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvcs, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, pv := range pvs.Items {
		ref := ""
		if r := pv.Spec.ClaimRef; r != nil {
			ref = r.Namespace + "/" + r.Name + "/" + string(r.UID)
		}
		// Without the name: among matching volumes of equal size the
		// in-tree choice follows map order (informer index), so any of
		// them is the in-tree answer.
		size := pv.Spec.Capacity[v1.ResourceStorage]
		out = append(out, fmt.Sprintf("pv class=%s size=%s ref=%s ann=%v phase=%s",
			pv.Spec.StorageClassName, size.String(), ref, pv.Annotations, pv.Status.Phase))
	}
	for _, c := range pvcs.Items {
		out = append(out, fmt.Sprintf("pvc %s vol=%s ann=%v phase=%s", c.Name, c.Spec.VolumeName, c.Annotations, c.Status.Phase))
	}
	slices.Sort(out)
	return out
}
