package binder

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestReservations(t *testing.T) {
	t.Parallel()
	r := newReservations()
	if excluded, _ := r.snapshot(); excluded != nil {
		t.Fatalf("snapshot of no reservation = %v, want nil", excluded)
	}
	if !r.miss("ns/nothing-excluded", nil, 0) {
		t.Fatalf("miss without exclusions = false, want true")
	}
	if !r.tryReserve("pv1") {
		t.Fatal("tryReserve(pv1) = false on a free volume")
	}
	if r.tryReserve("pv1") {
		t.Fatal("tryReserve(pv1) = true on a reserved volume")
	}
	excluded, freed := r.snapshot()
	if !excluded["pv1"] || len(excluded) != 1 {
		t.Fatalf("snapshot = %v, want pv1", excluded)
	}
	if !r.miss("ns/a", excluded, freed) {
		t.Fatal("miss = false with no reservation freed since the snapshot")
	}
	// pv2's binding fails after b's snapshot: b must search again.
	excludedB, freedB := r.snapshot()
	r.tryReserve("pv2")
	if wake := r.release("pv2", true); !slices.Equal(wake, []string{"ns/a"}) {
		t.Errorf("release of a still unclaimed volume wakes %v, want [ns/a]", wake)
	}
	if r.miss("ns/b", excludedB, freedB) {
		t.Error("miss = true although a reservation was freed since the snapshot")
	}
	// A binding that succeeded wakes nobody; once nothing is reserved the
	// claims that missed are forgotten.
	excluded, freed = r.snapshot()
	r.miss("ns/c", excluded, freed)
	if wake := r.release("pv1", false); len(wake) != 0 {
		t.Errorf("release of a claimed volume wakes %v, want nobody", wake)
	}
	if r.len() != 0 || len(r.missed) != 0 {
		t.Errorf("left behind: %d reserved, missed %v", r.len(), r.missed)
	}
}

// Many claim workers racing for interchangeable volumes: each search runs
// without a shared lock and a volume another worker reserved meanwhile is
// searched for again, so every claim gets its own volume with the four
// writes of its binding and no conflict.
func TestClaimWorkersRaceForOneSize(t *testing.T) {
	t.Parallel()
	const n = 64
	var objs []runtime.Object
	for i := range n {
		objs = append(objs, newPV(fmt.Sprintf("pv%03d", i), "1Gi"), newPVC(fmt.Sprintf("claim%03d", i), "1Gi"))
	}
	e := newEnv(t, objs...)
	b := e.newBinder(Config{ClaimWorkers: 32, VolumeWorkers: 4})
	e.srv.ResetStats()
	e.run(b)
	e.settle(b)
	checkAllBound(t, e, n)
	if st := e.srv.Stats(); st.TotalWrites() != 4*n || st.Conflicts != 0 {
		t.Errorf("writes = %d, conflicts = %d, want %d and 0", st.TotalWrites(), st.Conflicts, 4*n)
	}
	if got := b.reservations.len(); got != 0 {
		t.Errorf("%d reservations left", got)
	}
}

// TestReservationHolds: a hold keeps its volume reserved beyond the sync
// that made it; the claim's next sync takes it over, a claim of another
// UID under the key drops it, and dropHold ends it only for its UID.
func TestReservationHolds(t *testing.T) {
	t.Parallel()
	r := newReservations()
	if name, own := r.takeHold("ns/a", "uid-a"); name != "" || own {
		t.Fatalf("takeHold without holds = %q, %t", name, own)
	}
	r.tryReserve("pv1")
	r.hold("ns/a", "uid-a", "pv1")
	if r.tryReserve("pv1") {
		t.Fatal("tryReserve of a held volume = true")
	}
	if got := r.dropHold("ns/a", "uid-other"); got != "" {
		t.Fatalf("dropHold of another UID = %q, want nothing dropped", got)
	}
	if name, own := r.takeHold("ns/a", "uid-a"); name != "pv1" || !own {
		t.Fatalf("takeHold = %q, %t; want pv1, own", name, own)
	}
	if r.tryReserve("pv1") {
		t.Fatal("tryReserve of a volume whose hold was taken over = true, want it still reserved")
	}
	r.hold("ns/a", "uid-a", "pv1")
	if name, own := r.takeHold("ns/a", "uid-new"); name != "pv1" || own {
		t.Fatalf("takeHold by a re-created claim = %q, %t; want pv1, not own", name, own)
	}
	r.release("pv1", true)
	r.tryReserve("pv2")
	r.hold("ns/b", "uid-b", "pv2")
	if got := r.dropHold("ns/b", ""); got != "pv2" {
		t.Fatalf("dropHold(any UID) = %q, want pv2", got)
	}
	r.release("pv2", true)
	if n, h := r.len(), r.holds.Load(); n != 0 || h != 0 {
		t.Errorf("after releasing everything: %d reserved, %d holds; want none", n, h)
	}
}
