package cache

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestLatestRules(t *testing.T) {
	type store struct {
		pvc        *v1.PersistentVolumeClaim
		wantStored bool
		wantErr    error
	}
	tests := []struct {
		name   string
		stores []store
		delete []string
		want   map[string]string // key -> version; "" = absent
	}{
		{
			name:   "new key stored",
			stores: []store{{pvc: newPVC("ns", "a", "5"), wantStored: true}},
			want:   map[string]string{"ns/a": "5", "ns/b": "", "a": ""},
		},
		{
			name: "strictly newer replaces",
			stores: []store{
				{pvc: newPVC("ns", "a", "5"), wantStored: true},
				{pvc: newPVC("ns", "a", "6"), wantStored: true},
			},
			want: map[string]string{"ns/a": "6"},
		},
		{
			name: "versions compare as integers",
			stores: []store{
				{pvc: newPVC("ns", "a", "9"), wantStored: true},
				{pvc: newPVC("ns", "a", "10"), wantStored: true},
				{pvc: newPVC("ns", "a", "010"), wantStored: false},
			},
			want: map[string]string{"ns/a": "10"},
		},
		{
			name: "equal version not stored",
			stores: []store{
				{pvc: newPVC("ns", "a", "5"), wantStored: true},
				{pvc: newPVC("ns", "a", "5"), wantStored: false},
			},
			want: map[string]string{"ns/a": "5"},
		},
		{
			name: "older version not stored",
			stores: []store{
				{pvc: newPVC("ns", "a", "7"), wantStored: true},
				{pvc: newPVC("ns", "a", "6"), wantStored: false},
			},
			want: map[string]string{"ns/a": "7"},
		},
		{
			name: "invalid objects refused, cache unchanged",
			stores: []store{
				{pvc: newPVC("ns", "a", "7"), wantStored: true},
				{pvc: newPVC("ns", "a", "8x"), wantErr: ErrInvalidVersion},
				{pvc: newPVC("ns", "a", ""), wantErr: ErrInvalidVersion},
				{pvc: newPVC("ns", "b", "-1"), wantErr: ErrInvalidVersion},
				{pvc: newPVC("ns", "", "9"), wantErr: ErrInvalidObject},
				{pvc: nil, wantErr: ErrInvalidObject},
			},
			want: map[string]string{"ns/a": "7", "ns/b": ""},
		},
		{
			name: "same name in different namespaces",
			stores: []store{
				{pvc: newPVC("ns1", "a", "3"), wantStored: true},
				{pvc: newPVC("ns2", "a", "2"), wantStored: true},
			},
			want: map[string]string{"ns1/a": "3", "ns2/a": "2"},
		},
		{
			name: "delete, then any version is new",
			stores: []store{
				{pvc: newPVC("ns", "a", "7"), wantStored: true},
				{pvc: newPVC("ns", "b", "8"), wantStored: true},
			},
			delete: []string{"ns/a", "ns/unknown", "other/a"},
			want:   map[string]string{"ns/a": "", "ns/b": "8"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := NewLatest[*v1.PersistentVolumeClaim]()
			for i, s := range tc.stores {
				stored, err := c.Store(s.pvc)
				if stored != s.wantStored || !errors.Is(err, s.wantErr) || (s.wantErr == nil) != (err == nil) {
					t.Fatalf("store %d: Store = %v, %v; want %v, %v", i, stored, err, s.wantStored, s.wantErr)
				}
			}
			for _, key := range tc.delete {
				c.Delete(key)
			}
			var wantList []string
			for key, rv := range tc.want {
				got, ok := c.Get(key)
				if gotRV := rvOfPVC(got, ok); gotRV != rv {
					t.Errorf("Get(%q) version = %q, want %q", key, gotRV, rv)
				}
				if rv != "" {
					wantList = append(wantList, key+"@"+rv)
				}
			}
			if diff := cmp.Diff(describeStrings(wantList), nilIfEmpty(describe(c.List()))); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
			if got := c.Len(); got != len(wantList) {
				t.Errorf("Len = %d, want %d", got, len(wantList))
			}
			if tc.delete != nil {
				// A deleted key takes any version again.
				if stored, err := c.Store(newPVC("ns", "a", "1")); !stored || err != nil {
					t.Errorf("Store after Delete = %v, %v; want stored", stored, err)
				}
			}
		})
	}
}

func rvOfPVC(pvc *v1.PersistentVolumeClaim, ok bool) string {
	if !ok {
		return ""
	}
	return pvc.ResourceVersion
}

func TestLatestStoresPointers(t *testing.T) {
	c := NewLatest[*v1.PersistentVolume]()
	pv := newPV("pv1", "gold", "3")
	if _, err := c.Store(pv); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Get("pv1"); got != pv {
		t.Errorf("Get returned %p, want the stored pointer %p", got, pv)
	}
	if got := c.List(); len(got) != 1 || got[0] != pv {
		t.Errorf("List returned %v, want the stored pointer", got)
	}
}

// TestLatestStoreAdded checks that StoreAdded reports a key as added only
// when it was not stored: not for a newer version, a stale one or a bad
// one, and again once the key was deleted.
func TestLatestStoreAdded(t *testing.T) {
	c := NewLatest[*v1.PersistentVolumeClaim]()
	steps := []struct {
		name                  string
		pvc                   *v1.PersistentVolumeClaim
		wantStored, wantAdded bool
		wantErr               error
		deleteFirst           bool
	}{
		{name: "new key", pvc: newPVC("ns", "a", "5"), wantStored: true, wantAdded: true},
		{name: "newer version", pvc: newPVC("ns", "a", "6"), wantStored: true},
		{name: "stale version", pvc: newPVC("ns", "a", "4")},
		{name: "same name, other namespace", pvc: newPVC("other", "a", "1"), wantStored: true, wantAdded: true},
		{name: "bad version of a new key", pvc: newPVC("ns", "b", "x"), wantErr: ErrInvalidVersion},
		{name: "re-added after delete", pvc: newPVC("ns", "a", "9"), wantStored: true, wantAdded: true, deleteFirst: true},
	}
	for _, st := range steps {
		if st.deleteFirst {
			c.Delete("ns/a")
		}
		stored, added, err := c.StoreAdded(st.pvc)
		if stored != st.wantStored || added != st.wantAdded || !errors.Is(err, st.wantErr) {
			t.Errorf("%s: StoreAdded = %v, %v, %v; want %v, %v, %v", st.name, stored, added, err, st.wantStored, st.wantAdded, st.wantErr)
		}
	}
	if n := c.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
}

// TestLatestShare checks that Share swaps in another copy of the stored
// version, and only of that version.
func TestLatestShare(t *testing.T) {
	written := newPVC("ns", "a", "5") // the answer to a write
	tests := []struct {
		name       string
		share      *v1.PersistentVolumeClaim
		wantShared bool
		wantErr    error
	}{
		{name: "same version", share: newPVC("ns", "a", "5"), wantShared: true},
		{name: "newer version", share: newPVC("ns", "a", "6")},
		{name: "older version", share: newPVC("ns", "a", "4")},
		{name: "unknown key", share: newPVC("ns", "b", "5")},
		{name: "other namespace", share: newPVC("other", "a", "5")},
		{name: "bad version", share: newPVC("ns", "a", "x"), wantErr: ErrInvalidVersion},
		{name: "nil", share: nil, wantErr: ErrInvalidObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewLatest[*v1.PersistentVolumeClaim]()
			if _, err := c.Store(written); err != nil {
				t.Fatal(err)
			}
			shared, err := c.Share(tc.share)
			if shared != tc.wantShared || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Share = %v, %v; want %v, %v", shared, err, tc.wantShared, tc.wantErr)
			}
			want := written
			if tc.wantShared {
				want = tc.share
			}
			if got, _ := c.Get("ns/a"); got != want {
				t.Errorf("Get(ns/a) = %p, want %p (shared %v)", got, want, tc.wantShared)
			}
			if _, ok := c.Get("ns/b"); ok || c.Len() != 1 {
				t.Errorf("Share added a key: Len = %d", c.Len())
			}
		})
	}
}

func TestLatestErrorsNameObject(t *testing.T) {
	c := NewLatest[*v1.PersistentVolumeClaim]()
	_, err := c.Store(newPVC("ns", "claim", "v7"))
	for _, s := range []string{"PersistentVolumeClaim", `"ns/claim"`, `"v7"`} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("Store error %v does not name %s", err, s)
		}
	}
	if got := typeName[interface{ GetName() string }](); got != "object" {
		t.Errorf("typeName(interface) = %q, want object", got)
	}
}

// TestLatestConcurrent stores increasing versions from several goroutines
// while others read; the cache must end with the highest version of every
// key. Run it with -race.
func TestLatestConcurrent(t *testing.T) {
	const keys, versions = 200, 50
	c := NewLatest[*v1.PersistentVolume]()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for v := range versions {
				for k := range keys {
					// Writers interleave versions, so many stores are stale.
					rv := strconv.Itoa(v*4 + w)
					if _, err := c.Store(newPV(pvName(k), "", rv)); err != nil {
						t.Errorf("Store: %v", err)
						return
					}
					if got, ok := c.Get(pvName(k)); !ok || got.Name != pvName(k) {
						t.Errorf("Get(%s) = %v, %v", pvName(k), got, ok)
						return
					}
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			for _, pv := range c.List() {
				if pv == nil {
					t.Error("List returned nil")
					return
				}
			}
		}
	})
	wg.Wait()
	want := strconv.Itoa((versions-1)*4 + 3)
	for k := range keys {
		if got, ok := c.Get(pvName(k)); !ok || got.ResourceVersion != want {
			t.Errorf("Get(%s) = %v; want version %s", pvName(k), describeOne(got), want)
		}
	}
	if got := c.Len(); got != keys {
		t.Errorf("Len = %d, want %d", got, keys)
	}
}

// TestLatestAppendKeys: the shards' keys are the stored keys, each once,
// for namespaced and cluster-scoped objects, after deletes too; a shard
// out of range holds none.
func TestLatestAppendKeys(t *testing.T) {
	claims := NewLatest[*v1.PersistentVolumeClaim]()
	volumes := NewLatest[*v1.PersistentVolume]()
	want := map[string]bool{}
	wantPV := map[string]bool{}
	for i := range 500 {
		ns := fmt.Sprintf("ns-%d", i%7)
		name := fmt.Sprintf("claim-%d", i)
		if _, err := claims.Store(newPVC(ns, name, "1")); err != nil {
			t.Fatal(err)
		}
		want[ns+"/"+name] = true
		pv := fmt.Sprintf("pv-%d", i)
		if _, err := volumes.Store(newPV(pv, "", "1")); err != nil {
			t.Fatal(err)
		}
		wantPV[pv] = true
	}
	for i := 0; i < 500; i += 5 {
		key := fmt.Sprintf("ns-%d/claim-%d", i%7, i)
		claims.Delete(key)
		delete(want, key)
		volumes.Delete(fmt.Sprintf("pv-%d", i))
		delete(wantPV, fmt.Sprintf("pv-%d", i))
	}
	check := func(what string, shards int, appendKeys func(int, []string) []string, want map[string]bool) {
		t.Helper()
		got := map[string]int{}
		nonEmpty := 0
		for i := range shards {
			keys := appendKeys(i, []string{"kept"})
			if keys[0] != "kept" {
				t.Fatalf("%s: AppendKeys(%d) dropped what dst held", what, i)
			}
			if len(keys) > 1 {
				nonEmpty++
			}
			for _, k := range keys[1:] {
				got[k]++
			}
		}
		for k, n := range got {
			if !want[k] || n != 1 {
				t.Errorf("%s: key %q listed %d times, stored: %v", what, k, n, want[k])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d keys listed, %d stored", what, len(got), len(want))
		}
		if nonEmpty < shards/2 {
			t.Errorf("%s: %d keys in %d of %d shards", what, len(got), nonEmpty, shards)
		}
		for _, i := range []int{-1, shards} {
			if keys := appendKeys(i, nil); len(keys) != 0 {
				t.Errorf("%s: AppendKeys(%d) = %v, want none", what, i, keys)
			}
		}
	}
	check("claims", claims.Shards(), claims.AppendKeys, want)
	check("volumes", volumes.Shards(), volumes.AppendKeys, wantPV)
}
