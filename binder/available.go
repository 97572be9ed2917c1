package binder

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/internal/pvindex"
)

// Holding back the Available phase (Config.AvailableDelay).
//
// A claim whose sync found no volume (its volume was not seen yet) is woken
// by the first new volume it fits, one claim per volume, rather than at its
// next resync, so that it does not find that volume already marked.
//
// Kubernetes marks every new unbound volume Available at its first sync and
// binds claims only to Available volumes, so each statically provisioned
// volume costs five writes: Available, then the four of the binding. With
// AvailableDelay set, the Binder's index also offers volumes whose phase is
// still empty or Pending to claims, and a volume sync holds the Available
// write back: for AvailableDelay after it first saw the volume (its claim
// may be a moment behind it), and then for as long as a claim waiting in
// the claim queue might take it. A volume that a claim takes is bound with
// four writes; only a volume that no waiting claim takes is marked.
//
// The claim-side race Kubernetes avoids by skipping unmarked volumes is
// excluded here by the volume lock: the Available write and the claimRef
// write of one volume never run at once, and each starts from the version
// the other left in the store.

// waitingClaim is what holds remembers of a claim in the claim queue.
type waitingClaim struct {
	group   pvindex.Group
	request int64 // bytes, rounded up
	// volumeName is the volume the claim asks for by name; empty for a
	// claim that takes the best match.
	volumeName string
}

// holds tracks the volumes whose Available write is held back and the
// claims that are queued or being synced and might still take one.
type holds struct {
	mu sync.Mutex
	// since is when each held volume was first held.
	since map[string]time.Time
	// claims holds the waiting claims by key; sizes counts them by group
	// and request, byVolume by the volume they ask for.
	claims   map[string]waitingClaim
	sizes    map[pvindex.Group]map[int64]int
	byVolume map[string]int
	// unmatched holds, by group and in the order they were found, the
	// claims whose last sync found no volume; a new volume wakes the first
	// one it fits (one volume serves one claim), instead of letting it wait
	// for its resync.
	unmatched map[pvindex.Group][]unmatchedClaim
	// unmatchedGroup is the group each unmatched claim is listed under.
	unmatchedGroup map[string]pvindex.Group
}

// unmatchedClaim is a claim whose last sync found no volume.
type unmatchedClaim struct {
	key     string
	request int64
}

func newHolds() *holds {
	return &holds{
		since:     make(map[string]time.Time),
		claims:    make(map[string]waitingClaim),
		sizes:     make(map[pvindex.Group]map[int64]int),
		byVolume:  make(map[string]int),
		unmatched: make(map[pvindex.Group][]unmatchedClaim),

		unmatchedGroup: make(map[string]pvindex.Group),
	}
}

// claimUnmatched records that the claim's sync found no volume.
func (h *holds) claimUnmatched(key string, pvc *v1.PersistentVolumeClaim) {
	request := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	g := pvindex.ClaimGroup(pvc)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropUnmatchedLocked(key)
	h.unmatched[g] = append(h.unmatched[g], unmatchedClaim{key: key, request: request.Value()})
	h.unmatchedGroup[key] = g
}

// claimGone forgets a deleted claim.
func (h *holds) claimGone(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropUnmatchedLocked(key)
}

func (h *holds) dropUnmatchedLocked(key string) {
	g, ok := h.unmatchedGroup[key]
	if !ok {
		return
	}
	delete(h.unmatchedGroup, key)
	list := h.unmatched[g]
	for i := range list {
		if list[i].key == key {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(h.unmatched, g)
	} else {
		h.unmatched[g] = list
	}
}

// wakeLocked returns the claim a volume seen for the first time should be
// offered to: the claim it is pre-bound to, or the first unmatched claim of
// its group that it is large enough for (which is then forgotten), or "".
func (h *holds) wakeLocked(pv *v1.PersistentVolume) string {
	if ref := pv.Spec.ClaimRef; ref != nil {
		return ref.Namespace + "/" + ref.Name
	}
	g := pvindex.VolumeGroup(pv)
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	c := capacity.Value()
	for _, u := range h.unmatched[g] {
		if u.request <= c {
			h.dropUnmatchedLocked(u.key)
			return u.key
		}
	}
	return ""
}

// unmarked reports whether a volume's phase is one the Binder would mark
// Available: empty (not written yet) or Pending (new, as the API server
// creates volumes).
func unmarked(pv *v1.PersistentVolume) bool {
	return pv.Status.Phase == "" || pv.Status.Phase == v1.VolumePending
}

// holdable reports whether pv is a volume whose Available write may be held
// back: not marked yet, not being deleted, and unused or pre-bound to a
// claim without UID.
func holdable(pv *v1.PersistentVolume) bool {
	ref := pv.Spec.ClaimRef
	return unmarked(pv) && pv.DeletionTimestamp == nil && (ref == nil || ref.UID == "")
}

// waitingFor returns what holds remembers of a queued claim, and false for
// a claim that cannot take an unbound volume (gone, bound already, or of a
// WaitForFirstConsumer class).
func waitingFor(pvc *v1.PersistentVolumeClaim, delayed bool) (waitingClaim, bool) {
	if pvc == nil || delayed || metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted) {
		return waitingClaim{}, false
	}
	request := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	return waitingClaim{
		group:      pvindex.ClaimGroup(pvc),
		request:    request.Value(),
		volumeName: pvc.Spec.VolumeName,
	}, true
}

// claimQueued records that the claim with key is in the claim queue, as w
// when ok (see waitingFor); otherwise it is forgotten.
func (h *holds) claimQueued(key string, w waitingClaim, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetClaimLocked(key)
	h.dropUnmatchedLocked(key) // it searches again
	if !ok {
		return
	}
	h.claims[key] = w
	if w.volumeName != "" {
		h.byVolume[w.volumeName]++
		return
	}
	m := h.sizes[w.group]
	if m == nil {
		m = make(map[int64]int)
		h.sizes[w.group] = m
	}
	m[w.request]++
}

// claimDone forgets a claim whose sync has finished and that is not queued
// again.
func (h *holds) claimDone(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetClaimLocked(key)
}

func (h *holds) forgetClaimLocked(key string) {
	w, ok := h.claims[key]
	if !ok {
		return
	}
	delete(h.claims, key)
	if w.volumeName != "" {
		if h.byVolume[w.volumeName]--; h.byVolume[w.volumeName] <= 0 {
			delete(h.byVolume, w.volumeName)
		}
		return
	}
	m := h.sizes[w.group]
	if m[w.request]--; m[w.request] <= 0 {
		delete(m, w.request)
		if len(m) == 0 {
			delete(h.sizes, w.group)
		}
	}
}

// mayTakeLocked reports whether a waiting claim might take pv: the claim it
// is pre-bound to, a claim that asks for it by name, or a claim of its
// class, VolumeAttributesClass and volume mode that requests no more than
// its capacity (access modes and selectors are not checked: holding a
// volume a little longer than needed is harmless).
func (h *holds) mayTakeLocked(pv *v1.PersistentVolume) bool {
	if ref := pv.Spec.ClaimRef; ref != nil {
		_, ok := h.claims[ref.Namespace+"/"+ref.Name]
		return ok
	}
	if h.byVolume[pv.Name] > 0 {
		return true
	}
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	c := capacity.Value()
	for request := range h.sizes[pvindex.VolumeGroup(pv)] {
		if request <= c {
			return true
		}
	}
	return false
}

// hold decides whether the Available write of pv waits, and for how long:
// delay after the volume was first held, then delay again each time a
// waiting claim might take it. Zero means "mark it now". When the volume is
// seen for the first time, wake names a claim to queue (see wakeLocked).
func (h *holds) hold(pv *v1.PersistentVolume, now time.Time, delay time.Duration) (wait time.Duration, wake string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	since, ok := h.since[pv.Name]
	if !ok {
		h.since[pv.Name] = now
		return delay, h.wakeLocked(pv)
	}
	if left := since.Add(delay).Sub(now); left > 0 {
		return left, ""
	}
	if h.mayTakeLocked(pv) {
		return delay, ""
	}
	return 0, ""
}

// forgetVolume drops a volume that is no longer held.
func (h *holds) forgetVolume(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.since, name)
}

// reset forgets the waiting claims when Run stops (the queues are gone).
func (h *holds) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.claims)
	clear(h.sizes)
	clear(h.byVolume)
	clear(h.unmatched)
	clear(h.unmatchedGroup)
}

// holdAvailable reports whether the volume sync must not mark pv Available
// yet, and then queues pv again for when the hold may end. Without
// AvailableDelay, or for a volume that is not holdable, it reports false.
func (b *Binder) holdAvailable(ctx context.Context, pv *v1.PersistentVolume) bool {
	h := b.holds
	if h == nil {
		return false
	}
	if !holdable(pv) {
		h.forgetVolume(pv.Name)
		return false
	}
	wait, wake := h.hold(pv, b.cfg.Clock.Now(), b.cfg.AvailableDelay)
	if wake != "" {
		b.enqueueClaim(wake)
	}
	if wait <= 0 {
		return false
	}
	if v := klog.FromContext(ctx).V(4); v.Enabled() {
		v.Info("Holding back the Available phase of a new volume", "volumeName", pv.Name, "for", wait)
	}
	if rs := b.running.Load(); rs != nil {
		rs.volumes.AddAfter(pv.Name, wait)
	}
	return true
}

// waitingClaimOf looks up what holds will remember of the claim with key
// once it is queued. It reads the store and the classes, so callers do it
// before they take b.mu.
func (b *Binder) waitingClaimOf(key string) (waitingClaim, bool) {
	pvc, ok := b.store.claim(key)
	if !ok {
		return waitingClaim{}, false
	}
	delayed, err := b.classes.delayBinding(pvc)
	return waitingFor(pvc, err == nil && delayed)
}
