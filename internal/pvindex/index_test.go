package pvindex

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// testSeed returns PVINDEX_SEED when set (to replay a logged failure), else
// a fresh seed, and logs it.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PVINDEX_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("PVINDEX_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (replay with PVINDEX_SEED=%d)", seed, seed)
	return seed
}

// pvOpt and pvcOpt edit a test object.
type (
	pvOpt  func(*v1.PersistentVolume)
	pvcOpt func(*v1.PersistentVolumeClaim)
)

func mkPV(name, size string, opts ...pvOpt) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: "gold",
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	for _, o := range opts {
		o(pv)
	}
	return pv
}

func mkPVC(size string, opts ...pvcOpt) *v1.PersistentVolumeClaim {
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "claim", UID: "uid-1"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To("gold"),
			Resources: v1.VolumeResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			},
		},
	}
	for _, o := range opts {
		o(pvc)
	}
	return pvc
}

func pvModes(m ...v1.PersistentVolumeAccessMode) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.AccessModes = m }
}
func pvClass(c string) pvOpt { return func(pv *v1.PersistentVolume) { pv.Spec.StorageClassName = c } }
func pvPhase(p v1.PersistentVolumePhase) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Status.Phase = p }
}
func pvClaim(ns, name, uid string) pvOpt {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: ns, Name: name, UID: types.UID(uid)}
	}
}
func pvDeleting() pvOpt {
	return func(pv *v1.PersistentVolume) { pv.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }
}
func pvLabels(k, v string) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Labels = map[string]string{k: v} }
}
func pvZone(zone string) pvOpt {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{zone}}},
		}}}}
	}
}
func pvBlock() pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock) }
}
func pvVAC(c string) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.VolumeAttributesClassName = &c }
}

func pvcModes(m ...v1.PersistentVolumeAccessMode) pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.AccessModes = m }
}
func pvcClass(c *string) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = c }
}
func pvcSelector(k, v string) pvcOpt {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
}
func pvcBlock() pvcOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock) }
}
func pvcVAC(c string) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = &c }
}

func zoneNode(zone string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node", Labels: map[string]string{"zone": zone}}}
}

// TestFindBestMatchRules checks each matching rule of the PV controller on a
// small, hand-written cluster.
func TestFindBestMatchRules(t *testing.T) {
	rwo, rox, rwx := v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany
	tests := []struct {
		name  string
		vols  []*v1.PersistentVolume
		claim *v1.PersistentVolumeClaim
		opts  FindOptions
		want  string // "" = no match
	}{
		{"smallest sufficient wins", []*v1.PersistentVolume{mkPV("a", "20Gi"), mkPV("b", "5Gi"), mkPV("c", "10Gi")}, mkPVC("8Gi"), FindOptions{}, "c"},
		{"exact size", []*v1.PersistentVolume{mkPV("a", "20Gi"), mkPV("b", "8Gi")}, mkPVC("8Gi"), FindOptions{}, "b"},
		{"equal units compare equal", []*v1.PersistentVolume{mkPV("a", "1073741824"), mkPV("b", "2Gi")}, mkPVC("1Gi"), FindOptions{}, "a"},
		{"too small", []*v1.PersistentVolume{mkPV("a", "5Gi")}, mkPVC("8Gi"), FindOptions{}, ""},
		{"equal capacity: first name wins", []*v1.PersistentVolume{mkPV("b", "10Gi"), mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{}, "a"},
		{"fewer modes first, even if larger", []*v1.PersistentVolume{mkPV("multi", "1Gi", pvModes(rwo, rwx)), mkPV("single", "100Gi")}, mkPVC("1Gi"), FindOptions{}, "single"},
		{"next set when the first has no fit", []*v1.PersistentVolume{mkPV("multi", "10Gi", pvModes(rwo, rwx)), mkPV("single", "1Gi")}, mkPVC("5Gi"), FindOptions{}, "multi"},
		{"equal-size sets: RWO+ROX before RWO+RWX", []*v1.PersistentVolume{mkPV("rwx", "1Gi", pvModes(rwo, rwx)), mkPV("rox", "9Gi", pvModes(rox, rwo))}, mkPVC("1Gi"), FindOptions{}, "rox"},
		{"claim modes must all be offered", []*v1.PersistentVolume{mkPV("a", "10Gi")}, mkPVC("1Gi", pvcModes(rwo, rwx)), FindOptions{}, ""},
		{"unknown claim mode matches nothing", []*v1.PersistentVolume{mkPV("a", "10Gi")}, mkPVC("1Gi", pvcModes("Bogus")), FindOptions{}, ""},
		{"claim without modes takes a volume without modes first", []*v1.PersistentVolume{mkPV("a", "1Gi"), mkPV("none", "10Gi", pvModes())}, mkPVC("1Gi", pvcModes()), FindOptions{}, "none"},
		{"class mismatch", []*v1.PersistentVolume{mkPV("a", "10Gi", pvClass("silver"))}, mkPVC("1Gi"), FindOptions{}, ""},
		{"empty class claim takes classless volume", []*v1.PersistentVolume{mkPV("gold", "1Gi"), mkPV("none", "10Gi", pvClass(""))}, mkPVC("1Gi", pvcClass(ptr.To(""))), FindOptions{}, "none"},
		{"unset class claim takes classless volume", []*v1.PersistentVolume{mkPV("gold", "1Gi"), mkPV("none", "10Gi", pvClass(""))}, mkPVC("1Gi", pvcClass(nil)), FindOptions{}, "none"},
		{"beta class annotation wins over the field", []*v1.PersistentVolume{mkPV("a", "1Gi", func(pv *v1.PersistentVolume) {
			pv.Annotations = map[string]string{v1.BetaStorageClassAnnotation: "silver"}
		})}, mkPVC("1Gi", pvcClass(ptr.To("silver"))), FindOptions{}, "a"},
		{"volume mode mismatch", []*v1.PersistentVolume{mkPV("a", "10Gi", pvBlock())}, mkPVC("1Gi"), FindOptions{}, ""},
		{"block claim", []*v1.PersistentVolume{mkPV("fs", "1Gi"), mkPV("blk", "10Gi", pvBlock())}, mkPVC("1Gi", pvcBlock()), FindOptions{}, "blk"},
		{"VolumeAttributesClass must match", []*v1.PersistentVolume{mkPV("plain", "1Gi"), mkPV("vac", "10Gi", pvVAC("fast"))}, mkPVC("1Gi", pvcVAC("fast")), FindOptions{}, "vac"},
		{"VolumeAttributesClass \"\" equals unset", []*v1.PersistentVolume{mkPV("a", "1Gi", pvVAC(""))}, mkPVC("1Gi"), FindOptions{}, "a"},
		{"selector", []*v1.PersistentVolume{mkPV("a", "1Gi", pvLabels("tier", "b")), mkPV("b", "10Gi", pvLabels("tier", "a"))}, mkPVC("1Gi", pvcSelector("tier", "a")), FindOptions{}, "b"},
		{"not Available", []*v1.PersistentVolume{mkPV("p", "1Gi", pvPhase(v1.VolumePending)), mkPV("r", "2Gi", pvPhase(v1.VolumeReleased)), mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{}, "a"},
		{"being deleted", []*v1.PersistentVolume{mkPV("d", "1Gi", pvDeleting()), mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{}, "a"},
		{"bound to another claim", []*v1.PersistentVolume{mkPV("x", "1Gi", pvClaim("ns", "other", "u")), mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{}, "a"},
		{"pre-bound wins over smaller", []*v1.PersistentVolume{mkPV("a", "1Gi"), mkPV("pre", "50Gi", pvClaim("ns", "claim", ""))}, mkPVC("1Gi"), FindOptions{}, "pre"},
		{"bound with this UID wins", []*v1.PersistentVolume{mkPV("a", "1Gi"), mkPV("pre", "50Gi", pvClaim("ns", "claim", "uid-1"))}, mkPVC("1Gi"), FindOptions{}, "pre"},
		{"bound to an old UID is not this claim's", []*v1.PersistentVolume{mkPV("a", "10Gi"), mkPV("old", "1Gi", pvClaim("ns", "claim", "uid-0"))}, mkPVC("1Gi"), FindOptions{}, "a"},
		{"pre-bound skips phase, class and selector", []*v1.PersistentVolume{mkPV("pre", "50Gi", pvClaim("ns", "claim", ""), pvPhase(v1.VolumeReleased), pvClass("silver"), pvLabels("tier", "x"))}, mkPVC("1Gi", pvcSelector("tier", "a")), FindOptions{}, "pre"},
		{"pre-bound too small", []*v1.PersistentVolume{mkPV("pre", "1Gi", pvClaim("ns", "claim", "")), mkPV("a", "10Gi")}, mkPVC("5Gi"), FindOptions{}, "a"},
		{"pre-bound being deleted", []*v1.PersistentVolume{mkPV("pre", "10Gi", pvClaim("ns", "claim", ""), pvDeleting()), mkPV("a", "10Gi")}, mkPVC("5Gi"), FindOptions{}, "a"},
		{"pre-bound mode mismatch", []*v1.PersistentVolume{mkPV("pre", "10Gi", pvClaim("ns", "claim", ""), pvBlock()), mkPV("a", "10Gi")}, mkPVC("5Gi"), FindOptions{}, "a"},
		{"pre-bound in a later set loses to a match in an earlier set", []*v1.PersistentVolume{mkPV("pre", "10Gi", pvClaim("ns", "claim", ""), pvModes(rwo, rwx)), mkPV("a", "10Gi")}, mkPVC("5Gi"), FindOptions{}, "a"},
		{"pre-bound, first name decides", []*v1.PersistentVolume{mkPV("pre-b", "10Gi", pvClaim("ns", "claim", "")), mkPV("pre-a", "20Gi", pvClaim("ns", "claim", ""))}, mkPVC("5Gi"), FindOptions{}, "pre-a"},
		{"delayed binding: unbound volumes are left to the scheduler", []*v1.PersistentVolume{mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{DelayBinding: true}, ""},
		{"delayed binding: pre-bound still matches", []*v1.PersistentVolume{mkPV("a", "10Gi"), mkPV("pre", "10Gi", pvClaim("ns", "claim", ""))}, mkPVC("1Gi"), FindOptions{DelayBinding: true}, "pre"},
		{"delayed binding with a node: unbound match", []*v1.PersistentVolume{mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{DelayBinding: true, Node: zoneNode("z1")}, "a"},
		{"node affinity", []*v1.PersistentVolume{mkPV("z2", "1Gi", pvZone("z2")), mkPV("z1", "10Gi", pvZone("z1"))}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1")}, "z1"},
		{"node affinity ignored without a node", []*v1.PersistentVolume{mkPV("z2", "1Gi", pvZone("z2")), mkPV("z1", "10Gi", pvZone("z1"))}, mkPVC("1Gi"), FindOptions{}, "z2"},
		{"pre-bound off the node: no match in its set", []*v1.PersistentVolume{mkPV("pre", "10Gi", pvClaim("ns", "claim", ""), pvZone("z2")), mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1")}, ""},
		{"pre-bound off the node: next set searched", []*v1.PersistentVolume{mkPV("pre", "10Gi", pvClaim("ns", "claim", ""), pvZone("z2")), mkPV("a", "10Gi", pvModes(rwo, rox))}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1")}, "a"},
		{"NodeMatches decides", []*v1.PersistentVolume{mkPV("a", "1Gi"), mkPV("b", "10Gi")}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1"), NodeMatches: func(pv *v1.PersistentVolume, _ *v1.Node) (bool, error) {
			return pv.Name == "b", nil
		}}, "b"},
		{"NodeMatches error is no", []*v1.PersistentVolume{mkPV("a", "1Gi")}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1"), NodeMatches: func(*v1.PersistentVolume, *v1.Node) (bool, error) {
			return true, errors.New("boom")
		}}, ""},
		{"excluded", []*v1.PersistentVolume{mkPV("a", "1Gi"), mkPV("b", "10Gi")}, mkPVC("1Gi"), FindOptions{Exclude: map[string]bool{"a": true}}, "b"},
		{"excluded pre-bound", []*v1.PersistentVolume{mkPV("pre", "1Gi", pvClaim("ns", "claim", "")), mkPV("b", "10Gi")}, mkPVC("1Gi"), FindOptions{Exclude: map[string]bool{"pre": true}}, "b"},
		{"scheduler: smallest over all access-mode sets", []*v1.PersistentVolume{mkPV("multi", "1Gi", pvModes(rwo, rwx)), mkPV("single", "100Gi")}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1"), SchedulerSearch: true}, "multi"},
		{"scheduler: modes must contain the claim's", []*v1.PersistentVolume{mkPV("rwx", "1Gi", pvModes(rwx)), mkPV("rwo", "100Gi")}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1"), SchedulerSearch: true}, "rwo"},
		{"scheduler: no node, no access-mode check", []*v1.PersistentVolume{mkPV("rwx", "1Gi", pvModes(rwx)), mkPV("rwo", "100Gi")}, mkPVC("1Gi"), FindOptions{SchedulerSearch: true}, "rwx"},
		{"scheduler: pre-bound with other modes wins", []*v1.PersistentVolume{mkPV("pre", "10Gi", pvClaim("ns", "claim", ""), pvModes(rwx)), mkPV("a", "1Gi")}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1"), SchedulerSearch: true}, "pre"},
		{"scheduler: pre-bound of another class is not seen", []*v1.PersistentVolume{mkPV("pre", "10Gi", pvClaim("ns", "claim", ""), pvClass("silver")), mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1"), SchedulerSearch: true}, "a"},
		{"scheduler: pre-bound off the node ends the search", []*v1.PersistentVolume{mkPV("pre", "10Gi", pvClaim("ns", "claim", ""), pvZone("z2"), pvModes(rwo, rox)), mkPV("a", "10Gi")}, mkPVC("1Gi"), FindOptions{Node: zoneNode("z1"), SchedulerSearch: true}, ""},
		{"no capacity counts as zero", []*v1.PersistentVolume{mkPV("a", "1Gi", func(pv *v1.PersistentVolume) { pv.Spec.Capacity = nil })}, mkPVC("0"), FindOptions{}, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ix := New()
			for _, pv := range tc.vols {
				ix.Upsert(pv)
			}
			got, err := ix.FindBestMatch(tc.claim, tc.opts)
			if err != nil {
				t.Fatalf("FindBestMatch() error = %v", err)
			}
			if name := nameOrEmpty(got); name != tc.want {
				t.Errorf("FindBestMatch() = %q, want %q", name, tc.want)
			}
			if tc.opts.NodeMatches != nil {
				return // the reference knows only CheckNodeAffinity
			}
			// The reference agrees with every hand-written case.
			ref, _, err := reference(tc.claim, sortedByName(tc.vols), tc.opts)
			if err != nil || nameOrEmpty(ref) != tc.want {
				t.Errorf("reference() = %q, %v; want %q", nameOrEmpty(ref), err, tc.want)
			}
		})
	}
}

func nameOrEmpty(pv *v1.PersistentVolume) string {
	if pv == nil {
		return ""
	}
	return pv.Name
}

func sortedByName(vols []*v1.PersistentVolume) []*v1.PersistentVolume {
	return slices.SortedFunc(slices.Values(vols), func(a, b *v1.PersistentVolume) int {
		return strings.Compare(a.Name, b.Name)
	})
}

func TestFindBestMatchErrors(t *testing.T) {
	ix := New()
	if _, err := ix.FindBestMatch(nil, FindOptions{}); !errors.Is(err, ErrInvalidClaim) {
		t.Errorf("FindBestMatch(nil) error = %v, want ErrInvalidClaim", err)
	}
	bad := mkPVC("1Gi", func(c *v1.PersistentVolumeClaim) {
		c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}
	})
	// Like Kubernetes, the selector is only parsed once some access-mode set
	// is searched.
	if pv, err := ix.FindBestMatch(bad, FindOptions{}); pv != nil || err != nil {
		t.Errorf("FindBestMatch(bad selector) on an empty index = %v, %v; want nil, nil", pv, err)
	}
	// The scheduler calls FindMatchingVolume, which parses the selector,
	// even with no volume.
	if _, err := ix.FindBestMatch(bad, FindOptions{SchedulerSearch: true}); !errors.Is(err, ErrInvalidClaim) {
		t.Errorf("FindBestMatch(bad selector, SchedulerSearch) on an empty index: error = %v, want ErrInvalidClaim", err)
	}
	ix.Upsert(mkPV("a", "10Gi"))
	if _, err := ix.FindBestMatch(bad, FindOptions{}); !errors.Is(err, ErrInvalidClaim) {
		t.Errorf("FindBestMatch(bad selector) error = %v, want ErrInvalidClaim", err)
	}
}

// TestIndexUpdates follows one volume through the phases a binding goes
// through and checks Len, Get and FindBestMatch after each step.
func TestIndexUpdates(t *testing.T) {
	ix := New()
	ix.Upsert(nil)
	claim := mkPVC("1Gi")
	steps := []struct {
		name string
		do   func()
		len  int
		want string
	}{
		{"add", func() { ix.Upsert(mkPV("a", "10Gi")) }, 1, "a"},
		{"add a larger one", func() { ix.Upsert(mkPV("b", "20Gi")) }, 2, "a"},
		{"a bound elsewhere", func() { ix.Upsert(mkPV("a", "10Gi", pvClaim("ns", "x", "u"))) }, 2, "b"},
		{"a Bound elsewhere", func() { ix.Upsert(mkPV("a", "10Gi", pvClaim("ns", "x", "u"), pvPhase(v1.VolumeBound))) }, 2, "b"},
		{"a Released, claimRef kept", func() { ix.Upsert(mkPV("a", "10Gi", pvClaim("ns", "x", "u"), pvPhase(v1.VolumeReleased))) }, 2, "b"},
		{"a recycled to Available", func() { ix.Upsert(mkPV("a", "10Gi")) }, 2, "a"},
		{"a resized", func() { ix.Upsert(mkPV("a", "30Gi")) }, 2, "b"},
		{"b deleted", func() { ix.Delete("b") }, 1, "a"},
		{"unknown deleted", func() { ix.Delete("nope") }, 1, "a"},
		{"a deleted", func() { ix.Delete("a") }, 0, ""},
	}
	for _, s := range steps {
		s.do()
		if got := ix.Len(); got != s.len {
			t.Fatalf("after %s: Len() = %d, want %d", s.name, got, s.len)
		}
		got, err := ix.FindBestMatch(claim, FindOptions{})
		if err != nil || nameOrEmpty(got) != s.want {
			t.Fatalf("after %s: FindBestMatch() = %q, %v; want %q", s.name, nameOrEmpty(got), err, s.want)
		}
		if s.want != "" {
			if pv, ok := ix.Get(s.want); !ok || pv != got {
				t.Fatalf("after %s: Get(%q) = %v, %v; want the matched volume", s.name, s.want, pv, ok)
			}
		}
	}
	if pv, ok := ix.Get("b"); ok || pv != nil {
		t.Errorf("Get(%q) = %v, %v; want nil, false", "b", pv, ok)
	}
	if len(ix.trees) != 0 || len(ix.byClaim) != 0 || len(ix.claimedMore) != 0 || len(ix.byName) != 0 {
		t.Errorf("empty index keeps %d trees, %d claims (%d with several volumes), %d names", len(ix.trees), len(ix.byClaim), len(ix.claimedMore), len(ix.byName))
	}
}

// TestIndexShare: Share swaps in another copy of the indexed version only,
// and FindBestMatch then returns it.
func TestIndexShare(t *testing.T) {
	withRV := func(pv *v1.PersistentVolume, rv string) *v1.PersistentVolume { pv.ResourceVersion = rv; return pv }
	ix := New()
	answer := withRV(mkPV("a", "10Gi"), "5")
	ix.Upsert(answer)
	for _, tc := range []struct {
		name string
		pv   *v1.PersistentVolume
		want bool
	}{
		{"nil", nil, false},
		{"unknown name", withRV(mkPV("b", "10Gi"), "5"), false},
		{"other version", withRV(mkPV("a", "10Gi"), "6"), false},
		{"same version", withRV(mkPV("a", "10Gi"), "5"), true},
	} {
		want := answer
		if tc.want {
			want = tc.pv
		}
		if got := ix.Share(tc.pv); got != tc.want {
			t.Errorf("Share(%s) = %v, want %v", tc.name, got, tc.want)
		}
		got, err := ix.FindBestMatch(mkPVC("1Gi"), FindOptions{})
		if err != nil || got != want || ix.Len() != 1 {
			t.Errorf("after Share(%s): FindBestMatch = %p (%v), Len %d; want %p and 1", tc.name, got, err, ix.Len(), want)
		}
		answer = want
	}
}

// TestIndexConcurrent runs finds and upserts at once; the race detector
// checks the locking.
func TestIndexConcurrent(t *testing.T) {
	ix := New()
	for i := range 100 {
		ix.Upsert(mkPV(fmt.Sprintf("pv-%03d", i), fmt.Sprintf("%dGi", 1+i%10), pvZone(fmt.Sprintf("z%d", i%3))))
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 300 {
				if w == 0 {
					ix.Upsert(mkPV(fmt.Sprintf("pv-%03d", i%100), fmt.Sprintf("%dGi", 1+i%7), pvZone(fmt.Sprintf("z%d", i%3))))
					continue
				}
				pv, err := ix.FindBestMatch(mkPVC("1Gi"), FindOptions{Node: zoneNode(fmt.Sprintf("z%d", w%3))})
				if err != nil || pv == nil {
					t.Errorf("FindBestMatch() = %v, %v; want a volume", pv, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestClaimedBy(t *testing.T) {
	ix := New()
	for _, name := range []string{"pv-b", "pv-a", "pv-c"} {
		pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if name != "pv-c" {
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "claim", UID: types.UID("uid-" + name)}
		}
		ix.Upsert(pv)
	}
	if got := ix.ClaimedBy("ns", "claim", ""); !slices.Equal(got, []string{"pv-a", "pv-b"}) {
		t.Errorf("ClaimedBy = %v, want [pv-a pv-b]", got)
	}
	if got := ix.ClaimedBy("ns", "claim", "pv-a"); !slices.Equal(got, []string{"pv-b"}) {
		t.Errorf("ClaimedBy except pv-a = %v, want [pv-b]", got)
	}
	if got := ix.ClaimedBy("ns", "other", ""); got != nil {
		t.Errorf("ClaimedBy of an unknown claim = %v, want nil", got)
	}
	// The Binder asks after every binding; the usual answer (no other
	// volume names the claim) must not allocate.
	ix.Upsert(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-d"},
		Spec: v1.PersistentVolumeSpec{ClaimRef: &v1.ObjectReference{Namespace: "ns", Name: "single", UID: "uid-single"}}})
	if allocs := testing.AllocsPerRun(100, func() { ix.ClaimedBy("ns", "single", "pv-d") }); allocs != 0 {
		t.Errorf("ClaimedBy with no other volume: %v allocations, want 0", allocs)
	}
}

// TestClaimedBySeveralVolumes: the volumes that name one claim stay sorted
// by name through adds, deletes and claimRef changes in any order, and the
// Index keeps no entry for a claim once no volume names it.
func TestClaimedBySeveralVolumes(t *testing.T) {
	ix := New()
	named := func(name, claim string) *v1.PersistentVolume {
		pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if claim != "" {
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: claim}
		}
		return pv
	}
	check := func(step string, want ...string) {
		t.Helper()
		if got := ix.ClaimedBy("ns", "claim", ""); !slices.Equal(got, want) {
			t.Errorf("%s: ClaimedBy = %v, want %v", step, got, want)
		}
	}
	for _, name := range []string{"pv-c", "pv-a", "pv-b"} {
		ix.Upsert(named(name, "claim"))
	}
	check("three added", "pv-a", "pv-b", "pv-c")
	ix.Delete("pv-c") // the first one added
	check("last deleted", "pv-a", "pv-b")
	ix.Delete("pv-a")
	check("first deleted", "pv-b")
	ix.Upsert(named("pv-c", "claim"))
	ix.Upsert(named("pv-a", "claim"))
	ix.Delete("pv-b")
	check("middle deleted", "pv-a", "pv-c")
	ix.Upsert(named("pv-a", "other"))
	check("first names another claim", "pv-c")
	if got := ix.ClaimedBy("ns", "other", ""); !slices.Equal(got, []string{"pv-a"}) {
		t.Errorf("ClaimedBy(other) = %v, want [pv-a]", got)
	}
	ix.Upsert(named("pv-b", "claim"))
	ix.Upsert(named("pv-c", ""))
	check("last unbound", "pv-b")
	for _, name := range []string{"pv-a", "pv-b", "pv-c"} {
		ix.Delete(name)
	}
	check("all deleted")
	if len(ix.byClaim) != 0 || len(ix.claimedMore) != 0 {
		t.Errorf("empty index keeps %d claims (%d with several volumes)", len(ix.byClaim), len(ix.claimedMore))
	}
}

// TestUpsertInPlace: a new version that keeps the record's place replaces
// the volume in it (Get and FindBestMatch return the new version), but a
// changed claimRef still moves the volume to its new claim and a changed
// node affinity is evaluated anew.
// TestFindCurrent checks that a Match stays current while the Index holds
// its version (or a copy of it) and no longer once the volume changes, in
// its record or in a new one, or leaves.
func TestFindCurrent(t *testing.T) {
	ix := New()
	withRV := func(pv *v1.PersistentVolume, rv string) *v1.PersistentVolume {
		pv.ResourceVersion = rv
		return pv
	}
	find := func(opts FindOptions) Match {
		t.Helper()
		m, err := ix.Find(mkPVC("1Gi"), opts)
		if err != nil || m.Volume() == nil || m.Volume().Name != "a" {
			t.Fatalf("Find = %v, %v; want volume a", nameOrEmpty(m.Volume()), err)
		}
		return m
	}
	current := func(what string, m Match, want *v1.PersistentVolume) {
		t.Helper()
		got, ok := ix.Current(m)
		if ok != (want != nil) || got != want {
			t.Errorf("%s: Current = %p, %v; want %p, %v", what, got, ok, want, want != nil)
		}
	}
	if _, ok := ix.Current(Match{}); ok {
		t.Errorf("the zero Match is current")
	}
	v1a := withRV(mkPV("a", "10Gi"), "1")
	ix.Upsert(v1a)
	m := find(FindOptions{})
	current("unchanged", m, v1a)
	current("unchanged, scheduler's search", find(FindOptions{SchedulerSearch: true}), v1a)
	cp := v1a.DeepCopy()
	if !ix.Share(cp) {
		t.Fatalf("Share of a copy of the same version = false")
	}
	current("after Share of a copy", m, cp)

	relabeled := withRV(mkPV("a", "10Gi", pvLabels("k", "v")), "2")
	ix.Upsert(relabeled) // the same record, a new version
	current("after a new version in the same record", m, nil)

	m = find(FindOptions{})
	ix.Upsert(withRV(mkPV("a", "20Gi"), "3")) // a new record
	current("after a resize", m, nil)

	m = find(FindOptions{})
	ix.Delete("a")
	current("after Delete", m, nil)

	pre := withRV(mkPV("a", "10Gi", pvClaim("ns", "claim", "")), "4")
	ix.Upsert(pre)
	current("pre-bound", find(FindOptions{}), pre)
}

func TestUpsertInPlace(t *testing.T) {
	ix := New()
	ix.Upsert(mkPV("a", "10Gi", pvClaim("ns", "x", "u")))
	bound := mkPV("a", "10Gi", pvClaim("ns", "x", "u"), pvPhase(v1.VolumeBound))
	ix.Upsert(bound)
	if got, _ := ix.Get("a"); got != bound {
		t.Errorf("Get(a) after a phase change = %p, want the new version %p", got, bound)
	}
	if got := ix.ClaimedBy("ns", "x", ""); !slices.Equal(got, []string{"a"}) {
		t.Errorf("ClaimedBy(ns/x) after a phase change = %v, want [a]", got)
	}
	ix.Upsert(mkPV("a", "10Gi", pvClaim("ns", "y", "u2"), pvPhase(v1.VolumeBound)))
	if got := ix.ClaimedBy("ns", "x", ""); len(got) != 0 {
		t.Errorf("ClaimedBy(ns/x) after the claimRef moved to ns/y = %v, want none", got)
	}
	if got := ix.ClaimedBy("ns", "y", ""); !slices.Equal(got, []string{"a"}) {
		t.Errorf("ClaimedBy(ns/y) after the claimRef moved to ns/y = %v, want [a]", got)
	}

	ix.Upsert(mkPV("z", "10Gi", pvZone("a")))
	find := func(zone string) string {
		pv, err := ix.FindBestMatch(mkPVC("1Gi"), FindOptions{Node: zoneNode(zone)})
		if err != nil {
			t.Fatal(err)
		}
		return nameOrEmpty(pv)
	}
	if got := find("a"); got != "z" {
		t.Fatalf("FindBestMatch on zone a = %q, want z", got)
	}
	ix.Upsert(mkPV("z", "10Gi", pvZone("b")))
	if got := find("a"); got != "" {
		t.Errorf("FindBestMatch on zone a after z moved to zone b = %q, want none", got)
	}
	if got := find("b"); got != "z" {
		t.Errorf("FindBestMatch on zone b after z moved to zone b = %q, want z", got)
	}
}

// TestRecordSize keeps a record, of which the Index holds one per volume,
// in the 64-byte size class: a field more moves every volume to the next
// class (80 bytes).
func TestRecordSize(t *testing.T) {
	if got := unsafe.Sizeof(record{}); got > 64 {
		t.Errorf("record takes %d bytes, want at most 64", got)
	}
}
