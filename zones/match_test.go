package zones

import (
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

func TestMatches(t *testing.T) {
	t.Parallel()
	in, notIn := v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn
	zoneA := map[string]string{ZoneLabel: "a", RegionLabel: "r1"}
	zoneABeta := map[string]string{BetaZoneLabel: "a", BetaRegionLabel: "r1"}
	tests := []struct {
		name    string
		pv      *v1.PersistentVolume
		node    map[string]string
		want    bool
		wantErr error
	}{
		{name: "no placement, labelled node", pv: testVolume("pv", nil), node: zoneA, want: true},
		{name: "no placement, bare node", pv: testVolume("pv", nil), node: nil, want: true},
		{name: "zone label match", pv: testVolume("pv", map[string]string{ZoneLabel: "a"}), node: zoneA, want: true},
		{name: "zone label mismatch", pv: testVolume("pv", map[string]string{ZoneLabel: "b"}), node: zoneA, want: false},
		{name: "multi-zone any", pv: testVolume("pv", map[string]string{ZoneLabel: "b__a"}), node: zoneA, want: true},
		{name: "multi-zone none", pv: testVolume("pv", map[string]string{ZoneLabel: "b__c"}), node: zoneA, want: false},
		{name: "zone and region match", pv: testVolume("pv", map[string]string{ZoneLabel: "a", RegionLabel: "r1"}), node: zoneA, want: true},
		{name: "region mismatch", pv: testVolume("pv", map[string]string{ZoneLabel: "a", RegionLabel: "r2"}), node: zoneA, want: false},
		{name: "beta volume, GA node", pv: testVolume("pv", map[string]string{BetaZoneLabel: "a"}), node: zoneA, want: true},
		{name: "GA volume, beta node", pv: testVolume("pv", map[string]string{ZoneLabel: "a"}), node: zoneABeta, want: true},
		{name: "beta volume, beta node mismatch", pv: testVolume("pv", map[string]string{BetaZoneLabel: "b"}), node: zoneABeta, want: false},
		{name: "node with only region lacks zone", pv: testVolume("pv", map[string]string{ZoneLabel: "a"}),
			node: map[string]string{RegionLabel: "r1"}, want: false},
		{name: "node without topology labels passes labels", pv: testVolume("pv", map[string]string{ZoneLabel: "a"}),
			node: map[string]string{"other": "x"}, want: true},
		{name: "invalid zone label", pv: testVolume("pv", map[string]string{ZoneLabel: "a__"}), node: zoneA, wantErr: ErrInvalidPlacement},
		{name: "affinity In match", pv: testVolume("pv", nil, term(expr(ZoneLabel, in, "a"))), node: zoneA, want: true},
		{name: "affinity In mismatch", pv: testVolume("pv", nil, term(expr(ZoneLabel, in, "b"))), node: zoneA, want: false},
		{name: "affinity NotIn", pv: testVolume("pv", nil, term(expr(ZoneLabel, notIn, "a"))), node: zoneA, want: false},
		{name: "affinity Exists", pv: testVolume("pv", nil, term(expr("disk", v1.NodeSelectorOpExists))),
			node: map[string]string{"disk": "ssd"}, want: true},
		{name: "affinity DoesNotExist", pv: testVolume("pv", nil, term(expr("disk", v1.NodeSelectorOpDoesNotExist))),
			node: map[string]string{"disk": "ssd"}, want: false},
		{name: "affinity Gt", pv: testVolume("pv", nil, term(expr("gen", v1.NodeSelectorOpGt, "3"))),
			node: map[string]string{"gen": "4"}, want: true},
		{name: "affinity Lt", pv: testVolume("pv", nil, term(expr("gen", v1.NodeSelectorOpLt, "3"))),
			node: map[string]string{"gen": "4"}, want: false},
		{name: "affinity terms ORed", pv: testVolume("pv", nil, term(expr(ZoneLabel, in, "b")), term(expr(ZoneLabel, in, "a"))),
			node: zoneA, want: true},
		{name: "affinity expressions ANDed", pv: testVolume("pv", nil, term(expr(ZoneLabel, in, "a"), expr(RegionLabel, in, "r2"))),
			node: zoneA, want: false},
		{name: "labels match but affinity does not", pv: testVolume("pv", map[string]string{ZoneLabel: "a"},
			term(expr("kubernetes.io/hostname", in, "other"))), node: zoneA, want: false},
		{name: "affinity matches but labels do not", pv: testVolume("pv", map[string]string{ZoneLabel: "b"},
			term(expr(ZoneLabel, in, "a"))), node: zoneA, want: false},
		{name: "empty required selects nothing", pv: testVolume("pv", nil, []v1.NodeSelectorTerm{}...), node: zoneA, want: false},
		{name: "empty term selects nothing", pv: testVolume("pv", nil, term()), node: zoneA, want: false},
		{name: "bad operator only", pv: testVolume("pv", nil, term(expr(ZoneLabel, "Near", "a"))), node: zoneA, wantErr: ErrInvalidPlacement},
		{name: "bad term skipped when another matches", pv: testVolume("pv", nil,
			term(expr(ZoneLabel, "Near", "a")), term(expr(ZoneLabel, in, "a"))), node: zoneA, want: true},
		{name: "Gt with non-integer value", pv: testVolume("pv", nil, term(expr("gen", v1.NodeSelectorOpGt, "x"))),
			node: map[string]string{"gen": "4"}, wantErr: ErrInvalidPlacement},
		{name: "matchFields ignored as in CheckNodeAffinity", pv: testVolume("pv", nil, v1.NodeSelectorTerm{
			MatchFields: []v1.NodeSelectorRequirement{expr("metadata.name", in, "other-node")}}), node: zoneA, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := NewMatcher() // all cases share name, UID and resourceVersion
			node := testNode("node-1", tc.node)
			for name, match := range map[string]func(*v1.PersistentVolume, *v1.Node) (bool, error){
				"Matches": Matches, "Matcher.Matches": m.Matches,
			} {
				for range 2 { // the second call hits the matcher's cache
					got, err := match(tc.pv, node)
					if tc.wantErr != nil {
						if !errors.Is(err, tc.wantErr) {
							t.Fatalf("%s() = %v, %v, want error %v", name, got, err, tc.wantErr)
						}
						continue
					}
					if err != nil || got != tc.want {
						t.Fatalf("%s() = %v, %v, want %v", name, got, err, tc.want)
					}
				}
			}
		})
	}
}

func TestMatchesNil(t *testing.T) {
	t.Parallel()
	m := NewMatcher()
	pv, node := testVolume("pv", nil), testNode("n", nil)
	for _, c := range []struct {
		pv   *v1.PersistentVolume
		node *v1.Node
	}{{nil, node}, {pv, nil}} {
		if _, err := Matches(c.pv, c.node); !errors.Is(err, ErrNilObject) {
			t.Errorf("Matches(%v, %v) error = %v, want ErrNilObject", c.pv, c.node, err)
		}
		if _, err := m.Matches(c.pv, c.node); !errors.Is(err, ErrNilObject) {
			t.Errorf("Matcher.Matches(%v, %v) error = %v, want ErrNilObject", c.pv, c.node, err)
		}
	}
	m.Forget(nil) // must not panic
}

// TestMatchesAgreesWithCheckNodeAffinity compares Matches with
// component-helpers' CheckNodeAffinity on random node affinities (no zone
// labels on the volume, so only node affinity decides). The two must agree on
// every input: match exactly when CheckNodeAffinity returns nil.
func TestMatchesAgreesWithCheckNodeAffinity(t *testing.T) {
	t.Parallel()
	rng, seed := testRand(t)
	keys := []string{ZoneLabel, RegionLabel, "disk", "gen"}
	values := []string{"a", "b", "c", "1", "5", "x"}
	ops := []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
		v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt, "Bogus"}
	m := NewMatcher()
	for i := range 5000 {
		var terms []v1.NodeSelectorTerm
		for range rng.IntN(4) {
			var tm v1.NodeSelectorTerm
			for range rng.IntN(4) {
				e := v1.NodeSelectorRequirement{Key: keys[rng.IntN(len(keys))], Operator: ops[rng.IntN(len(ops))]}
				for range rng.IntN(3) {
					e.Values = append(e.Values, values[rng.IntN(len(values))])
				}
				tm.MatchExpressions = append(tm.MatchExpressions, e)
			}
			if rng.IntN(8) == 0 {
				tm.MatchFields = []v1.NodeSelectorRequirement{expr("metadata.name", v1.NodeSelectorOpIn, "n")}
			}
			terms = append(terms, tm)
		}
		pv := testVolume(fmt.Sprintf("pv-%d", i%50), nil)
		pv.ResourceVersion = fmt.Sprint(i)
		if rng.IntN(10) > 0 {
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: terms}}
		}
		labels := map[string]string{}
		for _, k := range keys {
			if rng.IntN(2) == 0 {
				labels[k] = values[rng.IntN(len(values))]
			}
		}
		node := testNode("n", labels)
		want := storagehelpers.CheckNodeAffinity(pv, labels) == nil
		got, err := Matches(pv, node)
		if got != want {
			t.Fatalf("seed %d case %d: Matches() = %v, %v; CheckNodeAffinity match = %v\nvolume affinity: %+v\nnode labels: %v",
				seed, i, got, err, want, pv.Spec.NodeAffinity, labels)
		}
		if err != nil && got {
			t.Fatalf("seed %d case %d: Matches() = true with error %v", seed, i, err)
		}
		if cached, _ := m.Matches(pv, node); cached != got {
			t.Fatalf("seed %d case %d: Matcher.Matches() = %v, Matches() = %v", seed, i, cached, got)
		}
	}
}
