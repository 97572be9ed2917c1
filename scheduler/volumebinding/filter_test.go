package volumebinding

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volbind/volbind/binder/scheduling"
)

func TestInTreeReasons(t *testing.T) {
	const (
		nodeConflict = "node(s) didn't match PersistentVolume's node affinity"
		bindConflict = "node(s) didn't find available persistent volumes to bind"
		noSpace      = "node(s) did not have enough free storage"
		pvNotExist   = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
		immediate    = "pod has unbound immediate PersistentVolumeClaims"
	)
	tests := []struct {
		name  string
		kinds []scheduling.ReasonKind
		want  []string
	}{
		{"one", []scheduling.ReasonKind{scheduling.CannotProvision}, []string{bindConflict}},
		{"in-tree order, one text per kind of text", []scheduling.ReasonKind{scheduling.VolumeNotExist, scheduling.NotEnoughSpace,
			scheduling.SelectedNodeConflict, scheduling.NoMatchingVolume, scheduling.VolumeNodeAffinityConflict, scheduling.CannotProvision},
			[]string{nodeConflict, bindConflict, noSpace, pvNotExist}},
		{"kinds the in-tree Filter never reports follow", []scheduling.ReasonKind{scheduling.UnboundImmediateClaim, scheduling.NotEnoughSpace},
			[]string{noSpace, immediate}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var reasons []scheduling.Reason
			for _, k := range tc.kinds {
				reasons = append(reasons, scheduling.Reason{Kind: k, Claim: "ns/c"})
			}
			if d := cmp.Diff(tc.want, inTreeReasons(reasons)); d != "" {
				t.Errorf("inTreeReasons(%v) (-want +got):\n%s", tc.kinds, d)
			}
		})
	}
}
