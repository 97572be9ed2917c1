package binder

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/keymutex"

	"github.com/volbind/volbind/operations"
)

// Binder binds claims to volumes; see the package comment. Create it with
// New or NewForClientset, feed it events through its handlers and call Run.
// All methods are safe for concurrent use.
type Binder struct {
	api     API
	cfg     Config
	metrics *metrics
	store   *store
	classes classes
	// ops runs the provisioning, deletion and recycling operations, at
	// most one per claim or volume.
	ops *operations.Map

	// claimLocks and volumeLocks serialize the syncs of one claim and of one
	// volume. A claim sync takes its claim's lock, then the lock of the
	// volume it binds; a volume sync takes only its volume's lock.
	claimLocks, volumeLocks keymutex.KeyMutex

	// matchMu guards reserved: the volumes claim syncs have chosen and are
	// binding, excluded from other claims' searches until the volume's
	// claimRef is written (or the binding fails), and missed: the claims
	// that found no volume while some volume was reserved.
	matchMu  sync.Mutex
	reserved map[string]bool
	missed   map[string]struct{}

	// scrubbed maps the UID of a volume whose storage the recycler
	// scrubbed to the UID of the claim whose release it was scrubbed for,
	// until the volume is made Available: an operation that scrubbed but
	// could not unbind the volume only unbinds when it runs again.
	scrubbed sync.Map // types.UID -> types.UID

	// holds tracks the volumes whose Available write is held back and the
	// claims that might take them; nil without Config.AvailableDelay.
	holds *holds

	started atomic.Bool
	// ignoredLogged is set once an ignored informer object was logged at
	// the default verbosity (ignored.go).
	ignoredLogged atomic.Bool
	// running holds the queues while Run runs; nil before and after.
	running atomic.Pointer[runState]
	// ready is closed once Run has queued every known object, or has
	// returned without doing so.
	ready     chan struct{}
	readyOnce sync.Once

	// mu guards the work accounting below.
	mu sync.Mutex
	// queued holds the keys added to a queue and not yet taken by a worker.
	queued map[workKey]struct{}
	// retrying holds the keys whose last sync failed and that wait for
	// their rate-limited retry.
	retrying map[workKey]struct{}
	// inflight counts running syncs.
	inflight int
	// operating counts the operations started and not returned yet.
	operating int
	// waiters are closed when the Binder becomes quiescent.
	waiters []chan struct{}
}

// workKey is a queue key with its queue.
type workKey struct {
	volume bool
	key    string
}

// New returns a Binder that writes through api. It starts no goroutine:
// register its handlers and call Run. It fails (wrapping ErrInvalidConfig)
// when cfg has negative values or its metrics cannot be registered.
func New(api API, cfg Config) (*Binder, error) {
	if api == nil {
		return nil, errors.Join(ErrInvalidConfig, errors.New("binder: nil API"))
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	if cfg.Fence != nil {
		api = &fencedAPI{API: api, fence: cfg.Fence}
	}
	var h *holds
	if cfg.AvailableDelay > 0 {
		h = newHolds()
	}
	return &Binder{
		api:     api,
		cfg:     cfg,
		metrics: m,
		holds:   h,
		store:   newStore(cfg.Clock.Now, h != nil),
		ops: operations.New(operations.Config{Clock: cfg.Clock,
			InitialDelay: cfg.OperationInitialDelay, MaxDelay: cfg.OperationMaxDelay}),
		claimLocks:  keymutex.NewHashed(256),
		volumeLocks: keymutex.NewHashed(256),
		reserved:    make(map[string]bool),
		missed:      make(map[string]struct{}),
		ready:       make(chan struct{}),
		queued:      make(map[workKey]struct{}),
		retrying:    make(map[workKey]struct{}),
	}, nil
}

// Run waits for the Config's Synced functions, queues every known object,
// then runs the claim and volume workers and the resync until ctx is done.
// It returns nil after every goroutine it started has exited, running
// provisioning, deletion and recycling operations included (their contexts
// are cancelled; no operation starts afterwards), or ErrAlreadyRunning when
// called a second time.
func (b *Binder) Run(ctx context.Context) error {
	if !b.started.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	logger := klog.FromContext(ctx)
	defer b.setReady()
	defer func() {
		b.ops.Shutdown()
		_ = b.ops.Wait(context.Background())
	}()
	if len(b.cfg.Synced) > 0 && !toolscache.WaitForCacheSync(ctx.Done(), b.cfg.Synced...) {
		return nil
	}
	rs, err := b.newRunState()
	if err != nil {
		return err
	}
	b.running.Store(rs)
	defer b.stop(rs)

	for _, pv := range b.store.volumes.List() {
		b.track(workKey{volume: true, key: pv.Name})
		b.enqueueVolume(pv.Name)
	}
	for _, pvc := range b.store.claims.List() {
		b.track(workKey{key: claimKeyOf(pvc)})
		b.enqueueClaim(claimKeyOf(pvc))
	}
	b.setReady()
	logger.V(2).Info("Starting volume binder", "claimWorkers", b.cfg.ClaimWorkers, "volumeWorkers", b.cfg.VolumeWorkers,
		"volumes", b.store.volumes.Len(), "claims", b.store.claims.Len())

	var wg sync.WaitGroup
	for _, r := range rs.resyncs() {
		wg.Go(func() { r.Run(ctx) })
	}
	for range b.cfg.ClaimWorkers {
		wg.Go(func() { b.work(ctx, rs.claims, false) })
	}
	for range b.cfg.VolumeWorkers {
		wg.Go(func() { b.work(ctx, rs.volumes, true) })
	}
	<-ctx.Done()
	rs.claims.ShutDown()
	rs.volumes.ShutDown()
	wg.Wait()
	logger.V(2).Info("Stopped volume binder")
	return nil
}

func (b *Binder) setReady() { b.readyOnce.Do(func() { close(b.ready) }) }

// stop forgets the queues and wakes the quiescence waiters.
func (b *Binder) stop(rs *runState) {
	b.running.CompareAndSwap(rs, nil)
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.queued)
	clear(b.retrying)
	if b.holds != nil {
		b.holds.reset()
	}
	b.wakeLocked()
}

// work is one worker's loop: it syncs keys of q until q shuts down.
func (b *Binder) work(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], volume bool) {
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		wk := workKey{volume: volume, key: key}
		b.mu.Lock()
		delete(b.queued, wk)
		b.inflight++
		b.mu.Unlock()

		retry := false
		if ctx.Err() == nil {
			err := b.syncKey(ctx, wk)
			switch {
			case err == nil || IsInvalidObject(err):
				q.Forget(key)
			default:
				retry = true
				q.AddRateLimited(key)
			}
		}
		b.mu.Lock()
		if retry {
			b.retrying[wk] = struct{}{}
		} else {
			delete(b.retrying, wk)
		}
		if _, again := b.queued[wk]; !again && !volume && b.holds != nil {
			b.holds.claimDone(key)
		}
		b.mu.Unlock()
		q.Done(key)
		b.finish()
	}
}

// finish ends one sync and wakes the waiters when nothing is left to do.
func (b *Binder) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight--
	if b.idleLocked() {
		b.wakeLocked()
	}
}

func (b *Binder) idleLocked() bool {
	if b.inflight > 0 || b.operating > 0 || len(b.queued) > 0 || len(b.retrying) > 0 {
		return false
	}
	rs := b.running.Load()
	return rs == nil || (rs.claims.Len() == 0 && rs.volumes.Len() == 0)
}

func (b *Binder) wakeLocked() {
	for _, w := range b.waiters {
		close(w)
	}
	b.waiters = nil
}

// resyncPoll is how often WaitForQuiescence looks again while a resync is
// due but its goroutine has not queued the keys yet (a few microseconds
// on an idle machine, longer under load).
const resyncPoll = time.Millisecond

// WaitForQuiescence blocks until Run has started (its informers synced and
// every known object queued) and then until nothing is left to do now:
//   - no sync is queued or running, including the syncs caused by the
//     writes of other syncs;
//   - no failed sync waits for its rate-limited retry (RetryBaseDelay,
//     RetryMaxDelay): retries in backoff are waited for;
//   - no resync is due: a resync whose time (on Config.Clock) has come has
//     queued its keys and they are synced (a test that steps a fake clock
//     past the resync period and then calls WaitForQuiescence sees the
//     resync's effects);
//   - no operation (provisioning, deletion, recycling) is running.
//
// It does not wait for what is due only later: resyncs scheduled after
// now, volumes whose Available write AvailableDelay holds back (they are
// queued again when the hold ends), and operations backing off after a
// failure (a later sync or resync restarts them). Step the clock past
// those and call it again to wait for them. It returns nil when quiescent,
// or ctx's error when ctx is done first. After Run has returned, only
// direct SyncClaim and SyncVolume calls are waited for.
func (b *Binder) WaitForQuiescence(ctx context.Context) error {
	select {
	case <-b.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		b.mu.Lock()
		if b.idleLocked() {
			b.mu.Unlock()
			// An operation that has returned may still be finishing
			// in the Map; once the Map is idle too, nothing can start
			// another one but a sync, which would be counted.
			if err := b.ops.Wait(ctx); err != nil {
				return err
			}
			if rs := b.running.Load(); rs != nil && rs.resyncDue(b.cfg.Clock.Now()) {
				// The resync's goroutine queues the keys shortly.
				err := wait.PollUntilContextCancel(ctx, resyncPoll, false, func(context.Context) (bool, error) {
					return !rs.resyncDue(b.cfg.Clock.Now()), nil
				})
				if err != nil {
					return err
				}
				continue
			}
			b.mu.Lock()
			idle := b.idleLocked()
			b.mu.Unlock()
			if idle {
				return nil
			}
			continue
		}
		w := make(chan struct{})
		b.waiters = append(b.waiters, w)
		b.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// SyncClaim runs one sync of the claim with key "namespace/name", the
// equivalent of Kubernetes' syncClaim, and returns its error (a Conflict
// when a write raced with another writer, an *InvalidObjectError for a
// malformed claim). A claim the Binder does not know is not an error.
// It blocks while a worker syncs the same claim.
func (b *Binder) SyncClaim(ctx context.Context, key string) error {
	return b.syncDirect(ctx, workKey{key: key})
}

// SyncVolume runs one sync of the named volume, the equivalent of
// Kubernetes' syncVolume, and returns its error. A volume the Binder does
// not know is not an error. It blocks while a worker syncs the same volume.
func (b *Binder) SyncVolume(ctx context.Context, name string) error {
	return b.syncDirect(ctx, workKey{volume: true, key: name})
}

func (b *Binder) syncDirect(ctx context.Context, wk workKey) error {
	b.mu.Lock()
	b.inflight++
	b.mu.Unlock()
	defer b.finish()
	return b.syncKey(ctx, wk)
}

// syncKey syncs one key under its lock and records the metrics.
func (b *Binder) syncKey(ctx context.Context, wk workKey) error {
	start := b.cfg.Clock.Now()
	var err error
	kind := "claim"
	if wk.volume {
		kind = "volume"
		err = b.syncVolumeKey(ctx, wk.key)
	} else {
		err = b.syncClaimKey(ctx, wk.key)
	}
	result := resultSuccess
	logger := klog.FromContext(ctx)
	switch {
	case err == nil:
	case IsInvalidObject(err):
		result = resultInvalid
		logger.V(2).Info("Cannot sync malformed object", "kind", kind, "key", wk.key, "err", err)
	case isConflict(err):
		result = resultConflict
		logger.V(3).Info("Sync conflicted, will retry from fresh state", "kind", kind, "key", wk.key, "err", err)
	default:
		result = resultError
		logger.Error(err, "Sync failed, will retry", "kind", kind, "key", wk.key)
	}
	b.metrics.sync(kind, result, b.cfg.Clock.Since(start))
	return err
}

func (b *Binder) syncClaimKey(ctx context.Context, key string) error {
	b.claimLocks.LockKey(key)
	defer func() { _ = b.claimLocks.UnlockKey(key) }()
	claim, ok := b.store.claim(key)
	if !ok {
		// Deleted (the delete handler has queued its volume) or never seen.
		return nil
	}
	if err := validateClaim(claim); err != nil {
		b.invalidEvent(claim, err)
		return err
	}
	return b.syncClaim(ctx, claim)
}

func (b *Binder) syncVolumeKey(ctx context.Context, name string) error {
	b.volumeLocks.LockKey(name)
	defer func() { _ = b.volumeLocks.UnlockKey(name) }()
	pv, ok := b.store.volume(name)
	if !ok {
		// Deleted (the delete handler has queued its claim) or never seen.
		return nil
	}
	if err := validateVolume(pv); err != nil {
		b.invalidEvent(pv, err)
		return err
	}
	return b.syncVolume(ctx, pv)
}

// WaitForOperations blocks until no provisioning, deletion or recycling
// operation runs: those that SyncClaim, SyncVolume or Run's workers
// started. It returns nil then, or ctx's error when ctx is done first.
// Operations backing off after a failure do not count. An embedder that
// drives SyncClaim and SyncVolume itself, without Run, calls it to see the
// outcome of the operations they started; with Run, WaitForQuiescence
// waits for them too.
func (b *Binder) WaitForOperations(ctx context.Context) error {
	return b.ops.Wait(ctx)
}
