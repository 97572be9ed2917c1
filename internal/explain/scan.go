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
	// once the controller makes them Available (PV controller only).
	futures []future
	// preboundSeen: a volume pre-bound to the claim that passes every
	// rule but node affinity was met (the first decides kube-scheduler's
	// search).
	preboundSeen bool
}

type future struct {
	v      *volumeInfo
	reason string
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
	sr := &scanResult{e: e, m: m, d: &detailer{m: m}}
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
	if rule == Fits && (d.smallest == nil || v.capacity.Cmp(d.smallest.capacity) < 0) {
		d.smallest = v
	}
	if m.node != nil && !sr.preboundSeen && (rule == Fits || rule == NodeAffinity) && m.preboundTo(v.pv) {
		// Volumes are scanned by name: this is the pre-bound volume that
		// decides kube-scheduler's search.
		sr.preboundSeen = true
		if rule == NodeAffinity {
			d.decider = v
		}
	}
	if m.scheduler || (rule != NotAvailable && rule != BoundElsewhere) {
		return
	}
	if v.class != m.class || v.pv.DeletionTimestamp != nil || m.checkSpec(v) != Fits {
		return
	}
	if reason := sr.e.futureReason(v); reason != "" {
		sr.futures = append(sr.futures, future{v: v, reason: reason})
	}
}

// futureReason says why the controller makes v, which is no candidate
// now, Available soon, or "" when it does not.
func (e *Explainer) futureReason(v *volumeInfo) string {
	pv := v.pv
	ref := pv.Spec.ClaimRef
	if ref == nil {
		return fmt.Sprintf("%s is not Available yet (phase %s): the controller marks it Available at its next sync",
			pv.Name, phaseText(pv.Status.Phase))
	}
	if ref.UID == "" {
		return ""
	}
	key := ref.Namespace + "/" + ref.Name
	c := e.claims[key]
	if c != nil && c.UID == ref.UID {
		if c.Spec.VolumeName != "" && c.Spec.VolumeName != pv.Name && metav1.HasAnnotation(pv.ObjectMeta, volume.AnnBoundByController) {
			return fmt.Sprintf("%s is bound by the controller to claim %s, which asks for volume %s: the controller rolls that binding back and makes %s Available",
				pv.Name, key, c.Spec.VolumeName, pv.Name)
		}
		return ""
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimRecycle && !e.cfg.NoRecycling &&
		metav1.HasAnnotation(pv.ObjectMeta, volume.AnnBoundByController) {
		// Once scrubbed, the controller drops the claimRef it wrote.
		return fmt.Sprintf("%s is released (its claim %s is gone) and its reclaim policy Recycle makes it Available again once scrubbed",
			pv.Name, key)
	}
	return ""
}

// alternatives returns the futures the controller would prefer to best
// (all of them when best is nil), in its order of preference.
func (sr *scanResult) alternatives(best *v1.PersistentVolume) []Alternative {
	key := func(v *volumeInfo) [2]int64 {
		pre := int64(1)
		if sr.m.preboundTo(v.pv) {
			pre = 0
		}
		return [2]int64{int64(v.modes.rank())*2 + pre, 0}
	}
	before := func(a, b *volumeInfo) int {
		ka, kb := key(a), key(b)
		if c := cmp.Compare(ka[0], kb[0]); c != 0 {
			return c
		}
		if c := a.capacity.Cmp(b.capacity); c != 0 {
			return c
		}
		return strings.Compare(a.pv.Name, b.pv.Name)
	}
	var b *volumeInfo
	if best != nil {
		b = sr.e.volumeByName[best.Name]
	}
	var keep []future
	for _, f := range sr.futures {
		if b == nil || before(f.v, b) < 0 {
			keep = append(keep, f)
		}
	}
	slices.SortFunc(keep, func(x, y future) int { return before(x.v, y.v) })
	out := make([]Alternative, 0, len(keep))
	for _, f := range keep {
		out = append(out, Alternative{Volume: f.v.pv.Name, Reason: f.reason})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
