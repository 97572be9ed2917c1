package zones

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// class returns a StorageClass with the given parameters and
// allowedTopologies terms.
func class(params map[string]string, terms ...v1.TopologySelectorTerm) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "sc"}, Parameters: params, AllowedTopologies: terms}
}

// topo returns an allowedTopologies term with one expression: key In
// values.
func topo(key string, values ...string) v1.TopologySelectorTerm {
	return v1.TopologySelectorTerm{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: key, Values: values}}}
}

// The expected zones are those of cloud-provider's SelectZonesForVolume
// for the same input, except where a case says it is a deliberate
// difference.
func TestSelectZones(t *testing.T) {
	t.Parallel()
	nodeB := testNode("node-b", map[string]string{ZoneLabel: "us-east-1b"})
	nodeBetaB := testNode("node-b", map[string]string{BetaZoneLabel: "us-east-1b"})
	nodeBoth := testNode("node-b", map[string]string{ZoneLabel: "us-east-1b", BetaZoneLabel: "us-east-1x"})
	nodeNone := testNode("node-none", map[string]string{"other": "x"})
	nodeEmpty := testNode("node-empty", map[string]string{ZoneLabel: ""})
	east3 := sets.New("us-east-1a", "us-east-1b", "us-east-1c")
	east4 := sets.New("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d")
	// Two allowedTopologies terms, one with the GA key and one with the
	// beta key: their zones add up.
	twoTerms := []v1.TopologySelectorTerm{topo(ZoneLabel, "us-east-1a"), topo(BetaZoneLabel, "us-east-1b", "us-east-1c")}

	tests := []struct {
		name    string
		req     Request
		want    []string
		wantErr error
	}{
		// Zones with nodes.
		{name: "zones with nodes, ordinal 0", req: Request{ClaimName: "data-web-0", ZonesWithNodes: east3}, want: []string{"us-east-1a"}},
		{name: "zones with nodes, ordinal 2", req: Request{ClaimName: "data-web-2", ZonesWithNodes: east3}, want: []string{"us-east-1c"}},
		{name: "zones with nodes, ordinal beyond zone count", req: Request{ClaimName: "data-web-3", ZonesWithNodes: east3}, want: []string{"us-east-1a"}},
		{name: "zones with nodes, no ordinal", req: Request{ClaimName: "scratch", ZonesWithNodes: east3}, want: []string{"us-east-1b"}},
		{name: "zones with nodes, 2 replicas", req: Request{ClaimName: "data-web-1", Replicas: 2, ZonesWithNodes: east3}, want: []string{"us-east-1a", "us-east-1c"}},
		{name: "replicas equal to zones with nodes", req: Request{ClaimName: "x", Replicas: 3, ZonesWithNodes: east3}, want: sets.List(east3)},
		{name: "more replicas than zones with nodes", req: Request{ClaimName: "x", Replicas: 4, ZonesWithNodes: east3}, wantErr: ErrNoZones},
		{name: "empty zones with nodes", req: Request{ClaimName: "x", ZonesWithNodes: sets.New[string]()}, wantErr: ErrNoZones},
		{name: "nothing at all", req: Request{ClaimName: "x"}, wantErr: ErrNoZones},

		// Selected node (delayed binding).
		{name: "node zone, one replica", req: Request{ClaimName: "data-web-0", SelectedNode: nodeB, ZonesWithNodes: east3}, want: []string{"us-east-1b"}},
		{name: "node beta zone", req: Request{ClaimName: "data-web-0", SelectedNode: nodeBetaB}, want: []string{"us-east-1b"}},
		{name: "node GA label wins over beta", req: Request{ClaimName: "c", SelectedNode: nodeBoth}, want: []string{"us-east-1b"}},
		{name: "node without zone", req: Request{ClaimName: "c", SelectedNode: nodeNone, ZonesWithNodes: east3}, wantErr: ErrNoZones},
		{name: "node zone plus zones with nodes", req: Request{ClaimName: "data-web-0", Replicas: 2, SelectedNode: nodeB, ZonesWithNodes: east4},
			want: []string{"us-east-1a", "us-east-1b"}},
		{name: "node zone plus zones with nodes, ordinal 2", req: Request{ClaimName: "data-web-2", Replicas: 2, SelectedNode: nodeB, ZonesWithNodes: east4},
			want: []string{"us-east-1b", "us-east-1d"}},
		{name: "node zone not among zones with nodes", req: Request{ClaimName: "c", Replicas: 2, SelectedNode: nodeB,
			ZonesWithNodes: sets.New("us-east-1a", "us-east-1c")}, wantErr: ErrNoZones},
		{name: "node with zone parameter", req: Request{ClaimName: "c", SelectedNode: nodeB, Class: class(map[string]string{"zone": "us-east-1a"})},
			wantErr: ErrInvalidClass},
		{name: "node with zones parameter", req: Request{ClaimName: "c", SelectedNode: nodeB, Class: class(map[string]string{"zones": "us-east-1a"})},
			wantErr: ErrInvalidClass},

		// allowedTopologies.
		{name: "allowedTopologies with several terms", req: Request{ClaimName: "data-web-1", Class: class(nil, twoTerms...), ZonesWithNodes: sets.New("elsewhere")},
			want: []string{"us-east-1b"}},
		{name: "allowedTopologies several terms, ordinal 2", req: Request{ClaimName: "data-web-2", Class: class(nil, twoTerms...)}, want: []string{"us-east-1c"}},
		{name: "allowedTopologies with node, 2 replicas", req: Request{ClaimName: "data-web-0", Replicas: 2, SelectedNode: nodeB, Class: class(nil, twoTerms...)},
			want: []string{"us-east-1b", "us-east-1c"}},
		{name: "allowedTopologies with node, ordinal 1", req: Request{ClaimName: "data-web-1", Replicas: 2, SelectedNode: nodeB, Class: class(nil, twoTerms...)},
			want: []string{"us-east-1a", "us-east-1b"}},
		{name: "allowedTopologies expressions of one term add up", req: Request{ClaimName: "c", Replicas: 3, Class: class(nil, v1.TopologySelectorTerm{
			MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: ZoneLabel, Values: []string{"a"}}, {Key: BetaZoneLabel, Values: []string{"b", "c"}}}})},
			want: []string{"a", "b", "c"}},
		{name: "allowedTopologies too few zones", req: Request{ClaimName: "c", Replicas: 4, Class: class(nil, twoTerms...)}, wantErr: ErrNoZones},
		{name: "allowedTopologies without node zone", req: Request{ClaimName: "c", Replicas: 2, SelectedNode: testNode("n", map[string]string{ZoneLabel: "us-west-2a"}),
			Class: class(nil, twoTerms...)}, wantErr: ErrNoZones},
		{name: "allowedTopologies unsupported key", req: Request{ClaimName: "c", Class: class(nil, topo("kubernetes.io/hostname", "n1"))}, wantErr: ErrInvalidClass},
		{name: "allowedTopologies without expressions", req: Request{ClaimName: "c", Class: class(nil, v1.TopologySelectorTerm{})}, wantErr: ErrInvalidClass},
		{name: "allowedTopologies with zone parameter", req: Request{ClaimName: "c", Class: class(map[string]string{"zone": "a"}, twoTerms...)}, wantErr: ErrInvalidClass},
		{name: "allowedTopologies with zones parameter", req: Request{ClaimName: "c", Class: class(map[string]string{"zones": "a"}, twoTerms...)}, wantErr: ErrInvalidClass},

		// zone and zones parameters.
		{name: "zone parameter", req: Request{ClaimName: "c", Class: class(map[string]string{"zone": "us-east-1c"}), ZonesWithNodes: east3}, want: []string{"us-east-1c"}},
		{name: "zone parameter key is case-insensitive", req: Request{ClaimName: "c", Class: class(map[string]string{"Zone": "us-east-1c"})}, want: []string{"us-east-1c"}},
		{name: "zone parameter with 2 replicas", req: Request{ClaimName: "c", Replicas: 2, Class: class(map[string]string{"zone": "us-east-1c"})}, wantErr: ErrInvalidClass},
		{name: "zone and zones parameters", req: Request{ClaimName: "c", Class: class(map[string]string{"zone": "a", "zones": "a,b"})}, wantErr: ErrInvalidClass},
		{name: "zones parameter", req: Request{ClaimName: "data-web-0", Replicas: 2, Class: class(map[string]string{"zones": "z1,z2,z3,z4"})}, want: []string{"z2", "z3"}},
		{name: "zones parameter, ordinal 1", req: Request{ClaimName: "data-web-1", Replicas: 2, Class: class(map[string]string{"zones": "z4, z3 ,z2,z1"})}, want: []string{"z1", "z4"}},
		{name: "zones parameter equal to replicas", req: Request{ClaimName: "c", Replicas: 2, Class: class(map[string]string{"zones": "z1,z2"})}, want: []string{"z1", "z2"}},
		{name: "zones parameter too few", req: Request{ClaimName: "c", Replicas: 3, Class: class(map[string]string{"zones": "z1,z2"})}, wantErr: ErrNoZones},
		{name: "zones parameter empty element", req: Request{ClaimName: "c", Class: class(map[string]string{"zones": "z1,,z2"})}, wantErr: ErrInvalidZones},
		{name: "other parameters are ignored", req: Request{ClaimName: "scratch", Class: class(map[string]string{"type": "gp3"}), ZonesWithNodes: east3}, want: []string{"us-east-1b"}},

		// Deliberate differences from the helper.
		{name: "zero replicas means one", req: Request{ClaimName: "data-web-2", Replicas: 0, ZonesWithNodes: east3}, want: []string{"us-east-1c"}},
		{name: "node with empty zone label", req: Request{ClaimName: "c", SelectedNode: nodeEmpty}, wantErr: ErrNoZones},
		{name: "empty zone parameter", req: Request{ClaimName: "c", Class: class(map[string]string{"zone": ""})}, wantErr: ErrInvalidClass},
		{name: "zone parameter with a space", req: Request{ClaimName: "c", Class: class(map[string]string{"zone": "us east"})}, wantErr: ErrInvalidClass},
		{name: "zone parameter set twice", req: Request{ClaimName: "c", Class: class(map[string]string{"zone": "a", "ZONE": "b"})}, wantErr: ErrInvalidClass},
		{name: "no claim name", req: Request{ZonesWithNodes: east3}, wantErr: ErrNoClaimName},
		{name: "no claim name with the node's zone", req: Request{SelectedNode: nodeB}, want: []string{"us-east-1b"}},
		{name: "largest ordinal", req: Request{ClaimName: "data-web-4294967295", ZonesWithNodes: east3}, wantErr: ErrNoZones},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := tc.req.ZonesWithNodes.Clone()
			got, err := SelectZones(tc.req)
			if !tc.req.ZonesWithNodes.Equal(before) {
				t.Errorf("SelectZones modified ZonesWithNodes: %v, was %v", sets.List(tc.req.ZonesWithNodes), sets.List(before))
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("SelectZones() = %v, %v, want error %v", sets.List(got), err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), strconv.Quote(tc.req.ClaimName)) {
					t.Errorf("SelectZones() error %q does not name the claim", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("SelectZones() error: %v", err)
			}
			if diff := cmp.Diff(tc.want, sets.List(got)); diff != "" {
				t.Errorf("SelectZones() (-want +got):\n%s", diff)
			}
			if tc.req.Replicas <= 1 {
				one, err := SelectZone(tc.req)
				if err != nil || !got.Has(one) || got.Len() != 1 {
					t.Errorf("SelectZone() = %q, %v, want the one zone of %v", one, err, sets.List(got))
				}
			}
		})
	}
}

func TestSelectZoneIgnoresReplicas(t *testing.T) {
	t.Parallel()
	req := Request{ClaimName: "data-web-1", Replicas: 3, Class: class(map[string]string{"zone": "us-east-1c"})}
	got, err := SelectZone(req)
	if err != nil || got != "us-east-1c" {
		t.Errorf("SelectZone(%+v) = %q, %v, want %q", req, got, err, "us-east-1c")
	}
	if _, err := SelectZone(Request{ClaimName: "c"}); !errors.Is(err, ErrNoZones) {
		t.Errorf("SelectZone(no zones) error = %v, want ErrNoZones", err)
	}
}

func TestZonesFromAllowedTopologies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		terms   []v1.TopologySelectorTerm
		want    []string
		wantErr bool
	}{
		{name: "none", want: []string{}},
		{name: "one term", terms: []v1.TopologySelectorTerm{topo(ZoneLabel, "a", "b")}, want: []string{"a", "b"}},
		{name: "several terms", terms: []v1.TopologySelectorTerm{topo(ZoneLabel, "a"), topo(BetaZoneLabel, "b"), topo(ZoneLabel, "a", "c")},
			want: []string{"a", "b", "c"}},
		{name: "empty term", terms: []v1.TopologySelectorTerm{{}}, want: []string{}},
		{name: "region key", terms: []v1.TopologySelectorTerm{topo(ZoneLabel, "a"), topo(RegionLabel, "r")}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ZonesFromAllowedTopologies(tc.terms)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidClass) {
					t.Fatalf("ZonesFromAllowedTopologies() = %v, %v, want ErrInvalidClass", sets.List(got), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, sets.List(got)); diff != "" {
				t.Errorf("ZonesFromAllowedTopologies() (-want +got):\n%s", diff)
			}
		})
	}
}
