package binder

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/jitter"
)

// queueKind names one of the Binder's two queues.
type queueKind uint8

const (
	claimQueue queueKind = iota
	volumeQueue
)

// String returns "claim" or "volume", the kind label of the metrics.
func (k queueKind) String() string {
	if k == volumeQueue {
		return "volume"
	}
	return "claim"
}

// workKey is a queue key with its queue.
type workKey struct {
	kind queueKind
	key  string
}

func claimWork(key string) workKey   { return workKey{kind: claimQueue, key: key} }
func volumeWork(name string) workKey { return workKey{kind: volumeQueue, key: name} }

// trackerConfig is what a tracker needs of the Binder's Config.
type trackerConfig struct {
	clock               clock.WithTicker
	retryBase, retryMax time.Duration
	// resync is the resyncs' configuration; a Period of zero or less
	// disables them. The resyncs walk the store's caches a shard at a
	// time: shards, claimKeys and volumeKeys are the caches' Shards and
	// AppendKeys.
	resync                jitter.ResyncConfig
	shards                int
	claimKeys, volumeKeys func(shard int, dst []string) []string
	metrics               workqueue.MetricsProvider // nil: none
	// claimQueued is the AvailableDelay holds' hook, called by add before
	// a claim is queued (and without the tracker's lock, as it reads the
	// store): it tells the holds that the claim searches again and returns
	// what waiting remembers of it, or false for a claim that cannot take
	// an unbound volume. Nil means none is remembered as waiting.
	claimQueued func(key string) (waitingClaim, bool)
}

// tracker owns the Binder's work: the claim and volume queues while Run
// runs, their resyncs, the rate-limited retries of failed syncs, the
// accounting that WaitForQuiescence reads and the claims waiting in the
// claim queue that the AvailableDelay holds consult (mayTake). Every
// producer of work goes through it: the informer handlers, the Binder's
// own writes, the resyncs (jitter.Sweep is handed add), retries and held
// volumes (addAfter).
//
// Invariant, under mu: a key is in retrying from a failed sync until a
// sync of it succeeds; a claim is in waiting from the add that queued it
// until a sync of it ends with the claim neither queued again nor
// retrying. What is queued is the queues' own record (keyQueue: from the
// add that queued a key until a worker takes it, then processing until it
// is done); the tracker keeps no copy of it, which cost three lookups of a
// map of every queued key per sync (6 % of the binding path's CPU at
// 100,000 pairs, 2 cores). The Binder is idle when retrying is empty, no
// sync or operation runs and neither queue holds a key queued or being
// processed.
type tracker struct {
	cfg trackerConfig

	// run holds the queues while Run runs; nil before and after. It is
	// set and cleared under mu, and read without it where a stale value
	// is harmless.
	run atomic.Pointer[runState]

	// mu guards the fields below.
	mu       sync.Mutex
	retrying map[workKey]struct{}
	// inflight counts running syncs; operating counts operations started
	// and not returned yet.
	inflight, operating int
	// waiters are closed when the Binder becomes idle.
	waiters []chan struct{}
	waiting waitingClaims
}

// keepQueuedKeys is the most keys a queue's emptied map of queued keys
// may have held and still be kept for reuse (keyQueue); with fewer claims
// the waiting claims are not sized beforehand either.
const keepQueuedKeys = 1024

func newTracker(cfg trackerConfig) *tracker {
	return &tracker{
		cfg:      cfg,
		retrying: make(map[workKey]struct{}),
		waiting:  newWaitingClaims(),
	}
}

// runState is what exists while Run runs: the queues and their resyncs.
type runState struct {
	claims, volumes workqueue.TypedRateLimitingInterface[string]
	// claimKeys and volumeKeys are the innermost layers of claims and
	// volumes: what is queued or being processed.
	claimKeys, volumeKeys *keyQueue
	// claimResync and volumeResync add every cached object once per
	// resync period, a cache shard at a time; nil when the resync is
	// disabled. They hold no keys: at a million pairs the registry of
	// every key that jitter.Resync kept cost 170 MB, and 135 B per bound
	// pair at 100,000 (BenchmarkMemoryPerPair, 2 cores).
	claimResync, volumeResync *jitter.Sweep[string]
}

func (rs *runState) queue(k queueKind) workqueue.TypedRateLimitingInterface[string] {
	if k == volumeQueue {
		return rs.volumes
	}
	return rs.claims
}

func (rs *runState) keys(k queueKind) *keyQueue {
	if k == volumeQueue {
		return rs.volumeKeys
	}
	return rs.claimKeys
}

// runSizes are the objects Run is about to queue, a hint by which start
// sizes the queues and the waiting claims: Run queues every
// object at once, and maps grown one key at a time through a million
// objects took about 5 s of CPU of a simulate run (2 cores, CPU profile).
type runSizes struct{ claims, volumes int }

// start creates the queues (which start their own goroutines, hence only
// in Run) and the resyncs, whose adds go through the tracker, and makes
// add queue keys from now on.
func (t *tracker) start(sizes runSizes) (*runState, error) {
	newQueue := func(name string, size int) (workqueue.TypedRateLimitingInterface[string], *keyQueue) {
		return newWorkqueue(name, workqueue.NewTypedItemExponentialFailureRateLimiter[string](t.cfg.retryBase, t.cfg.retryMax),
			t.cfg.clock, t.cfg.metrics, size)
	}
	rs := &runState{}
	rs.claims, rs.claimKeys = newQueue("claims", sizes.claims)
	rs.volumes, rs.volumeKeys = newQueue("volumes", sizes.volumes)
	if t.cfg.resync.Period > 0 {
		var err error
		addClaim := func(key string) { t.add(claimWork(key)) }
		addVolume := func(name string) { t.add(volumeWork(name)) }
		if rs.claimResync, err = jitter.NewSweep(t.cfg.shards, t.cfg.claimKeys, addClaim, t.cfg.resync); err == nil {
			rs.volumeResync, err = jitter.NewSweep(t.cfg.shards, t.cfg.volumeKeys, addVolume, t.cfg.resync)
		}
		if err != nil {
			rs.claims.ShutDown()
			rs.volumes.ShutDown()
			return nil, err
		}
	}
	t.mu.Lock()
	if t.cfg.claimQueued != nil && sizes.claims > keepQueuedKeys {
		t.waiting.grow(sizes.claims)
	}
	t.run.Store(rs)
	t.mu.Unlock()
	return rs, nil
}

// stop shuts the queues down, forgets what they held and wakes the
// quiescence waiters.
func (t *tracker) stop(rs *runState) {
	rs.claims.ShutDown()
	rs.volumes.ShutDown()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.run.CompareAndSwap(rs, nil)
	clear(t.retrying)
	t.waiting.reset()
	t.wakeLocked()
}

// running reports whether Run runs.
func (t *tracker) running() bool { return t.run.Load() != nil }

// resyncs returns the resyncs to run.
func (rs *runState) resyncs() []*jitter.Sweep[string] {
	if rs.claimResync == nil {
		return nil
	}
	return []*jitter.Sweep[string]{rs.claimResync, rs.volumeResync}
}

// resyncDue reports whether a resync was due by now and has not queued its
// keys yet.
func (rs *runState) resyncDue(now time.Time) bool {
	return rs.claimResync != nil && (rs.claimResync.Due(now) || rs.volumeResync.Due(now))
}

// add queues a key while Run runs; before Run, Run itself queues every
// known object.
func (t *tracker) add(wk workKey) {
	var w waitingClaim
	var isWaiting bool
	if wk.kind == claimQueue && t.cfg.claimQueued != nil {
		w, isWaiting = t.cfg.claimQueued(wk.key)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rs := t.run.Load()
	if rs == nil {
		return
	}
	if wk.kind == claimQueue {
		// Under mu, so that a worker that finishes this claim's sync
		// sees it queued again and keeps it waiting.
		t.waiting.queued(wk.key, w, isWaiting)
	}
	rs.queue(wk.kind).Add(wk.key)
}

// addAfter queues a volume again after d, for a hold that may end then.
// WaitForQuiescence does not wait for it.
func (t *tracker) addAfter(wk workKey, d time.Duration) {
	if rs := t.run.Load(); rs != nil {
		rs.queue(wk.kind).AddAfter(wk.key, d)
	}
}

// work is one worker's loop: it syncs the keys of one queue until the
// queue shuts down. A failed sync is retried after the queue's
// rate-limited delay, unless it failed on a malformed object.
func (t *tracker) work(ctx context.Context, rs *runState, kind queueKind, sync func(context.Context, workKey) error) {
	q := rs.queue(kind)
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		wk := workKey{kind: kind, key: key}
		t.mu.Lock()
		t.inflight++
		t.mu.Unlock()

		retry := false
		if ctx.Err() == nil {
			if err := sync(ctx, wk); err != nil && !IsInvalidObject(err) {
				retry = true
			}
		}
		t.mu.Lock()
		if retry {
			t.retrying[wk] = struct{}{}
			q.AddRateLimited(key)
		} else {
			delete(t.retrying, wk)
			q.Forget(key)
			if kind == claimQueue && !rs.keys(kind).has(key) {
				t.waiting.done(key)
			}
		}
		t.mu.Unlock()
		q.Done(key) // after which a key added meanwhile is in the queue
		t.finish()
	}
}

// finish ends one sync and wakes the waiters when nothing is left to do.
func (t *tracker) finish() {
	t.mu.Lock()
	t.inflight--
	t.wakeIfIdleLocked()
	t.mu.Unlock()
}

// syncing counts a direct sync (SyncClaim, SyncVolume) while f runs.
func (t *tracker) syncing(f func() error) error {
	t.mu.Lock()
	t.inflight++
	t.mu.Unlock()
	defer t.finish()
	return f()
}

// operationStarted counts an operation until operationDone.
func (t *tracker) operationStarted() {
	t.mu.Lock()
	t.operating++
	t.mu.Unlock()
}

// operationDone ends one operation.
func (t *tracker) operationDone() {
	t.mu.Lock()
	t.operating--
	t.wakeIfIdleLocked()
	t.mu.Unlock()
}

// mayTake reports whether a claim waiting in the claim queue might take
// pv (see waitingClaims.mayTake).
func (t *tracker) mayTake(pv *v1.PersistentVolume) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waiting.mayTake(pv)
}

func (t *tracker) idleLocked() bool {
	if t.inflight > 0 || t.operating > 0 || len(t.retrying) > 0 {
		return false
	}
	rs := t.run.Load()
	return rs == nil || !rs.claimKeys.busy() && !rs.volumeKeys.busy()
}

func (t *tracker) wakeIfIdleLocked() {
	if t.idleLocked() {
		t.wakeLocked()
	}
}

func (t *tracker) wakeLocked() {
	for _, w := range t.waiters {
		close(w)
	}
	t.waiters = nil
}

// resyncPoll is how often waitIdle looks again while a resync is due but
// its goroutine has not queued the keys yet (a few microseconds on an idle
// machine, longer under load).
const resyncPoll = time.Millisecond

// waitIdle blocks until the Binder is idle, no operation is left in the
// Map (opsWait) and no resync is due, or ctx is done; see
// Binder.WaitForQuiescence.
func (t *tracker) waitIdle(ctx context.Context, opsWait func(context.Context) error) error {
	for {
		t.mu.Lock()
		if !t.idleLocked() {
			w := make(chan struct{})
			t.waiters = append(t.waiters, w)
			t.mu.Unlock()
			select {
			case <-w:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		t.mu.Unlock()
		// An operation that has returned may still be finishing in the
		// Map; once the Map is idle too, nothing can start another one
		// but a sync, which would be counted.
		if err := opsWait(ctx); err != nil {
			return err
		}
		if rs := t.run.Load(); rs != nil && rs.resyncDue(t.cfg.clock.Now()) {
			// The resync's goroutine queues the keys shortly.
			err := wait.PollUntilContextCancel(ctx, resyncPoll, false, func(context.Context) (bool, error) {
				return !rs.resyncDue(t.cfg.clock.Now()), nil
			})
			if err != nil {
				return err
			}
			continue
		}
		t.mu.Lock()
		idle := t.idleLocked()
		t.mu.Unlock()
		if idle {
			return nil
		}
	}
}
