package scheduling_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/volume"
	csiplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/zones"
)

// csiNodes returns a CSINode lister holding a CSINode per entry of
// migrated (node name -> migrated-plugins annotation; "-" for a CSINode
// without the annotation).
func csiNodes(t *testing.T, migrated map[string]string) storagelisters.CSINodeLister {
	t.Helper()
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for name, plugins := range migrated {
		n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if plugins != "-" {
			n.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: plugins}
		}
		if err := idx.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	return storagelisters.NewCSINodeLister(idx)
}

// ebsVolume is a bound AWS EBS volume labelled with zone a, with node
// affinity on the GA zone key when withAffinity.
func ebsVolume(withAffinity bool) *v1.PersistentVolume {
	key := ""
	if withAffinity {
		key = zones.ZoneLabel
	}
	p := zoneLabelled(boundPV(pv("ebs", "1Gi", "wffc", key, "a"), "c1"), "a")
	p.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
	return p
}

// TestFindCSIMigration: a bound in-tree volume is checked as its CSI
// driver's volume (zone labels and affinity turned into the driver's
// topology key) on a node whose CSINode lists its plugin as migrated, and
// as it is elsewhere, as kube-scheduler's checkBoundClaims does.
func TestFindCSIMigration(t *testing.T) {
	t.Parallel()
	ebsZone := csiplugins.AWSEBSTopologyKey
	tests := []struct {
		name      string
		pv        *v1.PersistentVolume
		migrated  string // node-a's CSINode annotation; "" for no CSINode
		csiZone   string // node-a's ebsZone label; "" for none
		wantKinds []scheduling.ReasonKind
	}{
		{name: "no CSINode: zone labels are not VolumeBinding's business", pv: ebsVolume(false)},
		{name: "CSINode without the annotation", pv: ebsVolume(false), migrated: "-"},
		{name: "another plugin migrated", pv: ebsVolume(false), migrated: csiplugins.GCEPDInTreePluginName},
		{name: "migrated, the node lacks the driver's topology label: the labels became affinity",
			pv: ebsVolume(false), migrated: csiplugins.AWSEBSInTreePluginName,
			wantKinds: []scheduling.ReasonKind{scheduling.VolumeNodeAffinityConflict}},
		{name: "migrated among others, the driver's zone matches", pv: ebsVolume(false),
			migrated: csiplugins.GCEPDInTreePluginName + "," + csiplugins.AWSEBSInTreePluginName, csiZone: "a"},
		{name: "migrated, the driver's zone differs", pv: ebsVolume(false), migrated: csiplugins.AWSEBSInTreePluginName, csiZone: "b",
			wantKinds: []scheduling.ReasonKind{scheduling.VolumeNodeAffinityConflict}},
		{name: "affinity on the zone label, not migrated: checked as written", pv: ebsVolume(true)},
		{name: "affinity on the zone label, migrated: the key becomes the driver's", pv: ebsVolume(true),
			migrated: csiplugins.AWSEBSInTreePluginName, wantKinds: []scheduling.ReasonKind{scheduling.VolumeNodeAffinityConflict}},
		{name: "affinity on the zone label, migrated, driver's zone matches", pv: ebsVolume(true),
			migrated: csiplugins.AWSEBSInTreePluginName, csiZone: "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := node("node-a", "a")
			if tc.csiZone != "" {
				n.Labels[ebsZone] = tc.csiZone
			}
			cfg := scheduling.Config{}
			if tc.migrated != "" {
				cfg.CSINodes = csiNodes(t, map[string]string{"node-a": tc.migrated})
			}
			objs := []runtime.Object{n, class("wffc", true, volume.NotSupportedProvisioner), tc.pv, boundPVC(pvc("c1", "1Gi", "wffc"), "ebs")}
			e := newEnv(t, cfg, objs...)
			_, reasons, err := e.vb.Find(e.ctx, pod("p", "c1"), e.node("node-a"))
			if err != nil {
				t.Fatal(err)
			}
			var kinds []scheduling.ReasonKind
			for _, r := range reasons {
				kinds = append(kinds, r.Kind)
			}
			if diff := cmp.Diff(tc.wantKinds, kinds); diff != "" {
				t.Errorf("reasons %v (-want +got):\n%s", reasons, diff)
			}
		})
	}
}
