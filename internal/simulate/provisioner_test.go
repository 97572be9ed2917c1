package simulate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
)

func TestSimProvisioner(t *testing.T) {
	t.Parallel()
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "example.com/disk"}
	node := func(labels map[string]string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
	}
	for _, tc := range []struct {
		name     string
		node     *v1.Node
		wantKey  string // "" for no node affinity
		wantTerm string
	}{
		{name: "immediate binding: anywhere"},
		{name: "zone", node: node(map[string]string{v1.LabelHostname: "h", v1.LabelTopologyZone: "z"}), wantKey: v1.LabelTopologyZone, wantTerm: "z"},
		{name: "host without zone", node: node(map[string]string{v1.LabelHostname: "h"}), wantKey: v1.LabelHostname, wantTerm: "h"},
		{name: "node without labels: anywhere", node: node(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pv, err := simProvisioner{}.Provision(t.Context(), &binder.ProvisionRequest{VolumeName: "pvc-1", Class: class, SelectedNode: tc.node})
			if err != nil {
				t.Fatalf("Provision: %v", err)
			}
			if csi := pv.Spec.CSI; csi == nil || csi.Driver != "example.com.disk" || csi.VolumeHandle != "pvc-1" {
				t.Errorf("volume source = %+v, want CSI driver example.com.disk, handle pvc-1", pv.Spec.PersistentVolumeSource)
			}
			na := pv.Spec.NodeAffinity
			if tc.wantKey == "" {
				if na != nil {
					t.Errorf("node affinity = %+v, want none", na)
				}
				return
			}
			if na == nil || len(na.Required.NodeSelectorTerms) != 1 {
				t.Fatalf("node affinity = %+v, want one term", na)
			}
			e := na.Required.NodeSelectorTerms[0].MatchExpressions
			if len(e) != 1 || e[0].Key != tc.wantKey || len(e[0].Values) != 1 || e[0].Values[0] != tc.wantTerm {
				t.Errorf("node affinity expressions = %+v, want %s In [%s]", e, tc.wantKey, tc.wantTerm)
			}
		})
	}
}
