//go:build e2e && linux

package suite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompare checks the comparison itself on made-up checkpoints: equal
// fields pass, a changed value, a field or an object only one binder has,
// and a checkpoint only one binder reached are differences.
func TestCompare(t *testing.T) {
	var r results
	same := state{"claim data": {"status.phase": "Bound"}, "events": {"PersistentVolumeClaim <uid of data> Normal ExternalProvisioning: x": "present"}}
	r.put("volbind", "c", "bound", same)
	r.put("kcm", "c", "bound", same)
	r.put("volbind", "c", "released", state{"volume v": {"status.phase": "Released", "metadata.finalizers": "f"}, "events": {"a": "present"}})
	r.put("kcm", "c", "released", state{"volume v": {"status.phase": "Failed"}, "claim x": {"status.phase": "Lost"}})
	r.put("kcm", "c", "deleted", state{"events": {}})
	r.put("kcm", "c", "deleted", state{"events": {"b": "present"}})
	diffs, compared := r.compare()
	want := []difference{
		{"c", "deleted", "events", "b", "(absent)", "present"},
		{"c", "released", "claim x", "status.phase", "(absent)", "Lost"},
		{"c", "released", "events", "a", "present", "(absent)"},
		{"c", "released", "volume v", "metadata.finalizers", "f", "(absent)"},
		{"c", "released", "volume v", "status.phase", "Released", "Failed"},
	}
	if d := cmp.Diff(want, diffs, cmp.AllowUnexported(difference{})); d != "" {
		t.Errorf("compare differences (-want +got):\n%s", d)
	}
	if compared["c"] != 7 {
		t.Errorf("compared %d fields of case c, want 7", compared["c"])
	}
	if k := (knownDifference{field: "status.phase", object: "volume v"}); !k.matches(want[4]) || k.matches(want[1]) {
		t.Errorf("knownDifference %+v matches wrongly", k)
	}
}
