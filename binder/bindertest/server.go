package bindertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/internal/dedup"
)

// optimisticLockMsg is kube-apiserver's message for a stale resourceVersion.
const optimisticLockMsg = "the object has been modified; please apply your changes to the latest version and try again"

// DefaultHistory is the number of recent events a Server keeps by default
// so that a watch may resume from a recent resourceVersion.
const DefaultHistory = 10_000

// Server is an in-memory API server for StorageClasses, Nodes,
// PersistentVolumes, PersistentVolumeClaims and Pods with the semantics of
// kube-apiserver + etcd that a volume binder depends on:
//
//   - one global resourceVersion that every committed write increases;
//   - an update or status update carrying a stale resourceVersion fails
//     with apierrors' Conflict (an empty resourceVersion updates
//     unconditionally, as PersistentVolumes and claims allow); an update
//     that changes nothing writes nothing and keeps the resourceVersion;
//   - status is a subresource: an update keeps the stored status, a status
//     update keeps the stored metadata and spec;
//   - writes are validated as kube-apiserver v1.37.2 validates them
//     (validation.go): names, required fields, quantities, access modes,
//     exactly one volume source, immutable fields (a volume's source, a
//     claim's spec but for volumeName set once, a class's parameters) and
//     the status rules; a rejected write fails with Invalid;
//   - create sets uid, creationTimestamp, resourceVersion and a name from
//     generateName, applies the API's defaults and drops the status sent;
//   - delete removes the object, or, when it has finalizers, sets
//     deletionTimestamp; the update that removes the last finalizer then
//     removes it. Pods are removed at once (there is no kubelet);
//   - NotFound, AlreadyExists, Conflict, Invalid and BadRequest errors are
//     k8s.io/apimachinery/pkg/api/errors values;
//   - changes reach event handlers (AddEventHandler) and watches (Watch,
//     ListWatch) in resourceVersion order.
//
// It implements the binder's API (binder.API) and the recycler's pod API
// (recycler.PodAPI). Objects passed in are never retained or modified;
// objects returned are deep copies that the caller owns. It counts requests
// (Stats) and can inject faults (InjectFault). All methods are safe for
// concurrent use. The zero value is not usable; use New or NewWithConfig.
type Server struct {
	clk   clock.Clock
	stats counters
	// lastNow is now's last result.
	lastNow atomic.Pointer[secondTime]

	// faultMu guards faults, armed, faultSeq and watch; numFaults (the
	// number of injected and armed faults) lets requests skip faultMu
	// when there are none.
	faultMu   sync.Mutex
	faults    []*faultState
	armed     []*faultState
	faultSeq  uint64
	numFaults atomic.Int64
	// seed and seeded come from Config.Seed.
	seed   int64
	seeded bool
	// async is Config.AsyncEvents.
	async bool
	// sharedResults is Config.SharedResults, adoptSeeds Config.AdoptSeeds.
	sharedResults, adoptSeeds bool
	// annotationKeys remembers valid annotation keys; it has its own
	// synchronization.
	annotationKeys annotationKeys

	// mu guards every field below it up to dmu. Writes hold it
	// exclusively; reads share it.
	mu sync.RWMutex
	// rv is the last resourceVersion handed out (global, like etcd's
	// revision).
	rv uint64
	// seq numbers UIDs and generated names.
	seq uint64
	// uids formats the UIDs of seq's numbers.
	uids uidBlocks
	// objs holds the stored version of each object by kind, namespace
	// and name. Stored versions are immutable.
	objs [numKinds]store
	// unvalidated holds the stored versions whose metadata and spec
	// SeedInvalid stored without validation (replaceLocked carries the
	// mark to the versions that keep them): an update of one is
	// validated in full even when its metadata does not change.
	unvalidated map[object]struct{}
	// subs are the handler subscriptions per kind. Copy on write: a
	// queued delivery keeps the slice of its commit.
	subs [numKinds][]*subscriber
	// watchers are the open watches per kind.
	watchers [numKinds][]*watcher
	// watch is the watch-fault state; nil until InjectWatchFault or
	// StallWatches.
	watch *watchFaults
	// hist keeps recent events for watches resuming from a resourceVersion.
	hist *ring
	// intern shares equal maps between stored versions (intern.go).
	intern dedup.Table
	// expire counts, per kind, the watches from a resourceVersion that
	// fail with 410 Gone before one succeeds again: one per watch that
	// ForceRelist ended, so that every client it cut off relists.
	expire [numKinds]int

	// dmu guards the handler queue below. Taken after mu, never before.
	dmu sync.Mutex
	// pending are the handler deliveries not yet run, in commit order.
	pending blockQueue[delivery]
	// draining is set while a goroutine runs the queue.
	draining bool
	// idle are closed when the queue is empty and not running.
	idle []chan struct{}
}

// ResourceVersion returns the current (latest) resourceVersion.
func (s *Server) ResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return formatRV(s.rv)
}

func formatRV(rv uint64) string { return strconv.FormatUint(rv, 10) }

// storedRV returns a stored version's resourceVersion, which the Server
// set from a number.
func storedRV(o object) uint64 { return rvNumber(o.GetResourceVersion()) }

// rvNumber parses a resourceVersion, 0 when it is not a number.
func rvNumber(rv string) uint64 {
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}

// objectKey returns the key of a namespaced or cluster-scoped object, "name"
// or "namespace/name", by which watch faults hold its events back.
func objectKey(kind Kind, namespace, name string) string {
	if kind.namespaced() {
		return namespace + "/" + name
	}
	return name
}

// now returns the clock's time at the second precision the API serializes.
func (s *Server) now() metav1.Time { return *s.nowShared() }

// nowShared is now as a pointer that stored versions may share (they never
// change it). The result of a second is kept for the next calls in that
// second: the format and parse of Rfc3339Copy are most of the cost of a
// volume's status update, and the versions written in one second share
// one lastPhaseTransitionTime.
func (s *Server) nowShared() *metav1.Time {
	t := s.clk.Now()
	if c := s.lastNow.Load(); c != nil && c.unix == t.Unix() && c.loc == t.Location() {
		return &c.t
	}
	c := &secondTime{unix: t.Unix(), loc: t.Location(), t: metav1.NewTime(t).Rfc3339Copy()}
	s.lastNow.Store(c)
	return &c.t
}

// secondTime is Server.now's result for one second of one location.
type secondTime struct {
	unix int64
	loc  *time.Location
	t    metav1.Time
}

func notFound(kind Kind, name string) error {
	return apierrors.NewNotFound(kind.groupResource(), name)
}

func conflict(kind Kind, name string) error {
	return apierrors.NewConflict(kind.groupResource(), name, errors.New(optimisticLockMsg))
}

func badRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf("bindertest: "+format, args...))
}

// checkArg validates the argument of a write: a non-nil object of kind.
func checkArg(kind Kind, in object) error {
	if in == nil || isNil(in) {
		return badRequest("nil %s", kind)
	}
	if k, ok := kindOf(in); !ok || k != kind {
		return badRequest("object of type %T is not a %s", in, kind)
	}
	return nil
}

// prepareNew makes the private copy a create or seed stores: defaults,
// no type metadata, validation (unless check is false) and (create only)
// the API's reset of status and system fields.
func (s *Server) prepareNew(kind Kind, in object, seed, check bool) (object, error) {
	obj := in
	if !seed || !s.adoptSeeds {
		obj = deepCopy(in)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if !kind.namespaced() {
		obj.SetNamespace("")
	}
	applyDefaults(obj)
	if check {
		if err := validateNew(kind, obj); err != nil {
			return nil, err
		}
	}
	s.share(obj, internAll)
	now := s.now()
	if seed {
		if ts := obj.GetCreationTimestamp(); ts.IsZero() {
			obj.SetCreationTimestamp(now)
		}
		return obj, nil
	}
	resetStatusForCreate(obj, now)
	obj.SetCreationTimestamp(now)
	obj.SetUID("")
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	return obj, nil
}

// create stores a new object as kube-apiserver's create does. It returns
// the stored version (shared; callers copy it).
func (s *Server) create(ctx context.Context, kind Kind, in object) (object, error) {
	if err := checkArg(kind, in); err != nil {
		return nil, err
	}
	post, err := splitApplied(s.begin(ctx, vCreate, kind, in.GetNamespace(), in.GetName()))
	if err != nil {
		return nil, err
	}
	obj, err := s.prepareNew(kind, in, false, true)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if obj.GetName() == "" {
		s.generateNameLocked(kind, obj)
	}
	if _, ok := s.objs[kind].get(obj.GetNamespace(), obj.GetName()); ok {
		s.mu.Unlock()
		return nil, apierrors.NewAlreadyExists(kind.groupResource(), obj.GetName())
	}
	s.seq++
	obj.SetUID(s.uids.uid(s.seq))
	queued := s.insertLocked(kind, obj)
	s.mu.Unlock()
	if queued {
		s.deliver()
	}
	return obj, post
}

// nameAlphabet is the alphabet of generated name suffixes (kube-apiserver's:
// no vowels, no confusable characters).
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// generateNameLocked sets a free name made of obj's generateName and a
// 5-character suffix.
func (s *Server) generateNameLocked(kind Kind, obj object) {
	for {
		s.seq++
		var suffix [5]byte
		n := s.seq
		for i := len(suffix) - 1; i >= 0; i-- {
			suffix[i] = nameAlphabet[n%uint64(len(nameAlphabet))]
			n /= uint64(len(nameAlphabet))
		}
		name := obj.GetGenerateName() + string(suffix[:])
		if _, ok := s.objs[kind].get(obj.GetNamespace(), name); !ok {
			obj.SetName(name)
			return
		}
	}
}

// insertLocked stores obj (which the store owns from now on) under a new
// resourceVersion and commits its Added event. It reports whether handler
// deliveries were queued.
func (s *Server) insertLocked(kind Kind, obj object) bool {
	s.rv++
	obj.SetResourceVersion(formatRV(s.rv))
	s.objs[kind].put(obj)
	return s.commitLocked(event{kind: kind, typ: watch.Added, rv: s.rv, obj: obj})
}

// commitLocked records a committed change for history, watches and
// handlers. It reports whether handler deliveries were queued.
func (s *Server) commitLocked(ev event) bool {
	s.hist.add(ev)
	if s.watch != nil {
		return s.disturbLocked(ev)
	}
	return s.sendLocked(ev)
}

// sendLocked sends ev to the watches and handlers of its kind. It reports
// whether handler deliveries were queued.
func (s *Server) sendLocked(ev event) bool {
	for _, w := range s.watchers[ev.kind] {
		if ev.rv > w.since {
			w.push(watchItem{ev: ev})
		}
	}
	subs := s.subs[ev.kind]
	if joined := func(sub *subscriber) bool { return ev.rv <= sub.since }; slices.ContainsFunc(subs, joined) {
		// A held-back event of a change older than a subscription.
		subs = slices.DeleteFunc(slices.Clone(subs), joined)
	}
	if len(subs) > 0 {
		s.enqueue(delivery{ev: ev, subs: subs})
		return true
	}
	return false
}

// delete removes an object. An object with finalizers is only marked
// (deletionTimestamp, deletionGracePeriodSeconds 0) and is removed by the
// update that clears its last finalizer, as kube-apiserver does.
func (s *Server) delete(ctx context.Context, kind Kind, namespace, name string) error {
	if !kind.valid() {
		return badRequest("invalid kind %s", kind)
	}
	post, err := splitApplied(s.begin(ctx, vDelete, kind, namespace, name))
	if err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	old, ok := s.objs[kind].get(namespace, name)
	if !ok {
		s.mu.Unlock()
		return notFound(kind, name)
	}
	if old.GetDeletionTimestamp() != nil {
		// Already being deleted, waiting for finalizers: nothing changes.
		s.mu.Unlock()
		return post
	}
	next := shallowCopy(old)
	s.rv++
	next.SetResourceVersion(formatRV(s.rv))
	var queued bool
	if len(old.GetFinalizers()) > 0 {
		grace := int64(0)
		next.SetDeletionTimestamp(&now)
		next.SetDeletionGracePeriodSeconds(&grace)
		s.objs[kind].put(next)
		s.replaceLocked(old, next, true)
		queued = s.commitLocked(event{kind: kind, typ: watch.Modified, rv: s.rv, obj: next, old: old})
	} else {
		s.objs[kind].remove(namespace, name)
		s.replaceLocked(old, nil, true)
		queued = s.commitLocked(event{kind: kind, typ: watch.Deleted, rv: s.rv, obj: next})
	}
	s.mu.Unlock()
	if queued {
		s.deliver()
	}
	return post
}

// get returns the stored version (shared; callers copy it).
func (s *Server) get(ctx context.Context, kind Kind, namespace, name string) (object, error) {
	if !kind.valid() {
		return nil, badRequest("invalid kind %s", kind)
	}
	if err := s.begin(ctx, vGet, kind, namespace, name); err != nil {
		return nil, err
	}
	s.mu.RLock()
	o, ok := s.objs[kind].get(namespace, name)
	s.mu.RUnlock()
	if !ok {
		return nil, notFound(kind, name)
	}
	return o, nil
}

// begin runs before every request: it fails on a done ctx, counts the
// request and applies matching faults (latency first, then an error).
func (s *Server) begin(ctx context.Context, v verbIndex, kind Kind, namespace, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.stats.request(v, kind)
	if s.numFaults.Load() == 0 {
		return nil
	}
	return s.applyFaults(ctx, v, kind, namespace, name)
}

// sortedLocked returns the stored versions of kind sorted by key.
func (s *Server) sortedLocked(kind Kind) []object {
	return s.objs[kind].sorted()
}
