package simulate

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder"
)

// simProvisioner is the provisioner of -provision: it creates no storage,
// only the volume the Binder then creates and binds: a CSI volume of the
// class's provisioner (its name with "/" replaced by ".", so that it is a
// valid driver name), which, when binding waited for the first consumer,
// can be used only in the selected node's zone (topology.kubernetes.io/zone)
// or, for a node without one, on its host (kubernetes.io/hostname).
type simProvisioner struct{}

var _ binder.Provisioner = simProvisioner{}

// Provision returns the volume for req; it never fails.
func (simProvisioner) Provision(_ context.Context, req *binder.ProvisionRequest) (*v1.PersistentVolume, error) {
	pv := &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
		CSI: &v1.CSIPersistentVolumeSource{Driver: strings.ReplaceAll(req.Class.Provisioner, "/", "."), VolumeHandle: req.VolumeName},
	}}}
	node := req.SelectedNode
	if node == nil {
		return pv, nil
	}
	for _, key := range []string{v1.LabelTopologyZone, v1.LabelHostname} {
		if value, ok := node.Labels[key]; ok {
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}},
			}}}}
			break
		}
	}
	return pv, nil
}

// simProvisioning is the Binder's provisioning of -provision: simProvisioner
// under the provisioner name of every class that has one, nodes read from
// nodes.
func simProvisioning(classes []*storagev1.StorageClass, nodes binder.NodeGetter) *binder.ProvisioningConfig {
	p := map[string]binder.Provisioner{}
	for _, sc := range classes {
		if sc.Provisioner != "" && sc.Provisioner != volume.NotSupportedProvisioner {
			p[sc.Provisioner] = simProvisioner{}
		}
	}
	return &binder.ProvisioningConfig{Provisioners: p, Nodes: nodes}
}
