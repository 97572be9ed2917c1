package binder

import (
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/cache"
)

// ownWrites holds back the queueing of the events that arrive while the
// Binder is updating the same volume or claim, until the update has
// answered.
//
// The Binder keeps the answer to its own update in its caches; the event
// of that version then finds nothing newer and queues nothing. An API that
// delivers the event before it answers (bindertest's synchronous events, or
// an informer that wins the race with the answer) made the event store the
// version first and queue a sync of it: a second sync of the claim that had
// just bound, and a sync of its volume, each finding nothing to do — two of
// every binding's three syncs in BenchmarkBinderBindAll. While an update of
// a key is in flight, its events store their version as before but only
// count here; when the update answers, end tells the writer whether the
// one event seen was that of its own write (the writer reports the version
// to the Observer, as when it stores its answer itself) or whether the key
// must be queued, as the events would have: after a failed write, after
// several events, or after one of another version.
type ownWrites struct {
	// inFlight counts the updates between begin and end, so that events
	// skip the lock while there are none.
	inFlight atomic.Int32
	mu       sync.Mutex
	// writes holds the keys being updated; it holds at most one entry per
	// worker and operation writing at once.
	writes smallMap[ownKey, ownWrite]
}

// ownKey names a volume (namespace empty) or a claim without building its
// queue key.
type ownKey struct {
	kind            queueKind
	namespace, name string
}

func ownVolume(pv *v1.PersistentVolume) ownKey {
	return ownKey{kind: volumeQueue, name: pv.Name}
}

func ownClaim(pvc *v1.PersistentVolumeClaim) ownKey {
	return ownKey{kind: claimQueue, namespace: pvc.Namespace, name: pvc.Name}
}

// work returns k's queue key.
func (k ownKey) work() workKey {
	if k.kind == volumeQueue {
		return volumeWork(k.name)
	}
	return claimWork(cache.ClaimKey(k.namespace, k.name))
}

// ownUpdate is one of the Binder's updates in flight, from beginUpdate to
// settle.
type ownUpdate struct {
	b *Binder
	k ownKey
	// sent is the resourceVersion the update was sent with, read before
	// the API could change the object it was given.
	sent  string
	ended bool
}

// beginUpdate marks k as being updated from version sent. The writer
// defers abandon, and calls settle once the API has answered.
func (b *Binder) beginUpdate(k ownKey, sent string) ownUpdate {
	b.own.begin(k)
	return ownUpdate{b: b, k: k, sent: sent}
}

// settle ends the update, which answered version if ok, and does what
// the events counted meanwhile call for: it reports answer (the version
// written, nil after a failure) to the Observer when the one event was the
// answer's own, and queues the key when anything else came.
func (u *ownUpdate) settle(ok bool, answer metav1.Object) {
	u.ended = true
	version := ""
	if ok {
		version = answer.GetResourceVersion()
	}
	switch u.b.own.end(u.k, ok, version) {
	case ownAnswer:
		u.b.observe(answer) // the event stored it before the writer
	case ownQueue:
		u.b.work.add(u.k.work())
	}
}

// abandon ends an update whose API call panicked (an operation's panic is
// recovered by operations.Map): the key is queued, as the events the call
// let through would have queued it, and no longer held back.
func (u *ownUpdate) abandon() {
	if !u.ended {
		u.ended = true
		u.b.own.end(u.k, false, "")
		u.b.work.add(u.k.work())
	}
}

// ownWrite is the state of one key being updated.
type ownWrite struct {
	// writers counts the updates of the key in flight (one, unless an
	// operation and a sync write it at once).
	writers int
	// events counts the events that stored a newer version of the key
	// meanwhile, and version is the resourceVersion of the last of them.
	events  int
	version string
}

// ownOutcome is what the writer does once its update has answered.
type ownOutcome uint8

const (
	// ownNone: no event came during the update.
	ownNone ownOutcome = iota
	// ownAnswer: the one event that came carried the answer's version;
	// nothing is queued and the writer reports the version as acted on.
	ownAnswer
	// ownQueue: the key is queued, as the events would have queued it.
	ownQueue
)

func newOwnWrites() *ownWrites {
	return &ownWrites{}
}

// begin marks k as being updated until the matching end.
func (o *ownWrites) begin(k ownKey) {
	o.inFlight.Add(1)
	o.mu.Lock()
	o.writes.add(k).writers++
	o.mu.Unlock()
}

// event reports whether k is being updated, and if so counts the event of
// version, which then queues nothing itself: end decides.
func (o *ownWrites) event(k ownKey, version string) bool {
	if o.inFlight.Load() == 0 {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.writes.find(k)
	if w == nil {
		return false
	}
	w.events++
	w.version = version
	return true
}

// end ends one update of k, which answered with version when ok, and
// returns what the writer must do about the events counted meanwhile
// (which end forgets: another writer of k still in flight sees only later
// ones).
func (o *ownWrites) end(k ownKey, ok bool, version string) ownOutcome {
	o.mu.Lock()
	var events int
	var last string
	if w := o.writes.find(k); w != nil {
		events, last = w.events, w.version
		w.writers--
		w.events, w.version = 0, ""
		if w.writers <= 0 {
			o.writes.remove(k)
		}
	}
	o.mu.Unlock()
	o.inFlight.Add(-1)
	switch {
	case events == 0:
		return ownNone
	case ok && events == 1 && last == version:
		return ownAnswer
	default:
		return ownQueue
	}
}
