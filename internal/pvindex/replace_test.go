package pvindex

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkLinks fails t unless the Index's maps and trees hold exactly its
// records: every record of byName with a volume, each with a claimRef
// filed under its claim's hash (byClaim holding it, or for a hash of
// several, claimedMore listing them sorted by name and byClaim one of
// them), the candidates in their trees, and the mode counts those of the
// records.
func checkLinks(t *testing.T, ix *Index) {
	t.Helper()
	want := map[claimHash][]*record{}
	var sets [numModeSets]int
	candidates := 0
	for name, r := range ix.byName {
		if r.pv == nil || r.key.name != name {
			t.Fatalf("byName[%s] holds a retired or misnamed record", name)
		}
		sets[r.modes]++
		if r.candidate {
			candidates++
		}
		if r.hasClaim() {
			h := ix.hashClaim(r.claim())
			want[h] = append(want[h], r)
		}
	}
	if sets != ix.sets {
		t.Fatalf("mode counts %v, records have %v", ix.sets, sets)
	}
	for k, rs := range want {
		slices.SortFunc(rs, func(a, b *record) int { return strings.Compare(a.key.name, b.key.name) })
		if !slices.Contains(rs, ix.byClaim[k]) {
			t.Fatalf("byClaim[%v] holds none of the claim's volumes", k)
		}
		if len(rs) == 1 {
			if _, ok := ix.claimedMore[k]; ok {
				t.Fatalf("claimedMore[%v] kept for one volume", k)
			}
		} else if !slices.Equal(ix.claimedMore[k], rs) {
			t.Fatalf("claimedMore[%v] does not list the claim's %d volumes in order", k, len(rs))
		}
	}
	if len(ix.byClaim) != len(want) {
		t.Fatalf("byClaim has %d hashes, the records' claims have %d", len(ix.byClaim), len(want))
	}
	inTrees := 0
	for _, ts := range ix.trees {
		if ts.empty() {
			t.Fatal("an empty tree set is kept")
		}
		for i := range ts {
			inTrees += ts[i].len
		}
	}
	if inTrees != candidates {
		t.Fatalf("%d records in trees, %d candidates", inTrees, candidates)
	}
}

// TestUpsertReplacesLinks upserts and deletes random versions of a few
// volumes (claimRefs to a few claims or none, sizes, phases, classes, access
// modes) and checks after each step that the Index links exactly its
// current records: a replaced record leaves every map and tree, whether
// its claim, its place or both changed. With colliding hashes every claim
// has the same one, and ClaimedBy must still tell them apart.
func TestUpsertReplacesLinks(t *testing.T) {
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%t", collide), func(t *testing.T) { testUpsertReplacesLinks(t, collide) })
	}
}

// colliding makes every claim of ix hash alike; call it before any Upsert.
func colliding(ix *Index) { ix.hash = func(claimKey) uint64 { return 42 } }

func testUpsertReplacesLinks(t *testing.T, collide bool) {
	rng := rand.New(rand.NewPCG(testSeed(t), 7))
	names := []string{"pv-a", "pv-b", "pv-c", "pv-d"}
	claims := []string{"", "claim-1", "claim-2"}
	relinked := 0
	ix := New()
	if collide {
		colliding(ix)
	}
	for step := range 5000 {
		name := names[rng.IntN(len(names))]
		if rng.IntN(8) == 0 {
			ix.Delete(name)
			checkLinks(t, ix)
			continue
		}
		pv := &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
			Spec: v1.PersistentVolumeSpec{
				Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse([]string{"1Gi", "2Gi"}[rng.IntN(2)])},
				AccessModes:      [][]v1.PersistentVolumeAccessMode{{v1.ReadWriteOnce}, {v1.ReadWriteMany}}[rng.IntN(2)],
				StorageClassName: []string{"", "gold"}[rng.IntN(2)],
			},
			Status: v1.PersistentVolumeStatus{Phase: []v1.PersistentVolumePhase{v1.VolumeAvailable, v1.VolumeBound}[rng.IntN(2)]},
		}
		if c := claims[rng.IntN(len(claims))]; c != "" {
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: c}
		}
		if old := ix.byName[name]; old != nil && old.hasClaim() && pv.Spec.ClaimRef != nil && old.claim().name == pv.Spec.ClaimRef.Name {
			relinked++
		}
		ix.Upsert(pv)
		checkLinks(t, ix)
		if got, _ := ix.Get(name); got != pv {
			t.Fatalf("step %d: Get(%s) is not the upserted version", step, name)
		}
		for _, c := range claims[1:] {
			if got, want := ix.ClaimedBy("ns", c, ""), claimedByScan(ix, "ns", c); !slices.Equal(got, want) {
				t.Fatalf("step %d: ClaimedBy(%s) = %v, the records name it in %v", step, c, got, want)
			}
		}
	}
	if relinked < 500 {
		t.Fatalf("only %d upserts kept their claim", relinked)
	}
}

// claimedByScan returns the sorted names of ix's volumes whose claimRef
// names namespace/name, by reading every record.
func claimedByScan(ix *Index, namespace, name string) []string {
	var out []string
	for n, r := range ix.byName {
		if r.hasClaim() && r.claim() == (claimKey{namespace: namespace, name: name}) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// TestReserveClaimsKeepsLinks reserves room in the claim map of an Index
// that links some volumes: every link stays, and linking after works.
func TestReserveClaimsKeepsLinks(t *testing.T) {
	ix := New()
	bound := func(name, claim string) *v1.PersistentVolume {
		return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PersistentVolumeSpec{ClaimRef: &v1.ObjectReference{Namespace: "ns", Name: claim}}}
	}
	ix.Upsert(bound("pv-a", "claim-1"))
	ix.Upsert(bound("pv-b", "claim-1"))
	ix.Upsert(bound("pv-c", "claim-2"))
	before := ix.byClaim
	ix.ReserveClaims(10)
	if reflect.ValueOf(ix.byClaim).UnsafePointer() != reflect.ValueOf(before).UnsafePointer() {
		t.Error("a reservation below the smallest made the map again")
	}
	ix.ReserveClaims(5000)
	if reflect.ValueOf(ix.byClaim).UnsafePointer() == reflect.ValueOf(before).UnsafePointer() {
		t.Error("the reservation made no room")
	}
	checkLinks(t, ix)
	ix.Upsert(bound("pv-d", "claim-2"))
	checkLinks(t, ix)
	if got := ix.ClaimedBy("ns", "claim-2", ""); !slices.Equal(got, []string{"pv-c", "pv-d"}) {
		t.Errorf("ClaimedBy(claim-2) = %v, want [pv-c pv-d]", got)
	}
	if got := ix.ClaimedBy("ns", "claim-1", ""); !slices.Equal(got, []string{"pv-a", "pv-b"}) {
		t.Errorf("ClaimedBy(claim-1) = %v, want [pv-a pv-b]", got)
	}
}
