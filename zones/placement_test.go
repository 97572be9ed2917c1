package zones

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// affinity returns the required terms of pv, or nil.
func affinity(pv *v1.PersistentVolume) []v1.NodeSelectorTerm {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	return pv.Spec.NodeAffinity.Required.NodeSelectorTerms
}

func TestLabelVolume(t *testing.T) {
	t.Parallel()
	in := v1.NodeSelectorOpIn
	zoneA := Placement{Zones: sets.New("us-east-1a"), Region: "us-east-1"}
	zonesAB := Placement{Zones: sets.New("us-east-1b", "us-east-1a"), Region: "us-east-1"}
	reqZoneA := expr(ZoneLabel, in, "us-east-1a")
	reqZonesAB := expr(ZoneLabel, in, "us-east-1a", "us-east-1b")
	reqRegion := expr(RegionLabel, in, "us-east-1")
	hostname := expr("kubernetes.io/hostname", in, "n1")

	tests := []struct {
		name       string
		pv         *v1.PersistentVolume
		p          Placement
		wantLabels map[string]string
		wantTerms  []v1.NodeSelectorTerm
		wantErr    error
		wantField  string // ConflictError.Field prefix
	}{
		{name: "new volume, one zone", pv: testVolume("pv", nil), p: zoneA,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(reqZoneA, reqRegion)}},
		{name: "multi-zone value is sorted", pv: testVolume("pv", nil), p: zonesAB,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a__us-east-1b", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(reqZonesAB, reqRegion)}},
		{name: "beta labels when asked", pv: testVolume("pv", nil), p: Placement{Zones: sets.New("us-east-1a"), Region: "us-east-1", WriteBeta: true},
			wantLabels: map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1", BetaZoneLabel: "us-east-1a", BetaRegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(reqZoneA, reqRegion)}},
		{name: "zone only", pv: testVolume("pv", nil), p: Placement{Zones: sets.New("z1")},
			wantLabels: map[string]string{ZoneLabel: "z1"}, wantTerms: []v1.NodeSelectorTerm{term(expr(ZoneLabel, in, "z1"))}},
		{name: "region only", pv: testVolume("pv", map[string]string{ZoneLabel: "z1"}), p: Placement{Region: "r"},
			wantLabels: map[string]string{ZoneLabel: "z1", RegionLabel: "r"}, wantTerms: []v1.NodeSelectorTerm{term(expr(RegionLabel, in, "r"))}},
		{name: "other labels kept", pv: testVolume("pv", map[string]string{"team": "db"}), p: zoneA,
			wantLabels: map[string]string{"team": "db", ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(reqZoneA, reqRegion)}},
		{name: "requirements added to every term", pv: testVolume("pv", nil, term(hostname), term(expr("disk", v1.NodeSelectorOpExists))), p: zoneA,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(hostname, reqZoneA, reqRegion), term(expr("disk", v1.NodeSelectorOpExists), reqZoneA, reqRegion)}},
		{name: "existing requirement not duplicated", pv: testVolume("pv", nil, term(expr(ZoneLabel, in, "us-east-1b", "us-east-1a"))), p: zonesAB,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a__us-east-1b", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(expr(ZoneLabel, in, "us-east-1b", "us-east-1a"), reqRegion)}},
		{name: "existing beta requirement counts", pv: testVolume("pv", nil, term(expr(BetaZoneLabel, in, "us-east-1a"))), p: zoneA,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(expr(BetaZoneLabel, in, "us-east-1a"), reqRegion)}},
		{name: "terms that become equal are merged", pv: testVolume("pv", nil, term(reqZoneA), term(reqRegion)), p: zoneA,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(reqZoneA, reqRegion)}},
		{name: "equivalent terms merged", pv: testVolume("pv", nil, term(hostname, expr("disk", in, "ssd", "nvme")),
			term(expr("disk", in, "nvme", "ssd"), hostname), term(expr("disk", in, "ssd"), hostname)), p: zoneA,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"},
			wantTerms: []v1.NodeSelectorTerm{term(hostname, expr("disk", in, "ssd", "nvme"), reqZoneA, reqRegion),
				term(expr("disk", in, "ssd"), hostname, reqZoneA, reqRegion)}},
		{name: "duplicate terms merged", pv: testVolume("pv", nil, term(hostname), term(hostname)), p: zoneA,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(hostname, reqZoneA, reqRegion)}},
		{name: "empty term list gets one term", pv: testVolume("pv", nil, []v1.NodeSelectorTerm{}...), p: zoneA,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(reqZoneA, reqRegion)}},
		{name: "matching labels accepted", pv: testVolume("pv", map[string]string{ZoneLabel: "us-east-1b__us-east-1a", BetaRegionLabel: "us-east-1"}), p: zonesAB,
			wantLabels: map[string]string{ZoneLabel: "us-east-1a__us-east-1b", RegionLabel: "us-east-1", BetaRegionLabel: "us-east-1"},
			wantTerms:  []v1.NodeSelectorTerm{term(reqZonesAB, reqRegion)}},

		{name: "conflicting zone label", pv: testVolume("pv", map[string]string{ZoneLabel: "us-east-1c"}), p: zoneA,
			wantErr: ErrConflict, wantField: "metadata.labels"},
		{name: "conflicting beta zone label", pv: testVolume("pv", map[string]string{BetaZoneLabel: "us-east-1a__us-east-1c"}), p: zoneA,
			wantErr: ErrConflict, wantField: "metadata.labels"},
		{name: "conflicting region label", pv: testVolume("pv", map[string]string{RegionLabel: "eu-west-1"}), p: zoneA,
			wantErr: ErrConflict, wantField: "metadata.labels"},
		{name: "unparsable zone label", pv: testVolume("pv", map[string]string{ZoneLabel: "a__"}), p: zoneA,
			wantErr: ErrConflict, wantField: "metadata.labels"},
		{name: "conflicting affinity zones", pv: testVolume("pv", nil, term(expr(ZoneLabel, in, "us-east-1a", "us-east-1c"))), p: zoneA,
			wantErr: ErrConflict, wantField: "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0]"},
		{name: "affinity NotIn on zone key", pv: testVolume("pv", nil, term(hostname), term(hostname, expr(BetaZoneLabel, v1.NodeSelectorOpNotIn, "us-east-1b"))), p: zoneA,
			wantErr: ErrConflict, wantField: "spec.nodeAffinity.required.nodeSelectorTerms[1].matchExpressions[1]"},
		{name: "affinity Exists on region key", pv: testVolume("pv", nil, term(expr(RegionLabel, v1.NodeSelectorOpExists))), p: zoneA,
			wantErr: ErrConflict, wantField: "spec.nodeAffinity"},

		{name: "no zones and no region", pv: testVolume("pv", nil), p: Placement{}, wantErr: ErrInvalidZones},
		{name: "invalid zone", pv: testVolume("pv", nil), p: Placement{Zones: sets.New("a b")}, wantErr: ErrInvalidZones},
		{name: "zone with delimiter", pv: testVolume("pv", nil), p: Placement{Zones: sets.New("a__b")}, wantErr: ErrInvalidZones},
		{name: "invalid region", pv: testVolume("pv", nil), p: Placement{Zones: sets.New("a"), Region: "us/east"}, wantErr: ErrInvalidZones},
		{name: "nil volume", pv: nil, p: zoneA, wantErr: ErrNilObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var before *v1.PersistentVolume
			if tc.pv != nil {
				before = tc.pv.DeepCopy()
			}
			got, err := LabelVolume(tc.pv, tc.p)
			if diff := cmp.Diff(before, tc.pv); diff != "" {
				t.Errorf("LabelVolume modified its argument (-before +after):\n%s", diff)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("LabelVolume() = %v, want error %v", err, tc.wantErr)
				}
				if tc.wantErr == ErrConflict {
					var ce *ConflictError
					if !errors.As(err, &ce) || !IsConflict(err) {
						t.Fatalf("LabelVolume() error %v is not a *ConflictError", err)
					}
					if ce.Volume != "pv" || !strings.HasPrefix(ce.Field, tc.wantField) || ce.Key == "" || ce.Wanted == "" {
						t.Errorf("ConflictError = %+v, want volume pv, field %s..., key and wanted value", ce, tc.wantField)
					}
					if !strings.Contains(err.Error(), `volume "pv"`) || !strings.Contains(err.Error(), ce.Key) {
						t.Errorf("error %q does not name the volume and key", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("LabelVolume() error: %v", err)
			}
			if diff := cmp.Diff(tc.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTerms, affinity(got)); diff != "" {
				t.Errorf("node affinity terms (-want +got):\n%s", diff)
			}

			again, err := LabelVolume(got, tc.p)
			if err != nil {
				t.Fatalf("second LabelVolume() error: %v", err)
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("LabelVolume is not idempotent (-first +second):\n%s", diff)
			}
			if tc.p.Zones.Len() > 0 {
				zs, err := VolumeZones(got)
				if err != nil || !zs.Equal(tc.p.Zones) {
					t.Errorf("VolumeZones(labelled) = %v, %v, want %v", sets.List(zs), err, sets.List(tc.p.Zones))
				}
			}
		})
	}
}

// TestLabelVolumeMatches checks that a labelled volume matches exactly the
// nodes in its zones and region, with and without the Matcher.
func TestLabelVolumeMatches(t *testing.T) {
	t.Parallel()
	pv, err := LabelVolume(testVolume("pv", nil), Placement{Zones: sets.New("us-east-1a", "us-east-1b"), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMatcher()
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-east-1"}, true},
		{map[string]string{ZoneLabel: "us-east-1b", RegionLabel: "us-east-1"}, true},
		{map[string]string{ZoneLabel: "us-east-1c", RegionLabel: "us-east-1"}, false},
		{map[string]string{ZoneLabel: "us-east-1a", RegionLabel: "us-west-2"}, false},
		{map[string]string{ZoneLabel: "us-east-1a"}, false}, // the node affinity needs the region
	} {
		node := testNode("n", tc.labels)
		for name, match := range map[string]func(*v1.PersistentVolume, *v1.Node) (bool, error){"Matches": Matches, "Matcher": m.Matches} {
			if got, err := match(pv, node); err != nil || got != tc.want {
				t.Errorf("%s(labelled volume, node %v) = %v, %v, want %v", name, tc.labels, got, err, tc.want)
			}
		}
	}
}

// FuzzLabelVolume checks that LabelVolume never panics on arbitrary
// existing labels and placements, and that every volume it labels carries
// exactly the placement, is labelled idempotently and matches a node in
// each of its zones.
func FuzzLabelVolume(f *testing.F) {
	f.Add("", "us-east-1a", "us-east-1", false)
	f.Add("us-east-1a", "us-east-1a", "us-east-1", true)
	f.Add("us-east-1b__us-east-1a", "us-east-1a,us-east-1b", "", false)
	f.Add("a__", "a", "r", false)
	f.Add("x", "a,,b", "r r", true)
	f.Fuzz(func(t *testing.T, existing, zoneList, region string, beta bool) {
		pv := testVolume("pv", nil)
		if existing != "" {
			pv.Labels = map[string]string{ZoneLabel: existing}
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
				term(expr(ZoneLabel, v1.NodeSelectorOpIn, strings.Split(existing, MultiZoneDelimiter)...)),
			}}}
		}
		p := Placement{Region: region, WriteBeta: beta}
		if zoneList != "" {
			p.Zones = sets.New(strings.Split(zoneList, ",")...)
		}
		out, err := LabelVolume(pv, p)
		if err != nil {
			if !errors.Is(err, ErrInvalidZones) && !errors.Is(err, ErrConflict) {
				t.Fatalf("LabelVolume error %v wraps neither ErrInvalidZones nor ErrConflict", err)
			}
			return
		}
		again, err := LabelVolume(out, p)
		if err != nil {
			t.Fatalf("second LabelVolume error: %v", err)
		}
		if diff := cmp.Diff(out, again); diff != "" {
			t.Fatalf("not idempotent (-first +second):\n%s", diff)
		}
		if p.Zones.Len() == 0 {
			return
		}
		zs, err := VolumeZones(out)
		if err != nil || !zs.Equal(p.Zones) {
			t.Fatalf("VolumeZones = %v, %v, want %v", sets.List(zs), err, sets.List(p.Zones))
		}
		for z := range p.Zones {
			labels := map[string]string{ZoneLabel: z}
			if region != "" {
				labels[RegionLabel] = region
			}
			if ok, err := Matches(out, testNode("n", labels)); !ok || err != nil {
				t.Fatalf("Matches(labelled, node in %q) = %v, %v, want true", z, ok, err)
			}
		}
	})
}
