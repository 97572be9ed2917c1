package explain_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/explain"
	"github.com/volbind/volbind/internal/randcluster"
	"github.com/volbind/volbind/internal/schedgen"
)

// podGenerators are the sources of clusters with pods: this package's own
// and the one of the scheduler's differential test (internal/schedgen,
// which adds zones, in-tree volumes migrated by CSINodes and generic
// ephemeral volumes).
var podGenerators = []struct {
	name string
	make func(seed uint64) podCase
}{
	{"randcluster", func(seed uint64) podCase {
		c := randcluster.Generate(seed)
		return podCase{objs: c.Objects(), drivers: c.CSIDrivers, capacities: c.Capacities}
	}},
	{"schedgen", func(seed uint64) podCase {
		pc := podCase{unvalidated: true}
		for _, o := range schedgen.Generate(seed).AllObjects() {
			switch o := o.(type) {
			case *storagev1.CSIDriver:
				pc.drivers = append(pc.drivers, o)
			case *storagev1.CSIStorageCapacity:
				pc.capacities = append(pc.capacities, o)
			case *storagev1.CSINode:
				pc.csiNodes = append(pc.csiNodes, o)
			default:
				pc.objs = append(pc.objs, o)
			}
		}
		return pc
	}},
}

// podCase is a cluster of a pod generator: the objects the in-memory API
// server holds and those the explanations and Find read besides.
type podCase struct {
	objs       []runtime.Object
	drivers    []*storagev1.CSIDriver
	capacities []*storagev1.CSIStorageCapacity
	csiNodes   []*storagev1.CSINode
	// unvalidated seeds objs as they are: schedgen draws now and then
	// zone labels kube-apiserver refuses, to compare how they are read.
	unvalidated bool
}

// TestDifferentialPods explains every pod of random clusters and checks
// each node's verdict against binder/scheduling's Find on a VolumeBinder
// of its own, fed by the in-memory API server's events: the pod fits on a
// node exactly when Find says so, with the same reasons (kind, claim,
// volume); on a node that fits, each claim gets the volume Find chose; and
// every candidate volume listed under a reason fails the rule it is
// rejected by on that node (or fits, taken by another claim of the pod or
// overruled by a volume pre-bound to the claim).
func TestDifferentialPods(t *testing.T) {
	n := *diffClusters
	if testing.Short() && n > 10 {
		n = 10
	}
	for _, g := range podGenerators {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			t.Logf("seeds %d to %d", *diffSeed, *diffSeed+uint64(n)-1)
			var pods, nodes, fits int
			for i := range n {
				seed := *diffSeed + uint64(i)
				st, err := runPodCase(t.Context(), g.make(seed))
				if err != nil {
					t.Fatalf("%s seed %d: %v", g.name, seed, err)
				}
				pods, nodes, fits = pods+st.pods, nodes+st.nodes, fits+st.fits
			}
			t.Logf("%d pods explained; %d nodes compared with Find, %d where the pod fits", pods, nodes, fits)
			if n >= 10 && (nodes == 0 || fits == 0 || fits == nodes) {
				t.Fatal("the clusters never compare both outcomes of Find on a node")
			}
		})
	}
}

// runPodCase explains the pods of c and compares them with Find; it
// returns what it compared.
func runPodCase(ctx context.Context, c podCase) (podStats, error) {
	ctx = klog.NewContext(ctx, logr.Discard())
	srv := bindertest.New()
	seed := srv.Seed
	if c.unvalidated {
		seed = srv.SeedInvalid
	}
	if err := seed(ctx, c.objs...); err != nil {
		return podStats{}, fmt.Errorf("seed: %w", err)
	}
	dc := &diffCase{drivers: c.drivers, capacities: c.capacities}
	objs := dc.objectsOf(srv)
	objs.CSINodes = c.csiNodes
	e, err := explain.New(objs, explain.Config{})
	if err != nil {
		return podStats{}, err
	}
	vb, stop, err := findOracle(srv, objs)
	if err != nil {
		return podStats{}, err
	}
	defer stop()
	volumes := make(map[string]*v1.PersistentVolume, len(objs.Volumes))
	for _, pv := range objs.Volumes {
		volumes[pv.Name] = pv
	}
	claims := make(map[string]*v1.PersistentVolumeClaim, len(objs.Claims))
	for _, pvc := range objs.Claims {
		claims[cache.Key(pvc)] = pvc
	}
	var st podStats
	for _, pod := range objs.Pods {
		x, err := e.Pod(ctx, pod.Namespace, pod.Name, explain.PodOptions{Max: -1})
		if err != nil {
			return podStats{}, err
		}
		if err := comparePod(ctx, x, pod, objs.Nodes, vb, claims, volumes, &st); err != nil {
			return podStats{}, fmt.Errorf("pod %s: %w\n%s", x.Pod, err, dump(x))
		}
	}
	st.pods = len(objs.Pods)
	return st, nil
}

// podStats counts what a pod case compared: pods, nodes with Find's
// answer, and of those the nodes where the pod fits.
type podStats struct{ pods, nodes, fits int }

// findOracle builds the VolumeBinder the explanations are compared with.
func findOracle(srv *bindertest.Server, objs explain.Objects) (*scheduling.VolumeBinder, func(), error) {
	classes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, sc := range objs.Classes {
		_ = classes.Add(sc)
	}
	drivers := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, d := range objs.CSIDrivers {
		_ = drivers.Add(d)
	}
	capacities := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, c := range objs.Capacities {
		_ = capacities.Add(c)
	}
	csiNodes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, n := range objs.CSINodes {
		_ = csiNodes.Add(n)
	}
	sc, err := scheduling.NewStorageCapacity(storagelisters.NewCSIDriverLister(drivers), capacities)
	if err != nil {
		return nil, nil, err
	}
	vb, err := scheduling.New(srv, storagelisters.NewStorageClassLister(classes), scheduling.Config{Capacity: sc, CSINodes: storagelisters.NewCSINodeLister(csiNodes), Logger: logr.Discard()})
	if err != nil {
		return nil, nil, err
	}
	rmV := srv.AddEventHandler(bindertest.KindVolume, vb.VolumeHandler())
	rmC := srv.AddEventHandler(bindertest.KindClaim, vb.ClaimHandler())
	return vb, func() { rmV(); rmC() }, nil
}

func comparePod(ctx context.Context, x *explain.PodExplanation, pod *v1.Pod, nodes []*v1.Node, vb *scheduling.VolumeBinder,
	claims map[string]*v1.PersistentVolumeClaim, volumes map[string]*v1.PersistentVolume, st *podStats) error {
	if pod.Spec.NodeName != "" {
		if x.Verdict != explain.Scheduled {
			return fmt.Errorf("verdict %s for a pod on node %s", x.Verdict, pod.Spec.NodeName)
		}
		return nil
	}
	if reasons, err := vb.Check(ctx, pod); err == nil && len(reasons) > 0 {
		// Kubernetes' PreFilter fails the pod on every node at once.
		if x.Verdict != explain.Unschedulable || x.Error != reasons[0].Message() || len(x.Nodes) != 0 {
			return fmt.Errorf("Check says %q for the whole pod; explained as %s, %q, %d nodes", reasons[0].Message(), x.Verdict, x.Error, len(x.Nodes))
		}
		return nil
	}
	type found struct {
		pv      *scheduling.PodVolumes
		reasons []scheduling.Reason
	}
	finds := make([]found, len(nodes))
	for i, node := range nodes {
		pv, reasons, err := vb.Find(ctx, pod, node)
		if err != nil {
			// An error on any node fails kube-scheduler's whole cycle.
			if x.Verdict != explain.Unschedulable || x.Error == "" || len(x.Nodes) != 0 {
				return fmt.Errorf("Find fails on node %s (%v), but the explanation has verdict %s, error %q", node.Name, err, x.Verdict, x.Error)
			}
			return nil
		}
		finds[i] = found{pv, reasons}
	}
	var fit []string
	for i, node := range nodes {
		pv, reasons := finds[i].pv, finds[i].reasons
		if i >= len(x.Nodes) || x.Nodes[i].Node != node.Name {
			return fmt.Errorf("node %s is not explained in order", node.Name)
		}
		if err := compareNode(&x.Nodes[i], node, pv, reasons, claims, volumes); err != nil {
			return fmt.Errorf("node %s: %w", node.Name, err)
		}
		st.nodes++
		if len(reasons) == 0 {
			fit = append(fit, node.Name)
			st.fits++
		}
	}
	want := explain.Unschedulable
	if len(fit) > 0 {
		want = explain.Schedulable
	}
	if x.Verdict != want || !slices.Equal(x.FitNodes, fit) {
		return fmt.Errorf("verdict %s on %v, Find fits %v", x.Verdict, x.FitNodes, fit)
	}
	return nil
}

func compareNode(n *explain.NodeExplanation, node *v1.Node, pv *scheduling.PodVolumes, reasons []scheduling.Reason,
	claims map[string]*v1.PersistentVolumeClaim, volumes map[string]*v1.PersistentVolume) error {
	if n.Fits != (len(reasons) == 0) {
		return fmt.Errorf("fits=%t, Find's reasons %v", n.Fits, reasons)
	}
	if len(n.Reasons) != len(reasons) {
		return fmt.Errorf("%d reasons, Find gives %v", len(n.Reasons), reasons)
	}
	for i, r := range reasons {
		got := n.Reasons[i]
		if got.Kind != r.Kind.String() || got.Claim != r.Claim || got.Volume != r.Volume || got.Message != r.Message() {
			return fmt.Errorf("reason %d is %s %s %s (%q), Find's %v", i, got.Kind, got.Claim, got.Volume, got.Message, r)
		}
		if err := checkNodeCandidates(got, node, claims, volumes); err != nil {
			return fmt.Errorf("reason %s of claim %s: %w", got.Kind, got.Claim, err)
		}
	}
	if !n.Fits {
		return nil
	}
	for _, b := range pv.StaticBindings {
		i := slices.IndexFunc(n.Claims, func(c explain.NodeClaim) bool { return c.Claim == cache.Key(b.PVC) })
		if i < 0 || n.Claims[i].Action != "bind" || n.Claims[i].Volume != b.PV.Name {
			return fmt.Errorf("Find binds claim %s to %s; the explanation says %v", cache.Key(b.PVC), b.PV.Name, n.Claims)
		}
	}
	for _, p := range pv.DynamicProvisions {
		if !slices.ContainsFunc(n.Claims, func(c explain.NodeClaim) bool { return c.Claim == cache.Key(p) && c.Action == "provision" }) {
			return fmt.Errorf("Find provisions claim %s; the explanation says %v", cache.Key(p), n.Claims)
		}
	}
	return nil
}

// checkNodeCandidates checks the candidates and capacities under one
// reason on node.
func checkNodeCandidates(r explain.NodeReason, node *v1.Node, claims map[string]*v1.PersistentVolumeClaim, volumes map[string]*v1.PersistentVolume) error {
	pvc := claims[r.Claim]
	if pvc == nil {
		return nil
	}
	for _, c := range r.Candidates {
		pv := volumes[c.Volume]
		switch {
		case c.Rule != explain.Fits:
			if !fails(c.Rule, pv, pvc, true, node, false) {
				return fmt.Errorf("volume %s is rejected by rule %s (%s), which it passes", c.Volume, c.Rule, c.Detail)
			}
		case !fitsAlone(pv, pvc, true, node, false):
			return fmt.Errorf("volume %s is said to fit (%s), but FindMatchingVolume does not take it", c.Volume, c.Detail)
		case !strings.Contains(c.Detail, "chosen for claim") && !strings.Contains(c.Detail, "pre-bound to the claim, decides"):
			return fmt.Errorf("volume %s fits, yet no volume was found; detail %q", c.Volume, c.Detail)
		}
	}
	for _, c := range r.Capacities {
		if strings.Contains(c.Detail, "admits") {
			return fmt.Errorf("CSIStorageCapacity %s admits the claim (%s), yet there was no room", c.Name, c.Detail)
		}
	}
	return nil
}
