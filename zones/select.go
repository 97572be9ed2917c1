package zones

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Request describes a new volume whose zones are to be chosen. The zero
// value of every field except ClaimName is valid.
type Request struct {
	// ClaimName is the name of the claim the volume is for. It spreads
	// StatefulSet claims by ordinal and other claims by hash; it is required
	// whenever zones are chosen by hash.
	ClaimName string
	// Replicas is the number of zones the volume spans (regional disks use
	// 2). Zero means 1.
	Replicas uint32
	// Class is the claim's StorageClass, or nil. Its "zone" and "zones"
	// parameters (keys matched case-insensitively, as the in-tree
	// provisioners did; "zones" is a comma-separated list) and its
	// allowedTopologies limit the choice.
	Class *storagev1.StorageClass
	// ZonesWithNodes are the zones that have nodes (see ZonesWithNodes). They
	// are used when the class names no zones. Not modified.
	ZonesWithNodes sets.Set[string]
	// SelectedNode is the node chosen by the scheduler when binding is
	// delayed (WaitForFirstConsumer), or nil. Its zone is always chosen.
	SelectedNode *v1.Node
}

// SelectZones chooses the zones of a new volume with the same result as
// cloud-provider's SelectZonesForVolume, in this order:
//
//  1. With a selected node, its zone (GA label, else beta) is one of the
//     zones; for a single replica it is the answer. The class must then not
//     use zone or zones parameters.
//  2. With allowedTopologies, the zones they allow (keys must be zone keys;
//     all terms add up) are chosen from, always including the node's zone.
//  3. A "zone" parameter is the answer (one replica only).
//  4. A "zones" parameter is chosen from with ChooseZones.
//  5. Otherwise ZonesWithNodes is chosen from, including the node's zone.
//
// Errors wrap ErrInvalidClass for unusable class settings, ErrNoZones when
// there are not enough zones or the node has no usable zone, and
// ErrNoClaimName when the choice needs a name. Deliberate differences from
// the helper, on inputs it mishandles: Replicas 0 means 1; an empty zone
// (node label, "zone" parameter) or a parameter zone that is not a valid
// label value is refused rather than returned; an empty claim name is
// refused rather than replaced by a random choice; an ordinal so large that
// the helper's uint32 arithmetic wraps round to fewer zones than replicas
// gives ErrNoZones; and no input set is modified (the helper deletes the
// node's zone from the set it is given). Errors name the claim. The result
// is a new set owned by the caller.
func SelectZones(req Request) (sets.Set[string], error) {
	zs, err := selectZones(req)
	if err != nil {
		return nil, fmt.Errorf("zones: select zones for claim %q: %w", req.ClaimName, err)
	}
	return zs, nil
}

// selectZones is SelectZones without the claim name in errors.
func selectZones(req Request) (sets.Set[string], error) {
	replicas := max(req.Replicas, 1)
	params, err := classZoneParameters(req.Class)
	if err != nil {
		return nil, err
	}
	if params.hasZone && params.hasZones {
		return nil, fmt.Errorf("%w: %s: zone and zones parameters must not be used together", ErrInvalidClass, className(req.Class))
	}

	var nodeZone string
	if node := req.SelectedNode; node != nil {
		if params.hasZone || params.hasZones {
			return nil, fmt.Errorf("%w: %s: zone and zones parameters cannot be used with delayed binding (selected node %q); use allowedTopologies",
				ErrInvalidClass, className(req.Class), node.Name)
		}
		z, ok := NodeZone(node)
		if !ok {
			return nil, fmt.Errorf("%w: selected node %q has neither %s nor %s label", ErrNoZones, node.Name, ZoneLabel, BetaZoneLabel)
		}
		if z == "" {
			return nil, fmt.Errorf("%w: selected node %q has an empty zone label", ErrNoZones, node.Name)
		}
		if replicas == 1 {
			return sets.New(z), nil
		}
		nodeZone = z
	}

	if req.Class != nil && len(req.Class.AllowedTopologies) > 0 {
		allowed, err := ZonesFromAllowedTopologies(req.Class.AllowedTopologies)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", className(req.Class), err)
		}
		if allowed.Len() == 0 {
			return nil, fmt.Errorf("%w: %s: allowedTopologies name no %s values", ErrInvalidClass, className(req.Class), ZoneLabel)
		}
		if params.hasZone || params.hasZones {
			return nil, fmt.Errorf("%w: %s: zone and zones parameters cannot be used with allowedTopologies", ErrInvalidClass, className(req.Class))
		}
		zs, err := chooseIncluding(allowed, req.ClaimName, nodeZone, replicas)
		if err != nil {
			return nil, fmt.Errorf("%s allowedTopologies: %w", className(req.Class), err)
		}
		return zs, nil
	}

	if params.hasZone {
		if replicas > 1 {
			return nil, fmt.Errorf("%w: %s: the zone parameter allows 1 replica, want %d; use zones or allowedTopologies",
				ErrInvalidClass, className(req.Class), replicas)
		}
		return sets.New(params.zone), nil
	}
	if params.hasZones {
		if uint32(params.zones.Len()) < replicas {
			return nil, fmt.Errorf("%w: %s: zones parameter lists %d zone(s), want %d replicas",
				ErrNoZones, className(req.Class), params.zones.Len(), replicas)
		}
		return ChooseZones(params.zones, req.ClaimName, replicas)
	}

	if req.ZonesWithNodes.Len() > 0 {
		zs, err := chooseIncluding(req.ZonesWithNodes, req.ClaimName, nodeZone, replicas)
		if err != nil {
			return nil, fmt.Errorf("zones with nodes: %w", err)
		}
		return zs, nil
	}
	return nil, fmt.Errorf("%w: no zone has nodes and %s names no zones", ErrNoZones, className(req.Class))
}

// SelectZone is SelectZones for a single-zone volume (req.Replicas is
// ignored), as cloud-provider's SelectZoneForVolume.
func SelectZone(req Request) (string, error) {
	req.Replicas = 1
	zs, err := SelectZones(req)
	if err != nil {
		return "", err
	}
	for z := range zs {
		return z, nil
	}
	return "", fmt.Errorf("select zone for claim %q: %w", req.ClaimName, ErrNoZones)
}

// ZonesFromAllowedTopologies returns the zones allowed by a StorageClass's
// allowedTopologies: every value of every expression, all terms together.
// As cloud-provider's helper of the same name, only the GA and beta zone
// keys are supported; any other key gives an error wrapping ErrInvalidClass.
func ZonesFromAllowedTopologies(terms []v1.TopologySelectorTerm) (sets.Set[string], error) {
	zs := sets.New[string]()
	for i, term := range terms {
		for _, e := range term.MatchLabelExpressions {
			if !IsZoneKey(e.Key) {
				return nil, fmt.Errorf("%w: allowedTopologies[%d]: unsupported key %q (want %s or %s)",
					ErrInvalidClass, i, e.Key, ZoneLabel, BetaZoneLabel)
			}
			zs.Insert(e.Values...)
		}
	}
	return zs, nil
}

// chooseIncluding chooses replicas zones from zones, always including
// include when it is not empty (it must then be one of zones), as the
// helper's chooseZonesForVolumeIncludingZone but without modifying zones.
func chooseIncluding(zones sets.Set[string], pvcName, include string, replicas uint32) (sets.Set[string], error) {
	if uint32(zones.Len()) < replicas {
		return nil, fmt.Errorf("%w: %d zone(s) %q for %d replicas", ErrNoZones, zones.Len(), FormatZones(zones), replicas)
	}
	if include != "" && !zones.Has(include) {
		return nil, fmt.Errorf("%w: selected node's zone %q is not one of %q", ErrNoZones, include, FormatZones(zones))
	}
	if uint32(zones.Len()) == replicas {
		return zones.Clone(), nil
	}
	if include == "" {
		return ChooseZones(zones, pvcName, replicas)
	}
	rest := zones.Clone().Delete(include)
	chosen, err := ChooseZones(rest, pvcName, replicas-1)
	if err != nil {
		return nil, err
	}
	return chosen.Insert(include), nil
}

// zoneParameters are the zone settings of a StorageClass.
type zoneParameters struct {
	zone              string
	zones             sets.Set[string]
	hasZone, hasZones bool
}

// classZoneParameters reads the "zone" and "zones" parameters of class
// (keys case-insensitive, as the in-tree provisioners read them).
func classZoneParameters(class *storagev1.StorageClass) (zoneParameters, error) {
	var p zoneParameters
	if class == nil {
		return p, nil
	}
	var zoneKey, zonesKey string
	for k, v := range class.Parameters {
		switch strings.ToLower(k) {
		case "zone":
			if p.hasZone {
				return p, fmt.Errorf("%w: %s: parameters %q and %q both set the zone", ErrInvalidClass, className(class), zoneKey, k)
			}
			if err := checkZone(v); err != nil {
				return p, fmt.Errorf("%w: %s: parameter %s=%q: zone %s", ErrInvalidClass, className(class), k, v, err.Error())
			}
			p.zone, p.hasZone, zoneKey = v, true, k
		case "zones":
			if p.hasZones {
				return p, fmt.Errorf("%w: %s: parameters %q and %q both set the zones", ErrInvalidClass, className(class), zonesKey, k)
			}
			zs, err := parseZoneList(v)
			if err != nil {
				return p, fmt.Errorf("%w: %s: parameter %s: %w", ErrInvalidClass, className(class), k, err)
			}
			p.zones, p.hasZones, zonesKey = zs, true, k
		}
	}
	return p, nil
}

// parseZoneList parses a comma-separated zone list, trimming spaces around
// each zone, as cloud-provider's ZonesToSet.
func parseZoneList(value string) (sets.Set[string], error) {
	zs := sets.New[string]()
	for i, elem := range strings.Split(value, ",") {
		z := strings.TrimSpace(elem)
		if err := checkZone(z); err != nil {
			return nil, fmt.Errorf("%w: zone list %q: element %d %q %s", ErrInvalidZones, value, i, z, err.Error())
		}
		zs.Insert(z)
	}
	return zs, nil
}

func className(class *storagev1.StorageClass) string {
	if class == nil {
		return "no StorageClass"
	}
	return fmt.Sprintf("StorageClass %q", class.Name)
}
