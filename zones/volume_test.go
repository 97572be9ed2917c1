package zones

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestVolumeZones(t *testing.T) {
	t.Parallel()
	in := v1.NodeSelectorOpIn
	tests := []struct {
		name    string
		pv      *v1.PersistentVolume
		want    []string
		wantErr error
	}{
		{name: "no placement", pv: testVolume("pv", nil), want: []string{}},
		{name: "GA label", pv: testVolume("pv", map[string]string{ZoneLabel: "a"}), want: []string{"a"}},
		{name: "beta label", pv: testVolume("pv", map[string]string{BetaZoneLabel: "b"}), want: []string{"b"}},
		{name: "multi-zone label", pv: testVolume("pv", map[string]string{ZoneLabel: "b__a"}), want: []string{"a", "b"}},
		{name: "GA and beta agree", pv: testVolume("pv", map[string]string{ZoneLabel: "a__b", BetaZoneLabel: "b__a"}), want: []string{"a", "b"}},
		{name: "GA and beta disagree", pv: testVolume("pv", map[string]string{ZoneLabel: "a", BetaZoneLabel: "b"}), wantErr: ErrInvalidPlacement},
		{name: "bad label", pv: testVolume("pv", map[string]string{ZoneLabel: "a__"}), wantErr: ErrInvalidZones},
		{name: "region only", pv: testVolume("pv", map[string]string{RegionLabel: "r"}), want: []string{}},
		{name: "affinity one term", pv: testVolume("pv", nil, term(expr(ZoneLabel, in, "a", "b"))), want: []string{"a", "b"}},
		{name: "affinity beta key", pv: testVolume("pv", nil, term(expr(BetaZoneLabel, in, "a"))), want: []string{"a"}},
		{name: "affinity terms add up", pv: testVolume("pv", nil,
			term(expr(ZoneLabel, in, "a")), term(expr(ZoneLabel, in, "c"))), want: []string{"a", "c"}},
		{name: "affinity expressions intersect", pv: testVolume("pv", nil,
			term(expr(ZoneLabel, in, "a", "b"), expr(BetaZoneLabel, in, "b", "c"))), want: []string{"b"}},
		{name: "affinity term without zone does not limit", pv: testVolume("pv", nil,
			term(expr(ZoneLabel, in, "a")), term(expr("kubernetes.io/hostname", in, "n1"))), want: []string{}},
		{name: "affinity NotIn does not limit", pv: testVolume("pv", nil,
			term(expr(ZoneLabel, v1.NodeSelectorOpNotIn, "a"))), want: []string{}},
		{name: "affinity empty term skipped", pv: testVolume("pv", nil, term(), term(expr(ZoneLabel, in, "a"))), want: []string{"a"}},
		{name: "affinity no terms", pv: testVolume("pv", nil, []v1.NodeSelectorTerm{}...), want: []string{}},
		{name: "labels and affinity intersect", pv: testVolume("pv", map[string]string{ZoneLabel: "a__b"},
			term(expr(ZoneLabel, in, "b", "c"))), want: []string{"b"}},
		{name: "labels and affinity disjoint", pv: testVolume("pv", map[string]string{ZoneLabel: "a"},
			term(expr(ZoneLabel, in, "c"))), wantErr: ErrInvalidPlacement},
		{name: "nil volume", pv: nil, wantErr: ErrNilObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := VolumeZones(tc.pv)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("VolumeZones() = %v, %v, want error %v", sets.List(got), err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("VolumeZones() error: %v", err)
			}
			if got == nil {
				t.Fatalf("VolumeZones() = nil set, want non-nil")
			}
			if diff := cmp.Diff(tc.want, sets.List(got)); diff != "" {
				t.Errorf("VolumeZones() (-want +got):\n%s", diff)
			}
		})
	}
}
