package scheduling_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/zones"
)

const benchNodes = 100

// benchWorld is n available volumes of random sizes in 1..100 GiB with
// node affinity to a random node of 100 (affinity kubernetes.io/hostname)
// or to its zone of 3 (topology.kubernetes.io/zone) (node affinity kubernetes.io/hostname In [node]), two
// WaitForFirstConsumer claims of 10 and 20 GiB and a pod using both.
type benchWorld struct {
	vb     *scheduling.VolumeBinder
	nodes  []*v1.Node
	pvs    []*v1.PersistentVolume
	claims []*v1.PersistentVolumeClaim
	pod    *v1.Pod
}

func newBenchWorld(b *testing.B, n int, affinity string) *benchWorld {
	b.Helper()
	sc := class("local", true, volume.NotSupportedProvisioner)
	vb, err := scheduling.New(bindertest.New(), classLister(b, sc), scheduling.Config{})
	if err != nil {
		b.Fatal(err)
	}
	w := &benchWorld{vb: vb}
	for i := range benchNodes {
		w.nodes = append(w.nodes, node(fmt.Sprintf("node-%03d", i), fmt.Sprintf("z%d", i%3)))
	}
	vh, ch := vb.VolumeHandler(), vb.ClaimHandler()
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		nd := w.nodes[rnd.IntN(benchNodes)]
		p := pv(fmt.Sprintf("pv-%06d", i), fmt.Sprintf("%dGi", 1+rnd.IntN(100)), "local", affinity, nd.Labels[affinity])
		p.ResourceVersion = "1"
		w.pvs = append(w.pvs, p)
		vh.OnAdd(p, true)
	}
	for _, c := range []*v1.PersistentVolumeClaim{pvc("data", "20Gi", "local"), pvc("logs", "10Gi", "local")} {
		c.ResourceVersion, c.UID = "1", types.UID("uid-"+c.Name)
		w.claims = append(w.claims, c)
		ch.OnAdd(c, true)
	}
	w.pod = pod("web-0", "data", "logs")
	return w
}

// BenchmarkFind is the scheduler's filter for one pod with two
// WaitForFirstConsumer claims: one op is Find on each of 100 nodes.
func BenchmarkFind(b *testing.B) {
	for _, affinity := range []string{v1.LabelHostname, zones.ZoneLabel} {
		for _, n := range []int{10_000, 100_000} {
			w := newBenchWorld(b, n, affinity)
			name := fmt.Sprintf("affinity=%s/pvs=%d", affinity[strings.LastIndexByte(affinity, '/')+1:], n)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, nd := range w.nodes {
						pv, reasons, err := w.vb.Find(b.Context(), w.pod, nd)
						if err != nil || len(reasons) > 0 || len(pv.StaticBindings) != 2 {
							b.Fatalf("Find(%s) = %v, %v", nd.Name, reasons, err)
						}
					}
				}
			})
			b.Run(name+"/parallel", func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						for _, nd := range w.nodes {
							if _, _, err := w.vb.Find(b.Context(), w.pod, nd); err != nil {
								b.Error(err)
								return
							}
						}
					}
				})
			})
		}
	}
}

// BenchmarkFindBound is the scheduler's filter for a pod whose two claims
// are bound already (a StatefulSet's pod scheduled again): one op is Find on
// each of 100 nodes, which checks the bound volumes' node affinity. Both
// volumes are on one node, which fits; the 99 others do not.
func BenchmarkFindBound(b *testing.B) {
	w := newBenchWorld(b, 10_000, v1.LabelHostname)
	host := func(p *v1.PersistentVolume) string {
		return p.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0]
	}
	picked := []*v1.PersistentVolume{w.pvs[0]}
	for _, p := range w.pvs[1:] {
		if host(p) == host(w.pvs[0]) {
			picked = append(picked, p)
			break
		}
	}
	if len(picked) != 2 {
		b.Fatalf("no second volume on %s", host(w.pvs[0]))
	}
	var claims []string
	for i, old := range picked {
		name := fmt.Sprintf("bound-%d", i)
		p := boundPV(old.DeepCopy(), name)
		p.ResourceVersion = "2"
		w.vb.VolumeHandler().OnUpdate(old, p)
		c := boundPVC(pvc(name, "1Gi", "local"), p.Name)
		c.ResourceVersion, c.UID = "1", types.UID("uid-"+name)
		w.vb.ClaimHandler().OnAdd(c, true)
		claims = append(claims, name)
	}
	bound, fitting := pod("web-1", claims...), host(picked[0])
	b.ReportAllocs()
	for b.Loop() {
		for _, nd := range w.nodes {
			_, reasons, err := w.vb.Find(b.Context(), bound, nd)
			fits := nd.Name == fitting
			if err != nil || fits != (len(reasons) == 0) || (!fits && reasons[0].Kind != scheduling.VolumeNodeAffinityConflict) {
				b.Fatalf("Find(%s) = %v, %v; want a fit: %v", nd.Name, reasons, err, fits)
			}
		}
	}
}

// BenchmarkFindAnchor is the same filter as kube-scheduler does it:
// component-helpers' FindMatchingVolume with the node over every volume of
// the class, smallest claim first, per node. The class's volumes are listed
// once outside the loop (kube-scheduler lists them per claim and node), so
// the anchor is, if anything, flattered. One op at 100,000 volumes takes
// minutes; -short skips that size.
func BenchmarkFindAnchor(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		if n > 10_000 && testing.Short() {
			b.Logf("pvs=%d skipped with -short", n)
			continue
		}
		w := newBenchWorld(b, n, v1.LabelHostname)
		claims := slices.Clone(w.claims)
		slices.SortStableFunc(claims, func(a, c *v1.PersistentVolumeClaim) int {
			qa, qc := a.Spec.Resources.Requests[v1.ResourceStorage], c.Spec.Resources.Requests[v1.ResourceStorage]
			return qa.Cmp(qc)
		})
		b.Run(fmt.Sprintf("pvs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, nd := range w.nodes {
					chosen := map[string]*v1.PersistentVolume{}
					for _, c := range claims {
						pv, err := volume.FindMatchingVolume(c, w.pvs, nd, chosen, true, true)
						if err != nil || pv == nil {
							b.Fatalf("FindMatchingVolume(%s, %s) = %v, %v", c.Name, nd.Name, pv, err)
						}
						chosen[pv.Name] = pv
					}
				}
			}
		})
	}
}
