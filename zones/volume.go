package zones

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// VolumeZones returns the zones a volume can be used from, read from its
// zone labels (GA and beta, multi-zone values allowed) and from the In
// expressions on zone keys in its spec.nodeAffinity required terms.
//
// Within one term, several zone In expressions intersect; across terms the
// zones add up. A non-empty term without a zone In expression (for example
// one that only uses NotIn on the zone key, or does not mention zones) does
// not limit zones, so the node affinity then contributes nothing. When both
// labels and node affinity name zones the result is their intersection.
//
// A volume without zone placement gives an empty set. Unparsable labels, GA
// and beta labels naming different zones, or labels and node affinity with no
// zone in common give an error wrapping ErrInvalidPlacement. The returned set
// is new and owned by the caller.
func VolumeZones(pv *v1.PersistentVolume) (sets.Set[string], error) {
	if pv == nil {
		return nil, fmt.Errorf("%w: volume is nil", ErrNilObject)
	}
	fromLabels, err := labelZones(pv)
	if err != nil {
		return nil, err
	}
	fromAffinity := affinityZones(pv)
	switch {
	case fromLabels != nil && fromAffinity != nil:
		both := fromLabels.Intersection(fromAffinity)
		if both.Len() == 0 {
			return nil, fmt.Errorf("%w: volume %q: zone labels %q and nodeAffinity zones %q have no zone in common",
				ErrInvalidPlacement, pv.Name, FormatZones(fromLabels), FormatZones(fromAffinity))
		}
		return both, nil
	case fromLabels != nil:
		return fromLabels, nil
	case fromAffinity != nil:
		return fromAffinity, nil
	}
	return sets.New[string](), nil
}

// labelZones returns the zones named by the volume's zone labels, or nil
// when it has none.
func labelZones(pv *v1.PersistentVolume) (sets.Set[string], error) {
	var out sets.Set[string]
	var outKey string
	for _, key := range []string{ZoneLabel, BetaZoneLabel} {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		zs, err := ParseZones(value)
		if err != nil {
			return nil, fmt.Errorf("%w: volume %q: label %s: %w", ErrInvalidPlacement, pv.Name, key, err)
		}
		if out != nil && !out.Equal(zs) {
			return nil, fmt.Errorf("%w: volume %q: label %s=%q and label %s=%q name different zones",
				ErrInvalidPlacement, pv.Name, outKey, pv.Labels[outKey], key, value)
		}
		out, outKey = zs, key
	}
	return out, nil
}

// affinityZones returns the zones named by the volume's required node
// affinity, or nil when the node affinity does not limit zones.
func affinityZones(pv *v1.PersistentVolume) sets.Set[string] {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil {
		return nil
	}
	var out sets.Set[string]
	for i := range na.Required.NodeSelectorTerms {
		term := &na.Required.NodeSelectorTerms[i]
		if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
			continue // an empty term selects no node
		}
		var termZones sets.Set[string]
		for _, expr := range term.MatchExpressions {
			if !IsZoneKey(expr.Key) || expr.Operator != v1.NodeSelectorOpIn {
				continue
			}
			values := sets.New(expr.Values...)
			if termZones == nil {
				termZones = values
			} else {
				termZones = termZones.Intersection(values)
			}
		}
		if termZones == nil {
			return nil // this term allows any zone
		}
		if out == nil {
			out = sets.New[string]()
		}
		out = out.Union(termZones)
	}
	return out
}
