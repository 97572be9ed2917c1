package nodepool

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// nameField is the node field matchFields can select on.
const nameField = "metadata.name"

// groupIndex finds the groups with a given label value (or node name)
// without scanning all groups, so that pods pinned to a value (a hostname,
// a node name) cost O(1) groups each instead of O(groups). Per-key indexes
// are built on first use.
type groupIndex struct {
	groups []*nodeGroup
	byKey  map[string]map[string][]int32
}

func newGroupIndex(groups []*nodeGroup) *groupIndex {
	return &groupIndex{groups: groups, byKey: map[string]map[string][]int32{}}
}

// lookup returns the groups (in group order) whose nodes have label key
// set to value; key nameField looks up node names.
func (x *groupIndex) lookup(key, value string) []int32 {
	m, ok := x.byKey[key]
	if !ok {
		m = map[string][]int32{}
		for _, g := range x.groups {
			if key == nameField {
				for _, n := range g.nodes {
					m[n.Name] = append(m[n.Name], int32(g.idx))
				}
				continue
			}
			if v, ok := g.rep.Labels[key]; ok {
				m[v] = append(m[v], int32(g.idx))
			}
		}
		x.byKey[key] = m
	}
	return m[value]
}

// candidates returns the groups class c may fit, a superset of the groups
// it fits, in group order; all is set when the class pins nothing and every
// group is a candidate.
func (x *groupIndex) candidates(c *podClass) (cands []int32, all bool) {
	found := false
	for k, v := range c.rep.Spec.NodeSelector {
		l := x.lookup(k, v)
		if !found || len(l) < len(cands) {
			cands, found = l, true
		}
		if len(cands) == 0 {
			return nil, false
		}
	}
	if ns := requiredSelector(c.rep); ns != nil && len(ns.NodeSelectorTerms) > 0 {
		// Terms are ORed: the union of what each term pins, when every
		// term pins something.
		var union []int32
		pinned := true
		for i := range ns.NodeSelectorTerms {
			l, ok := x.termCandidates(&ns.NodeSelectorTerms[i])
			if !ok {
				pinned = false
				break
			}
			union = append(union, l...)
		}
		if pinned {
			slices.Sort(union)
			union = slices.Compact(union)
			if !found || len(union) < len(cands) {
				cands, found = union, true
			}
		}
	}
	return cands, !found
}

// termCandidates returns the groups a term may select when it pins a key to
// listed values (an In requirement on a label or on the node name).
func (x *groupIndex) termCandidates(t *v1.NodeSelectorTerm) ([]int32, bool) {
	var best []int32
	found := false
	consider := func(key string, values []string) {
		var l []int32
		for _, v := range values {
			l = append(l, x.lookup(key, v)...)
		}
		if !found || len(l) < len(best) {
			best, found = l, true
		}
	}
	for _, r := range t.MatchExpressions {
		if r.Operator == v1.NodeSelectorOpIn {
			consider(r.Key, r.Values)
		}
	}
	for _, r := range t.MatchFields {
		if r.Key == nameField && r.Operator == v1.NodeSelectorOpIn {
			consider(nameField, r.Values)
		}
	}
	return best, found
}
