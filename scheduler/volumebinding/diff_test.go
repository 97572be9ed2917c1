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
	"github.com/volbind/volbind/internal/schedgen"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumezone"
)

var (
	diffSeed  = flag.Uint64("diff.seed", 1, "first seed of TestDifferential's random clusters")
	diffCases = flag.Int("diff.cases", 400, "number of TestDifferential cases (100 with -short)")
)

// statusText is what a status means to the scheduler: its code, and its
// reasons unless it is an Error (whose texts name internals).
func statusText(s *fwk.Status) string {
	if s.IsSuccess() {
		return "Success"
	}
	if s.IsSkip() {
		return "Skip"
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
	// library counts binder/scheduling's answers compared (Check and
	// Find, plain and with the VolumeZone rule); migrated counts nodes
	// whose CSINode lists the plugin of a bound in-tree volume of the pod.
	library, migrated int
	// texts counts the in-tree answers by text (pod-level texts with the
	// names cut off).
	texts map[string]int
}

// TestDifferential runs the in-tree VolumeBinding plugin and ours on the
// same random clusters (internal/schedgen) and requires equal PreFilter,
// Filter, PreScore, Score, Reserve and PreBindPreFlight answers node by
// node, and equal objects in the API after PreBind's writes. It also asks
// binder/scheduling itself (Check and Find, fed by informers as an
// embedder wires it) and requires the in-tree answers, codes and texts,
// of VolumeBinding and, with Config.VolumeZone, of VolumeBinding followed
// by VolumeZone. A failure names its seed; replay it with -diff.seed=N
// -diff.cases=1.
func TestDifferential(t *testing.T) {
	n := *diffCases
	if testing.Short() && n > 100 {
		n = 100
	}
	total := counts{texts: map[string]int{}}
	for i := range n {
		seed := *diffSeed + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			c := schedgen.Generate(seed)
			got := diffCase(t, c)
			if t.Failed() {
				t.Logf("replay: go test -run TestDifferential ./volumebinding -diff.seed=%d -diff.cases=1", seed)
			}
			total.add(got)
		})
	}
	t.Logf("%d cases, %d library answers compared, 0 differences unless reported above", total.cases, total.library)
	t.Logf("%+v", total)
	if n < 100 {
		return
	}
	if slices.Contains([]int{total.prefilterRejects, total.narrowed, total.fits, total.rejects,
		total.reserves, total.prebinds, total.writes, total.scoredStatic, total.scoredCapacity, total.migrated}, 0) {
		t.Errorf("the generator no longer covers every outcome: %+v", total)
	}
	for _, text := range []string{string(intree.ErrReasonNodeConflict), string(intree.ErrReasonBindConflict),
		intree.ErrReasonNotEnoughSpace, intree.ErrReasonPVNotExist, volumezone.ErrReasonConflict,
		"pod has unbound immediate PersistentVolumeClaims", "bound to non-existent persistentvolume",
		"is being deleted", "not found", "Error"} {
		if total.texts[text] == 0 {
			t.Errorf("no in-tree answer %q in %d cases: %v", text, n, total.texts)
		}
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
	c.library += o.library
	c.migrated += o.migrated
	for k, v := range o.texts {
		c.texts[k] += v
	}
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

// countTexts counts an in-tree answer's texts, pod-level ones by the
// part that does not name objects.
func (c *counts) countTexts(s *fwk.Status) {
	if s.IsSuccess() || s.IsSkip() {
		return
	}
	if s.Code() == fwk.Error {
		c.texts["Error"]++
		return
	}
	for _, r := range s.Reasons() {
		for _, part := range []string{"bound to non-existent persistentvolume", "is being deleted", "not found",
			"was not created for pod", "waiting for ephemeral volume controller"} {
			if strings.Contains(r, part) {
				r = part
			}
		}
		c.texts[r]++
	}
}

func diffCase(t *testing.T, c *schedgen.Cluster) counts {
	cnt := counts{cases: 1, texts: map[string]int{}, migrated: migratedNodes(c)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, ours, lib := newInTreeSide(ctx, t, c), newSide(ctx, t, c, buildOurs), newLibSide(ctx, t, c)
	nodes := make([]fwk.NodeInfo, len(c.Nodes))
	for i, n := range c.Nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		nodes[i] = ni
	}
	inState, ourState := framework.NewCycleState(), framework.NewCycleState()

	_, inSt := in.pl.PreFilter(ctx, inState, c.Pod, nodes)
	ourRes, ourSt := ours.pl.PreFilter(ctx, ourState, c.Pod, nodes)
	cnt.countTexts(inSt)
	if a, b := statusText(inSt), statusText(ourSt); a != b {
		t.Fatalf("PreFilter: in-tree %q, ours %q (%v / %v)", a, b, inSt, ourSt)
	}
	zoned := newZonedAnswers(ctx, t, in, c.Pod, inSt)
	cnt.library += lib.comparePod(ctx, t, c.Pod, inSt, zoned.pod)
	if !inSt.IsSuccess() {
		cnt.prefilterRejects++
		cnt.library += lib.compareNodes(ctx, t, c.Pod, nodes, func(fwk.NodeInfo) (*fwk.Status, *fwk.Status) { return inSt, zoned.pod })
		return cnt
	}
	if !ourRes.AllNodes() {
		cnt.narrowed++
	}

	var feasible []fwk.NodeInfo
	inFilter := map[string]*fwk.Status{}
	for _, ni := range nodes {
		name := ni.Node().Name
		inF := in.pl.Filter(ctx, inState, c.Pod, ni)
		inFilter[name] = inF
		cnt.countTexts(inF)
		if !ourRes.AllNodes() && !ourRes.NodeNames.Has(name) {
			if inF.IsSuccess() {
				t.Errorf("PreFilter left out node %s, which the in-tree Filter admits", name)
			}
			continue
		}
		ourF := ours.pl.Filter(ctx, ourState, c.Pod, ni)
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
	cnt.library += lib.compareNodes(ctx, t, c.Pod, nodes, func(ni fwk.NodeInfo) (*fwk.Status, *fwk.Status) {
		f := inFilter[ni.Node().Name]
		return f, zoned.filter(ctx, ni, f, &cnt)
	})
	if t.Failed() || len(feasible) == 0 {
		return cnt
	}
	comparePlugins(ctx, t, c, in, ours, inState, ourState, feasible, &cnt)
	return cnt
}

// comparePlugins compares the extension points after Filter on the
// feasible nodes: PreScore, Score, Reserve, PreBindPreFlight and the API
// objects after PreBind's writes.
func comparePlugins(ctx context.Context, t *testing.T, c *schedgen.Cluster, in, ours *side, inState, ourState fwk.CycleState, feasible []fwk.NodeInfo, cnt *counts) {
	inPS, ourPS := in.pl.PreScore(ctx, inState, c.Pod, feasible), ours.pl.PreScore(ctx, ourState, c.Pod, feasible)
	if a, b := statusText(inPS), statusText(ourPS); a != b {
		t.Errorf("PreScore: in-tree %q, ours %q", a, b)
	}
	if inPS.IsSuccess() {
		for _, ni := range feasible {
			a, sa := in.pl.Score(ctx, inState, c.Pod, ni)
			b, sb := ours.pl.Score(ctx, ourState, c.Pod, ni)
			if a != b || statusText(sa) != statusText(sb) {
				t.Errorf("Score(%s): in-tree %d %q, ours %d %q", ni.Node().Name, a, statusText(sa), b, statusText(sb))
			}
			cnt.countScore(t, ourState, ni.Node().Name, a)
		}
	}

	node := feasible[0].Node().Name
	inR, ourR := in.pl.Reserve(ctx, inState, c.Pod, node), ours.pl.Reserve(ctx, ourState, c.Pod, node)
	if a, b := statusText(inR), statusText(ourR); a != b {
		t.Fatalf("Reserve(%s): in-tree %q, ours %q", node, a, b)
	}
	cnt.reserves++
	inPF, ourPF := preflight(ctx, in.pl, inState, c.Pod, node), preflight(ctx, ours.pl, ourState, c.Pod, node)
	if a, b := statusText(inPF), statusText(ourPF); a != b {
		t.Fatalf("PreBindPreFlight(%s): in-tree %q, ours %q", node, a, b)
	}
	if !inPF.IsSuccess() {
		return
	}
	cnt.prebinds++
	s, err := readState(ourState)
	if err != nil {
		t.Fatal(err)
	}
	want := len(s.byNode[node].StaticBindings) + len(s.byNode[node].DynamicProvisions)
	cnt.writes += want
	inW, ourW := prebindWrites(ctx, t, in, inState, c.Pod, node, want), prebindWrites(ctx, t, ours, ourState, c.Pod, node, want)
	if d := cmp.Diff(inW, ourW); d != "" {
		t.Errorf("API objects after PreBind on %s (-in-tree +ours):\n%s", node, d)
	}
	in.pl.Unreserve(ctx, inState, c.Pod, node)
	ours.pl.Unreserve(ctx, ourState, c.Pod, node)
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
	pvcs, err := cs.CoreV1().PersistentVolumeClaims(schedgen.Namespace).List(ctx, metav1.ListOptions{})
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
