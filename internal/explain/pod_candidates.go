package explain

import (
	v1 "k8s.io/api/core/v1"

	"github.com/volbind/volbind/cache"
)

// nodeCandidates lists, per claim and node, the volumes closest to fitting
// the claim there. The part of a claim's scan that does not depend on the
// node is done once per claim: only the volumes that pass every other
// rule are checked again on each node.
type nodeCandidates struct {
	e       *Explainer
	max     int
	byClaim map[string]*claimScan
}

// claimScan is the node-independent scan of one claim with
// kube-scheduler's rules.
type claimScan struct {
	m *matcher
	// rest holds the volumes that fail a rule other than node affinity.
	rest scan
	// survivors pass every rule but node affinity, in name order.
	survivors []*volumeInfo
}

func (nc *nodeCandidates) scanFor(pvc *v1.PersistentVolumeClaim) *claimScan {
	key := cache.Key(pvc)
	if cs := nc.byClaim[key]; cs != nil {
		return cs
	}
	m := newMatcher(pvc, true, nil, false)
	cs := &claimScan{m: m, rest: scan{m: m, max: nc.max}}
	for i := range nc.e.volumes {
		v := &nc.e.volumes[i]
		if rule := m.check(v); rule != Fits {
			cs.rest.addChecked(v, rule)
		} else {
			cs.survivors = append(cs.survivors, v)
		}
	}
	cs.rest.finish()
	nc.byClaim[key] = cs
	return cs
}

// on returns the candidates of pvc on node, when the volumes in exclude
// (volume name to claim) are chosen for the pod's other claims, and the
// count of the others by rule.
func (nc *nodeCandidates) on(pvc *v1.PersistentVolumeClaim, node *v1.Node, exclude map[string]string) ([]Candidate, []RuleCount) {
	cs := nc.scanFor(pvc)
	m := *cs.m
	m.node = node
	sr := &scanResult{e: nc.e, m: &m, d: &detailer{e: nc.e, m: &m}}
	s := &scan{m: &m, max: nc.max, exclude: exclude, counts: cs.rest.counts, watch: sr.watch}
	for _, r := range cs.rest.top {
		s.keep(r)
	}
	for _, v := range cs.survivors {
		s.add(v)
	}
	s.finish()
	return s.candidates(sr.d), s.more()
}
