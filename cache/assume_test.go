package cache

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// op is one call on a PV assume cache in a table test.
type op struct {
	do      string // "inform", "assume", "restore", "delete"
	pv      *v1.PersistentVolume
	key     string
	wantErr error // errors.Is target for "inform" and "assume"; nil = success
}

// state is what the cache must hold for one key after the ops.
type state struct {
	key     string
	latest  string // version of Get; "" = absent
	api     string // version of GetAPIObj
	assumed bool   // IsAssumed: Get's object is not GetAPIObj's
}

func inform(pv *v1.PersistentVolume) op             { return op{do: "inform", pv: pv} }
func assume(pv *v1.PersistentVolume) op             { return op{do: "assume", pv: pv} }
func assumeErr(pv *v1.PersistentVolume, e error) op { return op{do: "assume", pv: pv, wantErr: e} }
func restore(key string) op                         { return op{do: "restore", key: key} }
func del(pv *v1.PersistentVolume) op                { return op{do: "delete", pv: pv} }

// resync is an informer OnUpdate whose old object has the same version as
// pv: the informer re-delivers what it had.
func resync(pv *v1.PersistentVolume) op { return op{do: "resync", pv: pv} }

// update is an informer OnUpdate from the object at version oldRV to pv.
func update(oldRV string, pv *v1.PersistentVolume) op {
	return op{do: "update", pv: pv, key: oldRV}
}

func TestAssumeRules(t *testing.T) {
	tests := []struct {
		name  string
		ops   []op
		want  []state
		lists map[string][]string // storage class -> "name@rv"
	}{
		{
			name:  "informer add",
			ops:   []op{inform(newPV("pv1", "gold", "5"))},
			want:  []state{{"pv1", "5", "5", false}},
			lists: map[string][]string{"gold": {"pv1@5"}, "silver": nil},
		},
		{
			name: "assume newer version",
			ops:  []op{inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "gold", "7"))},
			want: []state{{"pv1", "7", "5", true}},
		},
		{
			name: "assume equal version",
			ops:  []op{inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "silver", "5"))},
			// The assumed object replaces the informer's although the
			// versions are equal; the list shows it, in its new class.
			want:  []state{{"pv1", "5", "5", true}},
			lists: map[string][]string{"gold": nil, "silver": {"pv1@5"}},
		},
		{
			name: "informer version equal to an equal-version assumption replaces it",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "silver", "5")),
				inform(newPV("pv1", "bronze", "5")),
			},
			want:  []state{{"pv1", "5", "5", false}},
			lists: map[string][]string{"gold": nil, "silver": nil, "bronze": {"pv1@5"}},
		},
		{
			name: "assume equal to the assumed version replaces it",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "silver", "7")),
				assume(newPV("pv1", "bronze", "7")),
			},
			want:  []state{{"pv1", "7", "5", true}},
			lists: map[string][]string{"gold": nil, "silver": nil, "bronze": {"pv1@7"}},
		},
		{
			name: "resync keeps an equal-version assumption",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "silver", "5")),
				resync(newPV("pv1", "gold", "5")),
			},
			want:  []state{{"pv1", "5", "5", true}},
			lists: map[string][]string{"gold": nil, "silver": {"pv1@5"}},
		},
		{
			name: "resync without assumption and of a new key is stored",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), resync(newPV("pv1", "silver", "5")),
				resync(newPV("pv2", "gold", "3")),
			},
			want:  []state{{"pv1", "5", "5", false}, {"pv2", "3", "3", false}},
			lists: map[string][]string{"gold": {"pv2@3"}, "silver": {"pv1@5"}},
		},
		{
			name: "resync at a newer version replaces an assumption",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "silver", "6")),
				resync(newPV("pv1", "bronze", "7")),
			},
			want:  []state{{"pv1", "7", "7", false}},
			lists: map[string][]string{"silver": nil, "bronze": {"pv1@7"}},
		},
		{
			name: "informer update to the assumed version replaces it",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "silver", "6")),
				update("5", newPV("pv1", "bronze", "6")),
			},
			want:  []state{{"pv1", "6", "6", false}},
			lists: map[string][]string{"silver": nil, "bronze": {"pv1@6"}},
		},
		{
			name:  "older version refused",
			ops:   []op{inform(newPV("pv1", "gold", "5")), assumeErr(newPV("pv1", "silver", "4"), ErrStale)},
			want:  []state{{"pv1", "5", "5", false}},
			lists: map[string][]string{"gold": {"pv1@5"}, "silver": nil},
		},
		{
			name: "older than the assumed version refused",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "gold", "9")),
				assumeErr(newPV("pv1", "gold", "7"), ErrStale),
			},
			want: []state{{"pv1", "9", "5", true}},
		},
		{
			name: "versions compare as integers",
			ops:  []op{inform(newPV("pv1", "gold", "9")), assume(newPV("pv1", "gold", "10"))},
			want: []state{{"pv1", "10", "9", true}},
		},
		{
			name: "largest uint64 version",
			ops:  []op{inform(newPV("pv1", "gold", "9")), assume(newPV("pv1", "gold", "18446744073709551615"))},
			want: []state{{"pv1", "18446744073709551615", "9", true}},
		},
		{
			name:  "assume unknown object refused",
			ops:   []op{assumeErr(newPV("pv1", "gold", "5"), ErrNotFound)},
			want:  []state{{"pv1", "", "", false}},
			lists: map[string][]string{"gold": nil},
		},
		{
			name: "non-integer versions refused by assume",
			ops: []op{
				inform(newPV("pv1", "gold", "5")),
				assumeErr(newPV("pv1", "gold", "abc"), ErrInvalidVersion),
				assumeErr(newPV("pv1", "gold", ""), ErrInvalidVersion),
				assumeErr(newPV("pv1", "gold", "-7"), ErrInvalidVersion),
				assumeErr(newPV("pv1", "gold", "6.0"), ErrInvalidVersion),
				assumeErr(newPV("pv1", "gold", "18446744073709551616"), ErrInvalidVersion),
			},
			want: []state{{"pv1", "5", "5", false}},
		},
		{
			name: "non-integer versions refused by the informer side",
			ops: []op{
				{do: "inform", pv: newPV("pv1", "gold", "x1"), wantErr: ErrInvalidVersion},
				inform(newPV("pv2", "gold", "3")),
				{do: "inform", pv: newPV("pv2", "silver", "4a"), wantErr: ErrInvalidVersion},
			},
			want:  []state{{"pv1", "", "", false}, {"pv2", "3", "3", false}},
			lists: map[string][]string{"gold": {"pv2@3"}, "silver": nil},
		},
		{
			name: "objects without a name refused",
			ops: []op{
				{do: "inform", pv: newPV("", "gold", "1"), wantErr: ErrInvalidObject},
				{do: "inform", pv: nil, wantErr: ErrInvalidObject},
				assumeErr(nil, ErrInvalidObject),
			},
			lists: map[string][]string{"gold": nil},
		},
		{
			name: "informer version equal to assumed replaces it",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "gold", "7")),
				inform(newPV("pv1", "silver", "7")),
			},
			want:  []state{{"pv1", "7", "7", false}},
			lists: map[string][]string{"gold": nil, "silver": {"pv1@7"}},
		},
		{
			name: "informer version newer than assumed replaces it",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "gold", "7")),
				inform(newPV("pv1", "silver", "8")),
			},
			want:  []state{{"pv1", "8", "8", false}},
			lists: map[string][]string{"gold": nil, "silver": {"pv1@8"}},
		},
		{
			name: "informer version between API and assumed keeps the assumption",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "gold", "9")),
				inform(newPV("pv1", "silver", "7")),
			},
			want:  []state{{"pv1", "9", "7", true}},
			lists: map[string][]string{"gold": {"pv1@9"}, "silver": nil},
		},
		{
			name: "restore after a newer informer version returns to it",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "gold", "9")),
				inform(newPV("pv1", "silver", "7")), restore("pv1"),
			},
			want:  []state{{"pv1", "7", "7", false}},
			lists: map[string][]string{"gold": nil, "silver": {"pv1@7"}},
		},
		{
			name: "stale informer event ignored",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), inform(newPV("pv1", "silver", "4")),
			},
			want:  []state{{"pv1", "5", "5", false}},
			lists: map[string][]string{"gold": {"pv1@5"}, "silver": nil},
		},
		{
			name: "restore",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "silver", "6")), restore("pv1"),
			},
			want:  []state{{"pv1", "5", "5", false}},
			lists: map[string][]string{"gold": {"pv1@5"}, "silver": nil},
		},
		{
			name: "restore without assumption and of unknown key",
			ops:  []op{inform(newPV("pv1", "gold", "5")), restore("pv1"), restore("pv2")},
			want: []state{{"pv1", "5", "5", false}, {"pv2", "", "", false}},
		},
		{
			name: "delete while assumed removes both",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), assume(newPV("pv1", "silver", "6")),
				del(newPV("pv1", "gold", "5")),
				assumeErr(newPV("pv1", "gold", "7"), ErrNotFound),
				restore("pv1"),
			},
			want:  []state{{"pv1", "", "", false}},
			lists: map[string][]string{"gold": nil, "silver": nil},
		},
		{
			name: "delete ignores the version and re-add starts over",
			ops: []op{
				inform(newPV("pv1", "gold", "5")), del(newPV("pv1", "gold", "1")),
				inform(newPV("pv1", "silver", "2")),
			},
			want:  []state{{"pv1", "2", "2", false}},
			lists: map[string][]string{"gold": nil, "silver": {"pv1@2"}},
		},
		{
			name: "index lists after updates and deletes",
			ops: []op{
				inform(newPV("pv1", "gold", "1")), inform(newPV("pv2", "gold", "2")),
				inform(newPV("pv3", "silver", "3")), inform(newPV("pv4", "", "4")),
				inform(newPV("pv1", "silver", "5")), // moves class
				inform(newPV("pv2", "gold", "6")),   // same class, new version
				del(newPV("pv3", "silver", "3")),
				assume(newPV("pv4", "gold", "8")),
			},
			want: []state{{"pv1", "5", "5", false}, {"pv2", "6", "6", false}, {"pv3", "", "", false}, {"pv4", "8", "4", true}},
			lists: map[string][]string{
				"gold":   {"pv2@6", "pv4@8"},
				"silver": {"pv1@5"},
				"":       nil,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newPVCache()
			for i, o := range tc.ops {
				var err error
				switch o.do {
				case "inform":
					_, err = c.inform(o.pv, false)
				case "assume":
					err = c.Assume(o.pv)
				case "restore":
					c.Restore(o.key)
				case "delete":
					c.OnDelete(o.pv)
				case "resync":
					old := o.pv.DeepCopy()
					c.OnUpdate(old, o.pv)
				case "update":
					old := o.pv.DeepCopy()
					old.ResourceVersion = o.key
					c.OnUpdate(old, o.pv)
				default:
					t.Fatalf("op %d: unknown %q", i, o.do)
				}
				if o.wantErr == nil && err != nil {
					t.Fatalf("op %d %s: unexpected error %v", i, o.do, err)
				}
				if o.wantErr != nil && !errors.Is(err, o.wantErr) {
					t.Fatalf("op %d %s: error %v, want %v", i, o.do, err, o.wantErr)
				}
			}
			for _, w := range tc.want {
				latest, ok := c.Get(w.key)
				if got := rvOf(latest, ok); got != w.latest {
					t.Errorf("Get(%q) version = %q, want %q", w.key, got, w.latest)
				}
				api, ok := c.GetAPIObj(w.key)
				if got := rvOf(api, ok); got != w.api {
					t.Errorf("GetAPIObj(%q) version = %q, want %q", w.key, got, w.api)
				}
				if got, want := c.IsAssumed(w.key), w.assumed; got != want {
					t.Errorf("IsAssumed(%q) = %v, want %v", w.key, got, want)
				}
			}
			for class, want := range tc.lists {
				got := ofClass(c, class)
				if diff := cmp.Diff(want, nilIfEmpty(describe(got))); diff != "" {
					t.Errorf("List(%q) (-want +got):\n%s", class, diff)
				}
			}
			checkTable(t, c)
		})
	}
}

func rvOf(pv *v1.PersistentVolume, ok bool) string {
	if !ok {
		return ""
	}
	return pv.ResourceVersion
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestAssumeErrorsNameObjectAndVersions(t *testing.T) {
	c := newPVCache()
	c.OnAdd(newPV("pv1", "gold", "15"), false)
	err := c.Assume(newPV("pv1", "gold", "12"))
	var stale *StaleError
	if !errors.As(err, &stale) {
		t.Fatalf("Assume(older) = %v, want a *StaleError", err)
	}
	if diff := cmp.Diff(&StaleError{Description: "PersistentVolume", Key: "pv1", Stored: 15, Given: 12}, stale); diff != "" {
		t.Errorf("StaleError (-want +got):\n%s", diff)
	}
	if !IsStale(err) {
		t.Errorf("IsStale(%v) = false", err)
	}
	for _, s := range []string{"PersistentVolume", `"pv1"`, "12", "15"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}

	err = c.Assume(newPV("pv2", "gold", "3"))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"pv2"`) {
		t.Errorf("Assume(unknown) = %v, want ErrNotFound naming pv2", err)
	}
	err = c.Assume(newPV("pv1", "gold", "v2"))
	if !errors.Is(err, ErrInvalidVersion) || !strings.Contains(err.Error(), `"v2"`) || !strings.Contains(err.Error(), `"pv1"`) {
		t.Errorf("Assume(bad version) = %v, want ErrInvalidVersion naming pv1 and v2", err)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr bool
	}{
		{"0", 0, false},
		{"1", 1, false},
		{"0042", 42, false},
		{"18446744073709551615", 18446744073709551615, false},
		{"18446744073709551616", 0, true},
		{"", 0, true},
		{"-1", 0, true},
		{"+1", 0, true},
		{" 1", 0, true},
		{"1e3", 0, true},
		{"0x10", 0, true},
		{"abc", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseVersion(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseVersion(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && (!errors.Is(err, ErrInvalidVersion) || !strings.Contains(err.Error(), `"`+tc.in+`"`)) {
			t.Errorf("ParseVersion(%q) error %q: want ErrInvalidVersion naming the value", tc.in, err)
		}
	}
}

func TestKey(t *testing.T) {
	var nilPV *v1.PersistentVolume
	tests := []struct {
		name string
		obj  interface{ GetName() string }
		want string
	}{
		{"cluster-scoped", newPV("pv1", "", "1"), "pv1"},
		{"namespaced", newPVC("ns", "claim", "1"), "ns/claim"},
		{"typed nil", nilPV, ""},
	}
	for _, tc := range tests {
		var got string
		switch o := tc.obj.(type) {
		case *v1.PersistentVolume:
			got = Key(o)
		case *v1.PersistentVolumeClaim:
			got = Key(o)
		}
		if got != tc.want {
			t.Errorf("%s: Key = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Key(nil); got != "" {
		t.Errorf("Key(nil) = %q, want empty", got)
	}
	if got := ClaimKey("ns", "claim"); got != "ns/claim" {
		t.Errorf("ClaimKey = %q, want ns/claim", got)
	}
}

func TestAssumeGetAPIObj(t *testing.T) {
	c := newPVCache()
	c.OnAdd(newPV("pv1", "gold", "1"), false)
	if err := c.Assume(newPV("pv1", "silver", "4")); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get("pv1"); !ok || got.ResourceVersion != "4" {
		t.Errorf("Get(pv1) = %s, %v; want version 4", describeOne(got), ok)
	}
	if got, ok := c.GetAPIObj("pv1"); !ok || got.ResourceVersion != "1" {
		t.Errorf("GetAPIObj(pv1) = %s, %v; want version 1", describeOne(got), ok)
	}
	if !c.IsAssumed("pv1") {
		t.Errorf("IsAssumed(pv1) = false after Assume")
	}
	if got, ok := c.GetAPIObj("pv3"); ok {
		t.Errorf("GetAPIObj(pv3) = %s, want none", describeOne(got))
	}
	c.Restore("pv1")
	if got, ok := c.Get("pv1"); !ok || got.ResourceVersion != "1" || c.IsAssumed("pv1") {
		t.Errorf("after Restore: Get(pv1) = %s, %v, assumed %v; want version 1, not assumed", describeOne(got), ok, c.IsAssumed("pv1"))
	}
}

// TestAssumeClaims: namespaced objects are keyed "namespace/name" (ClaimKey),
// so equal names in two namespaces are two keys.
func TestAssumeClaims(t *testing.T) {
	c := NewAssume(AssumeConfig[*v1.PersistentVolumeClaim]{Description: "PersistentVolumeClaim"})
	c.OnAdd(newPVC("a", "c1", "1"), false)
	c.OnAdd(newPVC("a", "c2", "2"), false)
	c.OnAdd(newPVC("b", "c1", "3"), false)
	if got, ok := c.Get(ClaimKey("b", "c1")); !ok || got.ResourceVersion != "3" {
		t.Errorf("Get(b/c1) = %v, %v; want version 3", got, ok)
	}
	if err := c.Assume(newPVC("a", "c1", "4")); err != nil {
		t.Fatalf("Assume(a/c1) = %v", err)
	}
	c.OnDelete(newPVC("a", "c2", "2"))
	if diff := cmp.Diff([]string{"a/c1@4", "b/c1@3"}, describe(all(c))); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	checkTable(t, c)
}

// TestAssumeTableShrinks: deleting most keys gives the table's memory back.
func TestAssumeTableShrinks(t *testing.T) {
	c := newPVCache()
	for i := range 1000 {
		c.OnAdd(newPV(pvName(i), "gold", "1"), false)
	}
	grown := len(c.tab.Load().slots)
	for i := range 990 {
		c.OnDelete(newPV(pvName(i), "gold", "1"))
	}
	if got := len(c.tab.Load().slots); got >= grown/8 {
		t.Errorf("after deleting 990 of 1000 keys the table has %d slots, had %d", got, grown)
	}
	checkTable(t, c)
}
