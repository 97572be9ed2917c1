package scheduling_test

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/zones"
)

// findFits runs Find and fails the test unless the node fits.
func findFits(t *testing.T, e *env, p *v1.Pod, nodeName string) *scheduling.PodVolumes {
	t.Helper()
	got, reasons, err := e.vb.Find(e.ctx, p, e.node(nodeName))
	if err != nil || len(reasons) > 0 {
		t.Fatalf("Find(%s, %s) = %v, %v; want a fit", p.Name, nodeName, reasons, err)
	}
	return got
}

func assumeObjects() []runtime.Object {
	return append(baseObjects(),
		pv("pv1", "1Gi", "wffc", zones.ZoneLabel, "a"),
		pvc("c1", "1Gi", "wffc"), pvc("c2", "1Gi", "wffc"), pvc("d1", "1Gi", "dyn"))
}

func TestAssumeAndRevert(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduling.Config{}, assumeObjects()...)
	p := pod("p", "c1", "d1")
	pv := findFits(t, e, p, "node-a")
	if len(pv.StaticBindings) != 1 || len(pv.DynamicProvisions) != 1 {
		t.Fatalf("Find = %d bindings, %d provisions; want 1 and 1", len(pv.StaticBindings), len(pv.DynamicProvisions))
	}
	allBound, err := e.vb.Assume(e.ctx, p, "node-a", pv)
	if err != nil || allBound {
		t.Fatalf("Assume() = %v, %v; want false, nil", allBound, err)
	}

	// The volume is assumed pre-bound to c1, as the Binder would write it.
	got, _ := e.vb.Volume("pv1")
	c1 := e.claim("c1")
	if ref := got.Spec.ClaimRef; ref == nil || ref.Name != "c1" || ref.Namespace != ns || ref.UID != c1.UID {
		t.Errorf("assumed volume claimRef = %+v, want c1 with UID %s", got.Spec.ClaimRef, c1.UID)
	}
	if got.Annotations[volume.AnnBoundByController] != "yes" {
		t.Errorf("assumed volume annotations = %v, want %s", got.Annotations, volume.AnnBoundByController)
	}
	if pv.StaticBindings[0].PV != got {
		t.Errorf("PodVolumes binding does not hold the assumed volume")
	}
	// The claim to provision is assumed with the selected node.
	d1, _ := e.vb.Claim(ns, "d1")
	if d1.Annotations[volume.AnnSelectedNode] != "node-a" {
		t.Errorf("assumed claim annotations = %v, want selected node node-a", d1.Annotations)
	}
	if !e.vb.IsAssumed("", "pv1") || !e.vb.IsAssumed(ns, "d1") {
		t.Errorf("IsAssumed(pv1, d1) = %v, %v; want true, true", e.vb.IsAssumed("", "pv1"), e.vb.IsAssumed(ns, "d1"))
	}
	// Nothing was written.
	if api := e.volume("pv1"); api.Spec.ClaimRef != nil {
		t.Errorf("API volume claimRef = %v, want none (Assume must not write)", api.Spec.ClaimRef)
	}
	// The decision is recorded.
	d, ok := e.vb.Decision(p, e.node("node-a"))
	if !ok || len(d.StaticBindings) != 1 || d.StaticBindings[0].PV.Name != "pv1" || len(d.DynamicProvisions) != 1 {
		t.Errorf("Decision() = %+v, %v", d, ok)
	}
	// Another pod no longer gets pv1.
	other := pod("q", "c2")
	if _, reasons, err := e.vb.Find(e.ctx, other, e.node("node-a")); err != nil || !scheduling.HasKind(reasons, scheduling.NoMatchingVolume) {
		t.Errorf("Find(other pod) = %v, %v; want NoMatchingVolume", reasons, err)
	}

	e.vb.Revert(p, pv)
	if e.vb.IsAssumed("", "pv1") || e.vb.IsAssumed(ns, "d1") {
		t.Errorf("still assumed after Revert")
	}
	if got, _ := e.vb.Volume("pv1"); got.Spec.ClaimRef != nil {
		t.Errorf("volume claimRef after Revert = %v, want none", got.Spec.ClaimRef)
	}
	if _, ok := e.vb.Decision(p, e.node("node-a")); ok {
		t.Errorf("Decision() found after Revert")
	}
	if got := findFits(t, e, other, "node-a"); got.StaticBindings[0].PV.Name != "pv1" {
		t.Errorf("other pod after Revert got %s, want pv1", got.StaticBindings[0].PV.Name)
	}
	// Reverting again is harmless.
	e.vb.Revert(p, pv)
}

func TestAssumeAllBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduling.Config{}, append(baseObjects(),
		boundPV(pv("pv1", "1Gi", "wffc", "", ""), "c1"), boundPVC(pvc("c1", "1Gi", "wffc"), "pv1"))...)
	p := pod("p", "c1")
	pv := findFits(t, e, p, "node-a")
	allBound, err := e.vb.Assume(e.ctx, p, "node-a", pv)
	if err != nil || !allBound {
		t.Fatalf("Assume() = %v, %v; want true, nil", allBound, err)
	}
	if e.decided(p, "node-a") {
		t.Errorf("decision recorded although every claim is bound")
	}
}

func TestAssumeErrors(t *testing.T) {
	t.Parallel()
	t.Run("wrong node", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, scheduling.Config{}, assumeObjects()...)
		p := pod("p", "c1")
		pv := findFits(t, e, p, "node-a")
		if _, err := e.vb.Assume(e.ctx, p, "node-b", pv); !errors.Is(err, scheduling.ErrInvalidArgument) {
			t.Errorf("Assume(other node) error = %v, want ErrInvalidArgument", err)
		}
		if _, err := e.vb.Assume(e.ctx, p, "node-a", nil); !errors.Is(err, scheduling.ErrInvalidArgument) {
			t.Errorf("Assume(nil) error = %v, want ErrInvalidArgument", err)
		}
	})
	t.Run("volume changed since Find", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, scheduling.Config{}, append(assumeObjects(), pv("pv2", "1Gi", "wffc", zones.ZoneLabel, "a"))...)
		p := pod("p", "c1", "c2")
		pv := findFits(t, e, p, "node-a")
		// The second chosen volume changes in the API after Find.
		name := pv.StaticBindings[1].PV.Name
		changed := e.volume(name)
		metav1.SetMetaDataAnnotation(&changed.ObjectMeta, "example.com/touched", "yes")
		if _, err := e.srv.UpdateVolume(e.ctx, changed); err != nil {
			t.Fatal(err)
		}
		_, err := e.vb.Assume(e.ctx, p, "node-a", pv)
		if !cache.IsStale(err) {
			t.Fatalf("Assume() error = %v, want a stale error", err)
		}
		for _, n := range []string{"pv1", "pv2"} {
			if e.vb.IsAssumed("", n) {
				t.Errorf("volume %s still assumed after a failed Assume", n)
			}
		}
		if e.decided(p, "node-a") {
			t.Errorf("decision recorded after a failed Assume")
		}
	})
}
