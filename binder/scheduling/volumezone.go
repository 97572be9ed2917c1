package scheduling

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
)

// zoneKeys are the volume labels the VolumeZone plugin checks, in its
// order.
var zoneKeys = [...]string{v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion, v1.LabelTopologyZone, v1.LabelTopologyRegion}

// zonedVolume is a bound claim's volume whose labels the VolumeZone rule
// checks.
type zonedVolume struct {
	claim string
	pv    *v1.PersistentVolume
}

// volumeZoneAllows is kube-scheduler's VolumeZone Filter: a node with any
// zone or region label must carry, for each such label of each volume (a
// "__"-separated list of values; a value that does not parse is ignored,
// as the plugin does), one of the label's values under the same key or,
// for a beta key, under its GA key.
func volumeZoneAllows(vols []zonedVolume, node *v1.Node) (Reason, bool) {
	if len(vols) == 0 || !hasZoneLabel(node) {
		return Reason{}, true
	}
	for _, zv := range vols {
		for _, key := range zoneKeys {
			value, ok := zv.pv.Labels[key]
			if !ok {
				continue
			}
			allowed, err := volumehelpers.LabelZonesToSet(value)
			if err != nil {
				continue
			}
			got, ok := node.Labels[key]
			if !ok {
				got, ok = node.Labels[gaKey(key)]
			}
			if !ok || !allowed.Has(got) {
				return Reason{Kind: VolumeZoneConflict, Claim: zv.claim, Volume: zv.pv.Name,
					Detail: fmt.Sprintf("node %q has %s=%q, the volume %s", node.Name, key, got, value)}, false
			}
		}
	}
	return Reason{}, true
}

// hasZoneLabel reports whether the node carries any zone or region label;
// the VolumeZone plugin admits nodes without any.
func hasZoneLabel(node *v1.Node) bool {
	for _, key := range zoneKeys {
		if _, ok := node.Labels[key]; ok {
			return true
		}
	}
	return false
}

// gaKey returns the GA key of a beta zone or region key, else key.
func gaKey(key string) string {
	switch key {
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	}
	return key
}
