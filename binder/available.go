package binder

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/cache"
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

// availability decides when a volume sync marks an unbound volume
// Available, and learns what it needs for that from the claim syncs and the
// handlers. markNow is Kubernetes' behaviour; *holds implements
// Config.AvailableDelay. All methods are safe for concurrent use.
type availability interface {
	// hold returns how long the Available write of pv must wait (zero:
	// write it now) and a claim to queue for pv, or "".
	hold(pv *v1.PersistentVolume) (wait time.Duration, wake string)
	// claimUnmatched records that the claim's sync found no volume.
	claimUnmatched(key string, pvc *v1.PersistentVolumeClaim)
	// claimGone forgets a deleted claim.
	claimGone(key string)
	// volumeGone forgets a deleted volume.
	volumeGone(name string)
}

// markNow marks every unbound volume Available at once, as Kubernetes does.
type markNow struct{}

var (
	_ availability = markNow{}
	_ availability = (*holds)(nil)
)

func (markNow) hold(*v1.PersistentVolume) (time.Duration, string) { return 0, "" }
func (markNow) claimUnmatched(string, *v1.PersistentVolumeClaim)  {}
func (markNow) claimGone(string)                                  {}
func (markNow) volumeGone(string)                                 {}

// holds tracks the volumes whose Available write is held back and the
// claims whose last sync found no volume. Whether a claim waiting in the
// claim queue might take a volume it asks the tracker (mayTake), never
// with its own lock held.
type holds struct {
	delay   time.Duration
	clock   clock.PassiveClock
	mayTake func(*v1.PersistentVolume) bool

	// mu guards the fields below.
	mu sync.Mutex
	// since is when each held volume was first held.
	since map[string]time.Time
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

// newHolds returns the holds of Config.AvailableDelay delay; mayTake
// reports whether a claim waiting in the claim queue might take a volume.
func newHolds(delay time.Duration, clk clock.PassiveClock, mayTake func(*v1.PersistentVolume) bool) *holds {
	return &holds{
		delay:          delay,
		clock:          clk,
		mayTake:        mayTake,
		since:          make(map[string]time.Time),
		unmatched:      make(map[pvindex.Group][]unmatchedClaim),
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
		return cache.ClaimKey(ref.Namespace, ref.Name)
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

// hold decides whether the Available write of pv waits, and for how long:
// the delay after the volume was first held, then the delay again each
// time a waiting claim might take it. Zero means "mark it now". When the
// volume is seen for the first time, wake names a claim to queue (see
// wakeLocked). A volume that is not holdable is forgotten and not held.
func (h *holds) hold(pv *v1.PersistentVolume) (wait time.Duration, wake string) {
	if !holdable(pv) {
		h.volumeGone(pv.Name)
		return 0, ""
	}
	now := h.clock.Now()
	h.mu.Lock()
	since, ok := h.since[pv.Name]
	if !ok {
		h.since[pv.Name] = now
		wake = h.wakeLocked(pv)
	}
	h.mu.Unlock()
	if !ok {
		return h.delay, wake
	}
	if left := since.Add(h.delay).Sub(now); left > 0 {
		return left, ""
	}
	if h.mayTake(pv) {
		return h.delay, ""
	}
	return 0, ""
}

// volumeGone drops a volume that is no longer held.
func (h *holds) volumeGone(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.since, name)
}

// holdAvailable reports whether the volume sync must not mark pv Available
// yet, and then queues pv again for when the hold may end.
func (b *Binder) holdAvailable(ctx context.Context, pv *v1.PersistentVolume) bool {
	wait, wake := b.avail.hold(pv)
	if wake != "" {
		b.work.add(claimWork(wake))
	}
	if wait <= 0 {
		return false
	}
	if v := klog.FromContext(ctx).V(4); v.Enabled() {
		v.Info("Holding back the Available phase of a new volume", "volumeName", pv.Name, "for", wait)
	}
	b.work.addAfter(volumeWork(pv.Name), wait)
	return true
}

// waitingClaimOf looks up what the tracker will remember of the claim
// with key once it is queued (the tracker's lookup with AvailableDelay).
func (b *Binder) waitingClaimOf(key string) (waitingClaim, bool) {
	pvc, ok := b.store.claim(key)
	if !ok {
		return waitingClaim{}, false
	}
	delayed, err := b.classes.delayBinding(pvc)
	return waitingFor(pvc, err == nil && delayed)
}
