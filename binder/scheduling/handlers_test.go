package scheduling_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/scheduling"
)

// TestHandlersKeepIndexCurrent checks that informer events reach Find: a
// local volume taken by another claim, given back, and deleted (also as a
// DeletedFinalStateUnknown) is offered exactly while it is available.
func TestHandlersKeepIndexCurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduling.Config{}, append(baseObjects(),
		pv("local-a", "1Gi", "wffc", v1.LabelHostname, "node-a"),
		pv("local-a2", "1Gi", "wffc", v1.LabelHostname, "node-a"),
		pvc("c1", "1Gi", "wffc"))...)
	p := pod("p", "c1")
	offered := func() string {
		t.Helper()
		got, reasons, err := e.vb.Find(e.ctx, p, e.node("node-a"))
		if err != nil {
			t.Fatalf("Find: %v", err)
		}
		if len(reasons) > 0 {
			return ""
		}
		return got.StaticBindings[0].PV.Name
	}
	if got := offered(); got != "local-a" {
		t.Fatalf("offered %q, want local-a", got)
	}
	// The Binder binds local-a to another claim.
	taken := e.volume("local-a")
	taken.Spec.ClaimRef = &v1.ObjectReference{Namespace: ns, Name: "other", UID: "other-uid"}
	taken, err := e.srv.UpdateVolume(e.ctx, taken)
	if err != nil {
		t.Fatal(err)
	}
	if got := offered(); got != "local-a2" {
		t.Errorf("after local-a was taken, offered %q, want local-a2", got)
	}
	// It is released and made available again.
	taken.Spec.ClaimRef = nil
	if _, err := e.srv.UpdateVolume(e.ctx, taken); err != nil {
		t.Fatal(err)
	}
	if got := offered(); got != "local-a" {
		t.Errorf("after local-a came back, offered %q, want local-a", got)
	}
	// Deleted, once seen directly and once only on relist.
	if err := e.srv.DeleteVolume(e.ctx, "local-a"); err != nil {
		t.Fatal(err)
	}
	if got := offered(); got != "local-a2" {
		t.Errorf("after local-a was deleted, offered %q, want local-a2", got)
	}
	e.vb.VolumeHandler().OnDelete(toolscache.DeletedFinalStateUnknown{Key: "local-a2", Obj: e.volume("local-a2")})
	if got := offered(); got != "" {
		t.Errorf("after every volume was deleted, offered %q, want none", got)
	}
	if _, ok := e.vb.Volume("local-a2"); ok {
		t.Errorf("Volume(local-a2) still cached after its delete")
	}
	// Objects of the wrong type are ignored.
	e.vb.VolumeHandler().OnAdd("not a volume", false)
	e.vb.VolumeHandler().OnDelete(42)
	e.vb.ClaimHandler().OnUpdate(nil, "not a claim")
}
