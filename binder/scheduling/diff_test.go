package scheduling_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/zones"
)

// kubeFind is kube-scheduler's findMatchingVolumes: smallest claim first,
// FindMatchingVolume with the node over every volume of the claim's class
// (listed by name, the order the index breaks ties in), excluding the
// volumes already chosen. It returns "claim=volume" pairs, sorted, and
// whether every claim found one.
func kubeFind(t *testing.T, vb *scheduling.VolumeBinder, all []string, claims []*v1.PersistentVolumeClaim, node *v1.Node) ([]string, bool) {
	t.Helper()
	var pvs []*v1.PersistentVolume
	for _, name := range all {
		if pv, ok := vb.Volume(name); ok {
			pvs = append(pvs, pv)
		}
	}
	claims = slices.Clone(claims)
	slices.SortStableFunc(claims, func(a, c *v1.PersistentVolumeClaim) int {
		qa, qc := a.Spec.Resources.Requests[v1.ResourceStorage], c.Spec.Resources.Requests[v1.ResourceStorage]
		return qa.Cmp(qc)
	})
	chosen := map[string]*v1.PersistentVolume{}
	var out []string
	ok := true
	for _, c := range claims {
		var ofClass []*v1.PersistentVolume
		for _, pv := range pvs {
			if volume.GetPersistentVolumeClass(pv) == volume.GetPersistentVolumeClaimClass(c) {
				ofClass = append(ofClass, pv)
			}
		}
		pv, err := volume.FindMatchingVolume(c, ofClass, node, chosen, true, true)
		if err != nil {
			t.Fatalf("FindMatchingVolume: %v", err)
		}
		if pv == nil {
			ok = false
			continue
		}
		chosen[pv.Name] = pv
		out = append(out, c.Name+"="+pv.Name)
	}
	slices.Sort(out)
	return out, ok
}

// TestFindMatchesKubernetes compares Find's bindings with kube-scheduler's
// search on random worlds of local (per-host), zonal, unconstrained and
// pre-bound volumes, before and after assuming decisions (which move
// volumes between the binder's indexes) and after reverting them.
func TestFindMatchesKubernetes(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 7))
	for world := range 12 {
		const nodes, claims = 6, 8
		objs := []runtime.Object{class("wffc", true, volume.NotSupportedProvisioner)}
		var nodeNames, pvNames []string
		for i := range nodes {
			n := fmt.Sprintf("n%d", i)
			nodeNames = append(nodeNames, n)
			objs = append(objs, node(n, fmt.Sprintf("z%d", i%3)))
		}
		for i := range 40 {
			name := fmt.Sprintf("pv%02d", i)
			size := fmt.Sprintf("%dGi", 1+rnd.IntN(5))
			var p *v1.PersistentVolume
			switch rnd.IntN(4) {
			case 0, 1:
				p = pv(name, size, "wffc", v1.LabelHostname, nodeNames[rnd.IntN(nodes)])
			case 2:
				p = pv(name, size, "wffc", zones.ZoneLabel, fmt.Sprintf("z%d", rnd.IntN(3)))
			default:
				p = pv(name, size, "wffc", "", "")
			}
			if rnd.IntN(10) == 0 {
				p.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
			}
			if rnd.IntN(8) == 0 {
				// Pre-bound by a user to a claim of the pods below.
				p.Spec.ClaimRef = &v1.ObjectReference{Namespace: ns, Name: fmt.Sprintf("c%d", rnd.IntN(claims))}
			}
			pvNames = append(pvNames, name)
			objs = append(objs, p)
		}
		for i := range claims {
			objs = append(objs, pvc(fmt.Sprintf("c%d", i), fmt.Sprintf("%dGi", 1+rnd.IntN(4)), "wffc"))
		}
		e := newEnv(t, scheduling.Config{}, objs...)
		pods := []*v1.Pod{pod("p0", "c0", "c1"), pod("p1", "c2", "c3", "c4"), pod("p2", "c5"), pod("p3", "c6", "c7")}

		compare := func(stage string) {
			t.Helper()
			for _, p := range pods {
				var cs []*v1.PersistentVolumeClaim
				for _, v := range p.Spec.Volumes {
					c, _ := e.vb.Claim(ns, v.PersistentVolumeClaim.ClaimName)
					cs = append(cs, c)
				}
				for _, n := range nodeNames {
					want, wantOK := kubeFind(t, e.vb, pvNames, cs, e.node(n))
					got, reasons, err := e.vb.Find(e.ctx, p, e.node(n))
					if err != nil {
						t.Fatalf("world %d %s: Find(%s, %s): %v", world, stage, p.Name, n, err)
					}
					var names []string
					for _, b := range got.StaticBindings {
						names = append(names, b.PVC.Name+"="+b.PV.Name)
					}
					slices.Sort(names)
					gotOK := !scheduling.HasKind(reasons, scheduling.NoMatchingVolume)
					if gotOK != wantOK || (wantOK && !slices.Equal(names, want)) {
						t.Errorf("world %d %s: pod %s on %s: got %v (fits %v), Kubernetes %v (fits %v)",
							world, stage, p.Name, n, names, gotOK, want, wantOK)
					}
				}
			}
		}
		compare("initial")
		// Assume a fitting decision for every pod that fits somewhere.
		type reserved struct {
			p  *v1.Pod
			pv *scheduling.PodVolumes
		}
		var done []reserved
		for _, p := range pods {
			for _, n := range nodeNames {
				got, reasons, err := e.vb.Find(e.ctx, p, e.node(n))
				if err != nil || len(reasons) > 0 {
					continue
				}
				if _, err := e.vb.Assume(e.ctx, p, n, got); err != nil {
					t.Fatalf("Assume: %v", err)
				}
				done = append(done, reserved{p, got})
				break
			}
		}
		compare("assumed " + strings.Repeat("+", len(done)))
		for _, r := range done {
			e.vb.Revert(r.p, r.pv)
		}
		compare("reverted")
	}
}
