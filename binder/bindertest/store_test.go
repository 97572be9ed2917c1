package bindertest

import (
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStoreMatchesKeyedMap checks a namespaced store against a map keyed
// by "namespace/name" through random puts and removes of names that
// several namespaces share (namespaces that are prefixes of each other
// among them): what get finds, the count, and the sorted order, which
// must be the order of the keys as strings.
func TestStoreMatchesKeyedMap(t *testing.T) {
	namespaces := []string{"a", "a-b", "ab", "b", "a0", "a.b"}
	names := []string{"c", "c-0", "c0", "d", "c/"}
	rng := rand.New(rand.NewPCG(1, 2))
	st := newStore(true)
	model := map[string]object{}
	for step := range 5000 {
		ns, name := namespaces[rng.IntN(len(namespaces))], names[rng.IntN(len(names))]
		key := ns + "/" + name
		if rng.IntN(3) == 0 {
			st.remove(ns, name)
			delete(model, key)
		} else {
			o := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: key}}
			st.put(o)
			model[key] = o
		}
		if st.n != len(model) {
			t.Fatalf("step %d: %d stored, want %d", step, st.n, len(model))
		}
		for _, ns := range namespaces {
			for _, name := range names {
				got, ok := st.get(ns, name)
				want, wantOK := model[ns+"/"+name]
				if ok != wantOK || got != want {
					t.Fatalf("step %d: get(%q, %q) = %v, %t; want %v, %t", step, ns, name, got, ok, want, wantOK)
				}
			}
		}
	}
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) < 10 {
		t.Fatalf("only %d objects left to sort", len(keys))
	}
	checkSorted(t, &st, keys)
}

// TestStoreClusterScoped checks that a cluster-scoped store finds objects
// by name whatever namespace is asked for or set on them, as the keys
// without a namespace did.
func TestStoreClusterScoped(t *testing.T) {
	st := newStore(false)
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1", Namespace: "stray"}}
	st.put(pv)
	st.put(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-0"}})
	if got, ok := st.get("", "pv-1"); !ok || got != pv {
		t.Fatalf("get pv-1 = %v, %t", got, ok)
	}
	if got, ok := st.get("other", "pv-1"); !ok || got != pv {
		t.Fatalf("get pv-1 in another namespace = %v, %t", got, ok)
	}
	next := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}}
	st.put(next)
	if got, _ := st.get("", "pv-1"); got != next || st.n != 2 {
		t.Fatalf("after replacing pv-1: %v, %d stored", got, st.n)
	}
	sorted := st.sorted()
	if len(sorted) != 2 || sorted[0].GetName() != "pv-0" || sorted[1] != next {
		t.Fatalf("sorted = %v", sorted)
	}
	st.remove("stray", "pv-1")
	if _, ok := st.get("", "pv-1"); ok || st.n != 1 {
		t.Fatalf("pv-1 still stored after remove (%d stored)", st.n)
	}
}

// TestStoreSortedSlashedNamespaces checks the key order of a namespaced
// store whose namespaces hold a '/' (SeedInvalid stores them), where keys
// of different namespaces interleave.
func TestStoreSortedSlashedNamespaces(t *testing.T) {
	st := newStore(true)
	var keys []string
	for _, k := range [][2]string{{"a", "b/c"}, {"a/b", "a"}, {"a/b", "d"}, {"a", "a"}, {"a-", "z"}, {"a/b", "b"}} {
		st.put(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: k[0], Name: k[1]}})
		keys = append(keys, k[0]+"/"+k[1])
	}
	slices.Sort(keys)
	checkSorted(t, &st, keys)
}

// TestSeedClaimsOfOneNameInNamespaces checks that claims of one name in
// different namespaces are different objects to a seed and to requests,
// and that a seed naming a stored claim again fails with AlreadyExists.
func TestSeedClaimsOfOneNameInNamespaces(t *testing.T) {
	s := New()
	claim := func(ns string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
	}
	if err := s.Seed(t.Context(), claim("a"), claim("a-b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(t.Context(), claim("b"), claim("a-b")); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("seeding a-b/data again: %v, want AlreadyExists", err)
	}
	if _, err := s.GetClaim(t.Context(), "b", "data"); !apierrors.IsNotFound(err) {
		t.Fatalf("b/data after the failed seed: %v, want NotFound", err)
	}
	if err := s.DeleteClaim(t.Context(), "a", "data"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetClaim(t.Context(), "a-b", "data")
	if err != nil || got.Namespace != "a-b" {
		t.Fatalf("a-b/data after deleting a/data: %v, %v", got, err)
	}
	if n := len(s.Claims()); n != 1 {
		t.Fatalf("%d claims stored, want 1", n)
	}
}

// checkSorted fails t unless st lists its objects in the order of keys
// ("namespace/name", sorted).
func checkSorted(t *testing.T, st *store, keys []string) {
	t.Helper()
	var got []string
	for _, o := range st.sorted() {
		got = append(got, o.GetNamespace()+"/"+o.GetName())
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("sorted:\n%q\nwant\n%q", got, keys)
	}
}
