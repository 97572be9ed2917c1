package zones

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
)

func TestParseZones(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		value   string
		want    []string
		wantErr string // substring of the error; "" = no error
	}{
		{name: "single", value: "us-east-1a", want: []string{"us-east-1a"}},
		{name: "two", value: "us-east-1a__us-east-1b", want: []string{"us-east-1a", "us-east-1b"}},
		{name: "unsorted", value: "zone-c__zone-a__zone-b", want: []string{"zone-a", "zone-b", "zone-c"}},
		{name: "duplicates collapse", value: "a__b__a", want: []string{"a", "b"}},
		{name: "single underscore is part of the zone", value: "zone_a__zone_b", want: []string{"zone_a", "zone_b"}},
		{name: "gce", value: "europe-west1-b__europe-west1-c", want: []string{"europe-west1-b", "europe-west1-c"}},
		{name: "azure numeric", value: "1__2__3", want: []string{"1", "2", "3"}},
		{name: "dots", value: "dc1.rack2", want: []string{"dc1.rack2"}},
		{name: "empty", value: "", wantErr: "empty"},
		{name: "only delimiter", value: "__", wantErr: `"__": element 0 "" is empty`},
		{name: "leading delimiter", value: "__a", wantErr: `element 0 "" is empty`},
		{name: "trailing delimiter", value: "a__", wantErr: `element 1 "" is empty`},
		{name: "empty middle", value: "a____b", wantErr: `element 1 "" is empty`},
		{name: "triple underscore", value: "a___b", wantErr: `"_b" must begin and end`},
		{name: "space", value: "a__ b", wantErr: "whitespace"},
		{name: "only space", value: " ", wantErr: "whitespace"},
		{name: "tab inside", value: "us\teast", wantErr: "whitespace"},
		{name: "newline", value: "a\n", wantErr: "whitespace"},
		{name: "bad char", value: "a/b", wantErr: "may contain only"},
		{name: "too long", value: strings.Repeat("a", 64), wantErr: "longer than 63"},
		{name: "invalid utf8", value: "a\xffb", wantErr: "UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseZones(tc.value)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseZones(%q) = %v, want error containing %q", tc.value, sets.List(got), tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidZones) {
					t.Errorf("ParseZones(%q) error %v does not wrap ErrInvalidZones", tc.value, err)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("ParseZones(%q) error %q, want it to contain %q", tc.value, err, tc.wantErr)
				}
				if tc.value != "" && !strings.Contains(err.Error(), strconv.Quote(tc.value)) {
					t.Errorf("ParseZones(%q) error %q does not name the value", tc.value, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseZones(%q) error: %v", tc.value, err)
			}
			if diff := cmp.Diff(tc.want, sets.List(got)); diff != "" {
				t.Errorf("ParseZones(%q) (-want +got):\n%s", tc.value, diff)
			}
		})
	}
}

func TestFormatZones(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   sets.Set[string]
		want string
	}{
		{name: "nil", in: nil, want: ""},
		{name: "empty", in: sets.New[string](), want: ""},
		{name: "one", in: sets.New("us-east-1a"), want: "us-east-1a"},
		{name: "sorted", in: sets.New("c", "a", "b"), want: "a__b__c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for range 5 { // map order must not leak into the value
				if got := FormatZones(tc.in); got != tc.want {
					t.Fatalf("FormatZones(%v) = %q, want %q", sets.List(tc.in), got, tc.want)
				}
			}
		})
	}
}

func TestValidateZones(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      sets.Set[string]
		wantErr bool
	}{
		{name: "ok", in: sets.New("a", "b")},
		{name: "empty set", in: sets.New[string](), wantErr: true},
		{name: "empty zone", in: sets.New("a", ""), wantErr: true},
		{name: "delimiter inside", in: sets.New("a__b"), wantErr: true},
		{name: "space", in: sets.New("a b"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateZones(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ValidateZones(%v) = %v, want error %v", sets.List(tc.in), err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidZones) {
				t.Errorf("ValidateZones(%v) error %v does not wrap ErrInvalidZones", sets.List(tc.in), err)
			}
		})
	}
}

func TestNodeZoneAndRegion(t *testing.T) {
	t.Parallel()
	node := func(labels map[string]string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
	}
	tests := []struct {
		name             string
		node             *v1.Node
		zone, region     string
		zoneOK, regionOK bool
	}{
		{name: "nil node"},
		{name: "no labels", node: node(nil)},
		{name: "GA", node: node(map[string]string{ZoneLabel: "a", RegionLabel: "r"}), zone: "a", zoneOK: true, region: "r", regionOK: true},
		{name: "beta", node: node(map[string]string{BetaZoneLabel: "b", BetaRegionLabel: "rb"}), zone: "b", zoneOK: true, region: "rb", regionOK: true},
		{name: "GA wins", node: node(map[string]string{ZoneLabel: "a", BetaZoneLabel: "b", RegionLabel: "r", BetaRegionLabel: "rb"}), zone: "a", zoneOK: true, region: "r", regionOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if z, ok := NodeZone(tc.node); z != tc.zone || ok != tc.zoneOK {
				t.Errorf("NodeZone() = %q, %v, want %q, %v", z, ok, tc.zone, tc.zoneOK)
			}
			if r, ok := NodeRegion(tc.node); r != tc.region || ok != tc.regionOK {
				t.Errorf("NodeRegion() = %q, %v, want %q, %v", r, ok, tc.region, tc.regionOK)
			}
		})
	}
}

func TestZonesWithNodes(t *testing.T) {
	t.Parallel()
	nodes := []*v1.Node{
		nil,
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{ZoneLabel: "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{BetaZoneLabel: "b"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a2", Labels: map[string]string{ZoneLabel: "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "none"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "empty", Labels: map[string]string{ZoneLabel: ""}}},
	}
	if diff := cmp.Diff([]string{"a", "b"}, sets.List(ZonesWithNodes(nodes))); diff != "" {
		t.Errorf("ZonesWithNodes() (-want +got):\n%s", diff)
	}
}

// FuzzParseZones checks that ParseZones never panics, that every accepted
// value round-trips through FormatZones, and that it accepts no more than
// cloud-provider's LabelZonesToSet (which trims instead of refusing
// whitespace). The seeds are real zone label values and known bad shapes.
func FuzzParseZones(f *testing.F) {
	for _, seed := range []string{
		"us-east-1a", "us-east-1a__us-east-1b", "us-central1-a__us-central1-b__us-central1-c",
		"europe-west1-b", "eastus-1", "1__2__3", "zone_a__zone_b", "dc1.rack2", "ap-northeast-1d",
		"", "__", "a__", "__a", "a____b", "a___b", "a__ b", " ", "a\tb", "a/b", "a\xffb",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		zs, err := ParseZones(value)
		if err != nil {
			if !errors.Is(err, ErrInvalidZones) {
				t.Fatalf("ParseZones(%q) error %v does not wrap ErrInvalidZones", value, err)
			}
			return
		}
		if zs.Len() == 0 {
			t.Fatalf("ParseZones(%q) = empty set without error", value)
		}
		formatted := FormatZones(zs)
		again, err := ParseZones(formatted)
		if err != nil {
			t.Fatalf("ParseZones(FormatZones(ParseZones(%q)) = %q) error: %v", value, formatted, err)
		}
		if !again.Equal(zs) {
			t.Fatalf("round trip of %q: got %v, want %v", value, sets.List(again), sets.List(zs))
		}
		if FormatZones(again) != formatted {
			t.Fatalf("FormatZones not stable for %q", value)
		}
		legacy, err := volumehelpers.LabelZonesToSet(value)
		if err != nil {
			t.Fatalf("ParseZones(%q) accepted a value LabelZonesToSet refuses: %v", value, err)
		}
		if !sets.Set[string](legacy).Equal(zs) {
			t.Fatalf("ParseZones(%q) = %v, LabelZonesToSet = %v", value, sets.List(zs), legacy.List())
		}
	})
}
