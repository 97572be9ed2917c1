package explain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/internal/pvindex"
)

// scanResult is what one scan of the volumes for a claim found besides
// the candidates.
type scanResult struct {
	e *Explainer
	m *matcher
	d *detailer
	// futures are volumes that are no candidates now but fit the claim
	// once the controller makes them Available, and that it would prefer
	// to the chosen volume (PV controller only).
	futures []*volumeInfo
	// preboundSeen: a volume pre-bound to the claim that passes every
	// rule but node affinity was met (the first decides kube-scheduler's
	// search).
	preboundSeen bool
}

// scanClaim lists the candidates of an unrequested claim into x. best is
// the controller's choice. A WaitForFirstConsumer claim that the
// controller leaves to the scheduler is matched with kube-scheduler's
// rules, on node when given.
func (e *Explainer) scanClaim(x *ClaimExplanation, pvc *v1.PersistentVolumeClaim, delay bool, node *v1.Node, best *v1.PersistentVolume, max int) *scanResult {
	scheduler := delay && best == nil
	if !scheduler {
		node = nil
	}
	m := newMatcher(pvc, scheduler, node, e.cfg.UnmarkedCandidates)
	chosen := best
	if node != nil {
		// The VolumeBinder's answer: its split index answers as one index.
		chosen, _ = e.index.FindBestMatch(pvc, pvindex.FindOptions{SchedulerSearch: true, DelayBinding: true, Node: node})
	}
	sr := &scanResult{e: e, m: m, d: &detailer{e: e, m: m}}
	s := &scan{m: m, max: max, watch: sr.watch}
	if chosen != nil {
		s.chosen = chosen.Name
		sr.d.chosen = e.volumeByName[chosen.Name]
	}
	s.run(e.volumes)
	x.Candidates, x.More = s.candidates(sr.d), s.more()
	if scheduler {
		x.Search = SchedulerSearch
	}
	if node != nil {
		x.Node = node.Name
	}
	return sr
}

// watch sees every volume of the scan with the first rule it fails.
func (sr *scanResult) watch(v *volumeInfo, rule Rule) {
	m, d := sr.m, sr.d
	if rule == Fits && (d.smallest == nil || v.capacity.cmp(d.smallest.capacity) < 0) {
		d.smallest = v
	}
	if m.node != nil && !sr.preboundSeen && (rule == Fits || rule == NodeAffinity) && m.preboundTo(v) {
		// Volumes are scanned by name: this is the pre-bound volume that
		// decides kube-scheduler's search.
		sr.preboundSeen = true
		if rule == NodeAffinity {
			d.decider = v
		}
	}
	if m.scheduler || (rule != NotAvailable && rule != BoundElsewhere) || v.class != m.class || v.deleting {
		return
	}
	// Cheapest first: most volumes bound elsewhere would not be preferred
	// or do not fit anyway, and stay bound.
	if c := d.chosen; c != nil && sr.compare(v, c) >= 0 {
		return
	}
	if m.checkSpec(v) == Fits && sr.e.becomesAvailable(v) != stays {
		sr.futures = append(sr.futures, v)
	}
}

// becoming says how the controller makes a volume Available.
type becoming int

const (
	stays      becoming = iota // it does not
	marked                     // unbound: marked Available at its next sync
	rolledBack                 // its binding to a claim bound elsewhere is rolled back
	unfit                      // its binding to a claim it no longer satisfies is rolled back
	recycled                   // released, and scrubbed by the Recycle policy
)

// becomesAvailable says whether, and how, the controller makes v, which
// is no candidate now, an unbound Available volume soon.
func (e *Explainer) becomesAvailable(v *volumeInfo) becoming {
	pv := v.pv
	ref := pv.Spec.ClaimRef
	switch {
	case v.rolledBack:
		return unfit
	case ref == nil:
		return marked
	case ref.UID == "":
		return stays
	}
	c := e.claims[claimName{ref.Namespace, ref.Name}]
	byController := metav1.HasAnnotation(pv.ObjectMeta, volume.AnnBoundByController)
	if c != nil && c.UID == ref.UID {
		if c.Spec.VolumeName != "" && c.Spec.VolumeName != pv.Name && byController {
			return rolledBack
		}
		return stays
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimRecycle && !e.cfg.NoRecycling && byController {
		// Once scrubbed, the controller drops the claimRef it wrote.
		return recycled
	}
	return stays
}

// futureReason says why the controller makes v Available soon, or "" when
// it does not.
func (e *Explainer) futureReason(v *volumeInfo) string {
	pv := v.pv
	switch e.becomesAvailable(v) {
	case marked:
		return fmt.Sprintf("%s is not Available yet (phase %s): the controller marks it Available at its next sync",
			pv.Name, phaseText(pv.Status.Phase))
	case rolledBack:
		ref := pv.Spec.ClaimRef
		c := e.claims[claimName{ref.Namespace, ref.Name}]
		return fmt.Sprintf("%s is bound by the controller to claim %s/%s, which asks for volume %s: the controller rolls that binding back and makes %s Available",
			pv.Name, ref.Namespace, ref.Name, c.Spec.VolumeName, pv.Name)
	case unfit:
		ref := pv.Spec.ClaimRef
		return fmt.Sprintf("%s is bound by the controller to claim %s/%s, which it no longer satisfies: that claim's next sync rolls the binding back and makes %s Available",
			pv.Name, ref.Namespace, ref.Name, pv.Name)
	case recycled:
		ref := pv.Spec.ClaimRef
		return fmt.Sprintf("%s is released (its claim %s/%s is gone) and its reclaim policy Recycle makes it Available again once scrubbed",
			pv.Name, ref.Namespace, ref.Name)
	}
	return ""
}

// compare orders volumes as the PV controller prefers them: access-mode
// set, then a volume pre-bound to the claim, then capacity, then name.
func (sr *scanResult) compare(a, b *volumeInfo) int {
	rank := func(v *volumeInfo) int {
		r := v.modes.Rank() * 2
		if !sr.m.preboundTo(v) {
			r++
		}
		return r
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	if c := a.capacity.cmp(b.capacity); c != 0 {
		return c
	}
	return strings.Compare(a.pv.Name, b.pv.Name)
}

// alternatives returns the futures the controller would prefer to the
// chosen volume (all of them when none is chosen), in its order of
// preference.
func (sr *scanResult) alternatives() []Alternative {
	if len(sr.futures) == 0 {
		return nil
	}
	slices.SortFunc(sr.futures, sr.compare)
	out := make([]Alternative, 0, len(sr.futures))
	for _, v := range sr.futures {
		out = append(out, Alternative{Volume: v.pv.Name, Reason: sr.e.futureReason(v)})
	}
	return out
}
