package zones

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Placement is where a new volume lives: the zones it can be used from and
// its region. It is the input of LabelVolume.
type Placement struct {
	// Zones are the volume's zones: one for a zonal disk, several for a
	// regional (replicated) disk. It may be empty only when Region is set.
	// Not modified.
	Zones sets.Set[string]
	// Region is the volume's region, or "" to write no region.
	Region string
	// WriteBeta also writes the deprecated beta labels
	// (failure-domain.beta.kubernetes.io/zone and /region) for consumers
	// that read only those. Default false: only the GA labels are written.
	// Node affinity always uses the GA keys, which every node has carried
	// since Kubernetes 1.17.
	WriteBeta bool
}

// labelsField is the ConflictError.Field of label conflicts.
const labelsField = "metadata.labels"

// LabelVolume returns a copy of pv carrying placement p, as the
// PersistentVolumeLabel admission plugin labelled new EBS volumes and GCE
// PDs:
//
//   - Labels: topology.kubernetes.io/zone is set to the zones (a sorted
//     multi-zone value such as "zone-a__zone-b" when there are several) and
//     topology.kubernetes.io/region to the region; the beta labels too when
//     p.WriteBeta is set.
//   - spec.nodeAffinity.required: every node selector term gets the
//     requirements "topology.kubernetes.io/zone In <zones>" and
//     "topology.kubernetes.io/region In <region>" (terms are ORed, so each
//     must carry them); a volume without terms gets one term with them.
//     Requirements a term already has are not added again and identical
//     terms are merged, so LabelVolume is idempotent.
//
// Existing placement must agree with p: a zone label (GA or beta, whether
// or not p.WriteBeta is set) naming other zones, a region label naming
// another region, or a node-affinity expression on a zone or region key
// that is not exactly the requirement above gives a *ConflictError (which
// matches ErrConflict) naming the field, the existing and the wanted value.
// Unlike the admission plugin, which silently replaced labels and skipped
// its node affinity, LabelVolume never overwrites or drops a constraint.
//
// An invalid placement (no zones and no region, a zone or region that is
// not a valid label value) gives an error wrapping ErrInvalidZones, a nil
// pv ErrNilObject. pv and p are not modified; the result is a new object
// owned by the caller.
func LabelVolume(pv *v1.PersistentVolume, p Placement) (*v1.PersistentVolume, error) {
	if pv == nil {
		return nil, fmt.Errorf("%w: volume is nil", ErrNilObject)
	}
	wants, err := placementRequirements(p)
	if err != nil {
		return nil, fmt.Errorf("zones: label volume %q: %w", pv.Name, err)
	}
	if err := checkLabels(pv, wants); err != nil {
		return nil, err
	}
	if err := checkAffinity(pv, wants); err != nil {
		return nil, err
	}

	out := pv.DeepCopy()
	if out.Labels == nil {
		out.Labels = make(map[string]string, 4)
	}
	for _, w := range wants {
		out.Labels[w.key] = w.label
		if p.WriteBeta {
			out.Labels[otherKey(w.key)] = w.label
		}
	}
	addAffinity(out, wants)
	return out, nil
}

// requirement is one placement constraint: the GA key, its label value and
// its node-affinity values (sorted).
type requirement struct {
	key    string
	label  string
	values sets.Set[string]
}

// placementRequirements validates p and returns its zone and region
// requirements, zone first.
func placementRequirements(p Placement) ([]requirement, error) {
	if p.Zones.Len() == 0 && p.Region == "" {
		return nil, fmt.Errorf("%w: placement names no zone and no region", ErrInvalidZones)
	}
	var wants []requirement
	if p.Zones.Len() > 0 {
		if err := ValidateZones(p.Zones); err != nil {
			return nil, err
		}
		wants = append(wants, requirement{key: ZoneLabel, label: FormatZones(p.Zones), values: p.Zones})
	}
	if p.Region != "" {
		if err := checkZone(p.Region); err != nil {
			return nil, fmt.Errorf("%w: region %q %s", ErrInvalidZones, p.Region, err.Error())
		}
		wants = append(wants, requirement{key: RegionLabel, label: p.Region, values: sets.New(p.Region)})
	}
	return wants, nil
}

// checkLabels returns a *ConflictError when a GA or beta label of pv
// disagrees with a requirement.
func checkLabels(pv *v1.PersistentVolume, wants []requirement) error {
	for _, w := range wants {
		for _, key := range [...]string{w.key, otherKey(w.key)} {
			existing, ok := pv.Labels[key]
			if !ok {
				continue
			}
			if got, err := ParseZones(existing); err != nil || !got.Equal(w.values) {
				return &ConflictError{Volume: pv.Name, Field: labelsField, Key: key, Existing: existing, Wanted: w.label}
			}
		}
	}
	return nil
}

// checkAffinity returns a *ConflictError when a node-affinity expression of
// pv on a zone or region key is not exactly the requirement for that key.
func checkAffinity(pv *v1.PersistentVolume, wants []requirement) error {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil {
		return nil
	}
	for i, term := range na.Required.NodeSelectorTerms {
		for j, e := range term.MatchExpressions {
			for _, w := range wants {
				if e.Key != w.key && e.Key != otherKey(w.key) {
					continue
				}
				if !isRequirement(e, w) {
					return &ConflictError{
						Volume:   pv.Name,
						Field:    fmt.Sprintf("spec.nodeAffinity.required.nodeSelectorTerms[%d].matchExpressions[%d]", i, j),
						Key:      e.Key,
						Existing: formatExpression(e),
						Wanted:   formatExpression(w.expression()),
					}
				}
			}
		}
	}
	return nil
}

// isRequirement reports whether e states requirement w (on w's GA key or
// its beta counterpart).
func isRequirement(e v1.NodeSelectorRequirement, w requirement) bool {
	if e.Operator != v1.NodeSelectorOpIn || len(e.Values) < w.values.Len() {
		return false
	}
	for _, v := range e.Values {
		if !w.values.Has(v) {
			return false
		}
	}
	return sets.New(e.Values...).Len() == w.values.Len()
}

// expression returns the node-affinity requirement for w.
func (w requirement) expression() v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: w.key, Operator: v1.NodeSelectorOpIn, Values: sets.List(w.values)}
}

// formatExpression formats e for an error message: "In [a b]".
func formatExpression(e v1.NodeSelectorRequirement) string {
	return string(e.Operator) + " [" + strings.Join(e.Values, " ") + "]"
}

// addAffinity adds the requirements to every node selector term of pv,
// creating one term when there is none, and merges identical terms. pv is
// a copy owned by LabelVolume.
func addAffinity(pv *v1.PersistentVolume, wants []requirement) {
	if pv.Spec.NodeAffinity == nil {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{}
	}
	na := pv.Spec.NodeAffinity
	if na.Required == nil {
		na.Required = &v1.NodeSelector{}
	}
	if len(na.Required.NodeSelectorTerms) == 0 {
		// API validation requires at least one term; an empty list is
		// treated as no node affinity, as the admission plugin did.
		na.Required.NodeSelectorTerms = make([]v1.NodeSelectorTerm, 1)
	}
	terms := na.Required.NodeSelectorTerms
	for i := range terms {
		for _, w := range wants {
			if !hasKey(terms[i].MatchExpressions, w.key) {
				terms[i].MatchExpressions = append(terms[i].MatchExpressions, w.expression())
			}
		}
	}
	na.Required.NodeSelectorTerms = dedupTerms(terms)
}

// hasKey reports whether exprs has an expression on key or on its GA/beta
// counterpart. checkAffinity has made sure such an expression states the
// wanted requirement.
func hasKey(exprs []v1.NodeSelectorRequirement, key string) bool {
	for _, e := range exprs {
		if e.Key == key || e.Key == otherKey(key) {
			return true
		}
	}
	return false
}

// dedupTerms drops terms equivalent to an earlier one, keeping the order.
// Terms are ORed, so a repeated term changes nothing; two terms are
// equivalent when they hold the same requirements in any order.
func dedupTerms(terms []v1.NodeSelectorTerm) []v1.NodeSelectorTerm {
	seen := make(sets.Set[string], len(terms))
	out := terms[:0]
	for _, t := range terms {
		key := termKey(t)
		if seen.Has(key) {
			continue
		}
		seen.Insert(key)
		out = append(out, t)
	}
	return out
}

// termKey returns a canonical form of t: its expressions and fields, each
// with sorted, distinct values, sorted.
func termKey(t v1.NodeSelectorTerm) string {
	reqs := func(kind string, rs []v1.NodeSelectorRequirement) []string {
		out := make([]string, 0, len(rs))
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s%q%q%q", kind, r.Key, r.Operator, sets.List(sets.New(r.Values...))))
		}
		return out
	}
	parts := append(reqs("e", t.MatchExpressions), reqs("f", t.MatchFields)...)
	slices.Sort(parts)
	parts = slices.Compact(parts)
	return strings.Join(parts, ",")
}
