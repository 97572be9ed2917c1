package zones

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// topologyKeys are the volume labels checked against node labels, in the
// order Kubernetes' VolumeZone scheduler plugin checks them.
var topologyKeys = [...]string{BetaZoneLabel, BetaRegionLabel, ZoneLabel, RegionLabel}

// compiledPlacement is a volume's parsed placement. It is immutable once built and
// shared between goroutines by Matcher.
type compiledPlacement struct {
	// labels are the zone and region label requirements (all must hold).
	labels []labelRequirement
	// selector is the parsed spec.nodeAffinity.required, or nil.
	selector *nodeaffinity.LazyErrorNodeSelector
	// hasFields is true when some term uses matchFields.
	hasFields bool
	// err is the reason the placement cannot be evaluated, or nil.
	err error
}

// labelRequirement says that the node's label key (or, when absent, its
// GA/beta counterpart alt) must hold one of values.
type labelRequirement struct {
	key, alt string
	values   sets.Set[string]
}

// parsePlacement parses the zone/region labels and node affinity of pv.
func parsePlacement(pv *v1.PersistentVolume) *compiledPlacement {
	p := &compiledPlacement{}
	for _, key := range topologyKeys {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		if alt := otherKey(key); key != ZoneLabel && key != RegionLabel {
			// A beta label equal to its GA label adds nothing.
			if gaValue, ok := pv.Labels[alt]; ok && gaValue == value {
				continue
			}
		}
		values, err := ParseZones(value)
		if err != nil {
			p.err = fmt.Errorf("%w: volume %q: label %s: %w", ErrInvalidPlacement, pv.Name, key, err)
			return p
		}
		p.labels = append(p.labels, labelRequirement{key: key, alt: otherKey(key), values: values})
	}
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		p.selector = nodeaffinity.NewLazyErrorNodeSelector(na.Required)
		for i := range na.Required.NodeSelectorTerms {
			if len(na.Required.NodeSelectorTerms[i].MatchFields) > 0 {
				p.hasFields = true
			}
		}
	}
	return p
}

// matches evaluates the placement against node; name names the volume in
// errors.
func (p *compiledPlacement) matches(name string, node *v1.Node) (bool, error) {
	if p.err != nil {
		return false, p.err
	}
	if len(p.labels) > 0 && hasTopologyLabel(node) {
		for i := range p.labels {
			r := &p.labels[i]
			v, ok := node.Labels[r.key]
			if !ok {
				v, ok = node.Labels[r.alt]
			}
			if !ok || !r.values.Has(v) {
				return false, nil
			}
		}
	}
	if p.selector == nil {
		return true, nil
	}
	n := node
	if p.hasFields && node.Name != "" {
		// As CheckNodeAffinity: terms are evaluated against the node's
		// labels only, so matchFields never excludes a node.
		n = &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: node.Labels}}
	}
	ok, err := p.selector.Match(n)
	if err != nil {
		return false, fmt.Errorf("%w: volume %q: spec.nodeAffinity: %w", ErrInvalidPlacement, name, err)
	}
	return ok, nil
}

// hasTopologyLabel reports whether the node carries any zone or region
// label. Kubernetes lets volumes with zone labels use nodes without any, for
// single-zone clusters whose nodes are not labelled.
func hasTopologyLabel(node *v1.Node) bool {
	for _, key := range topologyKeys {
		if _, ok := node.Labels[key]; ok {
			return true
		}
	}
	return false
}

// Matches reports whether node satisfies the placement of pv, parsing the
// placement on every call (see Matcher for a cached version). Both must hold:
//
//   - Zone and region labels: for each of the volume's zone and region labels
//     (GA and beta), the node's label with the same key, or with its GA/beta
//     counterpart when absent, must be one of the volume's values (a
//     multi-zone value matches any of its zones). A node with no zone or
//     region label at all passes this check, as in Kubernetes' VolumeZone
//     scheduler plugin. Two deliberate differences from that plugin: it
//     falls back only from a beta key to the GA key, where Matches also
//     accepts a node that carries only the beta label for a volume's GA
//     label; and it ignores a label value it cannot parse, where Matches
//     reports it.
//   - spec.nodeAffinity.required, evaluated with k8s.io/component-helpers
//     against the node's labels exactly as CheckNodeAffinity does (all
//     operators; matchFields are not evaluated; a term that fails to parse
//     is skipped and its error returned only when no other term matches).
//
// A volume without labels or node affinity matches every node. Matches
// returns (false, nil) for a node that does not match and an error wrapping
// ErrInvalidPlacement when the placement cannot be evaluated (an invalid zone
// label value, or only unparsable node-affinity terms), or ErrNilObject for a
// nil argument. It does not modify its arguments.
func Matches(pv *v1.PersistentVolume, node *v1.Node) (bool, error) {
	if err := checkArgs(pv, node); err != nil {
		return false, err
	}
	return parsePlacement(pv).matches(pv.Name, node)
}

func checkArgs(pv *v1.PersistentVolume, node *v1.Node) error {
	if pv == nil {
		return fmt.Errorf("%w: volume is nil", ErrNilObject)
	}
	if node == nil {
		return fmt.Errorf("%w: node is nil (volume %q)", ErrNilObject, pv.Name)
	}
	return nil
}
