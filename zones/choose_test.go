package zones

import (
	"errors"
	"hash/fnv"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestClaimHash(t *testing.T) {
	t.Parallel()
	// FNV-1 32-bit values of the hashed part, from cloud-provider's tests.
	tests := []struct {
		name        string
		wantHash    uint32
		wantOrdinal uint32
	}{
		{name: "henley", wantHash: 1180403676},
		{name: "henley-", wantHash: 2652299129},
		{name: "henley-a", wantHash: 1459735322},
		{name: "henley-3", wantHash: 1180403676, wantOrdinal: 3},
		{name: "data-henley-3", wantHash: 1180403676, wantOrdinal: 3},
		{name: "data-my-henley-3", wantHash: 1180403676, wantOrdinal: 3},
		{name: "medium--1", wantHash: 2166136261, wantOrdinal: 1}, // hash of ""
		{name: "henley-4294967295", wantHash: 1180403676, wantOrdinal: 4294967295},
		{name: "henley-+1", wantHash: fnv32("henley-+1")}, // a sign is not an ordinal
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hash, ordinal := claimHash(tc.name)
			if hash != tc.wantHash || ordinal != tc.wantOrdinal {
				t.Errorf("claimHash(%q) = %d, %d, want %d, %d", tc.name, hash, ordinal, tc.wantHash, tc.wantOrdinal)
			}
		})
	}
}

// ChooseZones cases; the expected zones are those of cloud-provider's
// ChooseZonesForVolume (many ported from its tests, where hash("henley")
// is 0 mod 3 so the offsets can be checked by hand).
func TestChooseZones(t *testing.T) {
	t.Parallel()
	abc := []string{"a", "b", "c"}
	nine := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}
	east := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	tests := []struct {
		name     string
		zones    []string // nil = nil set
		claim    string
		replicas uint32
		want     []string
		wantErr  error
	}{
		// Claims without an ordinal are placed by the hash of the name.
		{name: "no dash", zones: abc, claim: "henley", replicas: 1, want: []string{"a"}},
		{name: "no dash 2 replicas", zones: abc, claim: "henley", replicas: 2, want: []string{"a", "b"}},
		{name: "trailing dash", zones: abc, claim: "henley-", replicas: 1, want: []string{"c"}},
		{name: "trailing dash 2 replicas wraps", zones: abc, claim: "henley-", replicas: 2, want: []string{"a", "c"}},
		{name: "letter suffix", zones: abc, claim: "henley-a", replicas: 1, want: []string{"c"}},
		{name: "plain claim", zones: east, claim: "scratch", replicas: 1, want: []string{"us-east-1b"}},
		{name: "ordinal beyond uint32 is no ordinal", zones: east, claim: "henley-4294967296", replicas: 2,
			want: []string{"us-east-1b", "us-east-1c"}},
		// StatefulSet claims spread by ordinal.
		{name: "ordinal 0", zones: abc, claim: "henley-0", replicas: 1, want: []string{"a"}},
		{name: "ordinal 1", zones: abc, claim: "henley-1", replicas: 1, want: []string{"b"}},
		{name: "ordinal 2", zones: abc, claim: "henley-2", replicas: 1, want: []string{"c"}},
		{name: "ordinal 1, 2 replicas", zones: abc, claim: "henley-1", replicas: 2, want: []string{"a", "c"}},
		{name: "ordinal 2, 2 replicas", zones: abc, claim: "henley-2", replicas: 2, want: []string{"b", "c"}},
		{name: "ordinal beyond the zone count wraps", zones: abc, claim: "henley-3", replicas: 1, want: []string{"a"}},
		{name: "ordinal 4 wraps", zones: abc, claim: "henley-4", replicas: 2, want: []string{"a", "c"}},
		{name: "ordinal 7 of 3 zones", zones: east, claim: "henley-7", replicas: 2, want: []string{"us-east-1a", "us-east-1c"}},
		{name: "statefulset member", zones: abc, claim: "medium-henley-1", replicas: 1, want: []string{"b"}},
		{name: "other claim of the same member", zones: abc, claim: "loud-henley-1", replicas: 2, want: []string{"a", "c"}},
		{name: "dashes in claim name", zones: abc, claim: "medium-alpha-henley-2", replicas: 2, want: []string{"b", "c"}},
		{name: "statefulset name ending in dash", zones: abc, claim: "medium-henley--3", replicas: 2, want: []string{"b", "c"}},
		{name: "empty hashed part", zones: abc, claim: "medium--1", replicas: 2, want: []string{"a", "b"}},
		{name: "nine zones ordinal 1", zones: nine, claim: "henley-1", replicas: 3, want: []string{"d", "e", "f"}},
		{name: "nine zones ordinal 3 wraps", zones: nine, claim: "henley-3", replicas: 3, want: []string{"a", "b", "c"}},
		{name: "data-web-2", zones: east, claim: "data-web-2", replicas: 1, want: []string{"us-east-1c"}},
		// More replicas than zones: every zone.
		{name: "replicas equal zones", zones: abc, claim: "medium-henley--4", replicas: 3, want: abc},
		{name: "more replicas than zones", zones: abc, claim: "medium-henley--4", replicas: 4, want: abc},
		{name: "far more replicas than zones", zones: []string{"a"}, claim: "x-7", replicas: 1000, want: []string{"a"}},
		// Empty inputs, as the helper: an empty choice, no error.
		{name: "empty zone set", zones: []string{}, claim: "henley-1", replicas: 1, want: []string{}},
		{name: "nil zone set", zones: nil, claim: "henley-2", replicas: 1, want: []string{}},
		{name: "zero replicas", zones: abc, claim: "henley-2", replicas: 0, want: []string{}},
		// Deliberate differences.
		{name: "no claim name", zones: abc, claim: "", replicas: 1, wantErr: ErrNoClaimName},
		{name: "largest ordinal wraps to no zone", zones: east, claim: "henley-4294967295", replicas: 1, wantErr: ErrNoZones},
		{name: "largest ordinal, 2 replicas", zones: east, claim: "henley-4294967295", replicas: 2, wantErr: ErrNoZones},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var available sets.Set[string]
			if tc.zones != nil {
				available = sets.New(tc.zones...)
			}
			before := available.Clone()
			got, err := ChooseZones(available, tc.claim, tc.replicas)
			if !available.Equal(before) {
				t.Errorf("ChooseZones modified its input: %v, was %v", sets.List(available), sets.List(before))
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ChooseZones(%v, %q, %d) = %v, %v, want error %v", tc.zones, tc.claim, tc.replicas, sets.List(got), err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ChooseZones(%v, %q, %d) error: %v", tc.zones, tc.claim, tc.replicas, err)
			}
			if diff := cmp.Diff(tc.want, sets.List(got)); diff != "" {
				t.Errorf("ChooseZones(%v, %q, %d) (-want +got):\n%s", tc.zones, tc.claim, tc.replicas, diff)
			}
		})
	}
}

// TestChooseZonesSpreadsStatefulSet checks the property the hash exists
// for: consecutive ordinals of one StatefulSet cover every zone once per
// round, and all claims of one member land in the same zone.
func TestChooseZonesSpreadsStatefulSet(t *testing.T) {
	t.Parallel()
	zs := sets.New("z1", "z2", "z3", "z4")
	seen := map[string]int{}
	for ordinal := range 8 {
		data, err := ChooseZones(zs, "data-db-"+strconv.Itoa(ordinal), 1)
		if err != nil {
			t.Fatal(err)
		}
		logs, err := ChooseZones(zs, "logs-db-"+strconv.Itoa(ordinal), 1)
		if err != nil {
			t.Fatal(err)
		}
		if !data.Equal(logs) {
			t.Errorf("ordinal %d: data in %v, logs in %v; want the same zone", ordinal, sets.List(data), sets.List(logs))
		}
		for z := range data {
			seen[z]++
		}
	}
	if diff := cmp.Diff(map[string]int{"z1": 2, "z2": 2, "z3": 2, "z4": 2}, seen); diff != "" {
		t.Errorf("zones used by 8 ordinals (-want +got):\n%s", diff)
	}
}

// fnv32 is a test-side FNV-1 32-bit hash, computed independently of
// claimHash's loop through hash/fnv.
func fnv32(s string) uint32 {
	h := fnv.New32()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}
