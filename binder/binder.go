package binder

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/pvindex"
	"github.com/volbind/volbind/jitter"
	"github.com/volbind/volbind/operations"
)

// Binder binds claims to volumes; see the package comment. Create it with
// New or NewForClientset, feed it events through its handlers and call Run.
// All methods are safe for concurrent use.
type Binder struct {
	api     API
	cfg     Config
	metrics *metrics
	// kube are the metrics of Config.KubeMetrics; nil without.
	kube    *kubeMetrics
	store   *store
	classes classes
	// annotations are the shared annotation maps of binding writes.
	annotations bindingAnnotations
	// requests recycles the objects of binding writes.
	requests requests
	// ops runs the provisioning, deletion and recycling operations, at
	// most one per claim or volume.
	ops *operations.Map

	// claimLocks and volumeLocks serialize the syncs of one claim and of one
	// volume, one mutex per key (unrelated keys never wait for each other,
	// as they did on keymutex's hashed stripes). A claim sync takes its
	// claim's lock, then the lock of the volume it binds; a volume sync
	// takes only its volume's lock.
	claimLocks, volumeLocks operations.Locks
	// reservations keep two claim workers from binding one volume.
	reservations *reservations

	// scrubbed maps the UID of a volume whose storage the recycler
	// scrubbed to the UID of the claim whose release it was scrubbed for,
	// until the volume is made Available: an operation that scrubbed but
	// could not unbind the volume only unbinds when it runs again.
	scrubbed sync.Map // types.UID -> types.UID
	// deleted holds the UIDs of the volumes whose storage a Deleter has
	// deleted, until the volume object is gone: the Deleter is never
	// called for them again, whatever a later read or write answers.
	deleted sync.Map // types.UID -> struct{}

	// work tracks the queues, retries, resyncs and quiescence; avail
	// decides when unbound volumes are marked Available.
	work  *tracker
	avail availability
	// own holds back the events of the Binder's own updates until they
	// have answered.
	own *ownWrites

	started atomic.Bool
	// ignoredLogged is set once an ignored informer object was logged at
	// the default verbosity (ignored.go).
	ignoredLogged atomic.Bool
	// staleAnswerLogged is set once a write's answer that did not advance
	// the resourceVersion was logged at the default verbosity (ignored.go).
	staleAnswerLogged atomic.Bool
	// ready is closed once Run has queued every known object, or has
	// returned without doing so.
	ready     chan struct{}
	readyOnce sync.Once
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
	b := &Binder{
		api:     api,
		cfg:     cfg,
		metrics: m,
		store:   newStore(cfg.Clock, pvindex.Options{UnmarkedCandidates: cfg.AvailableDelay > 0}),
		ops: operations.New(operations.Config{Clock: cfg.Clock,
			InitialDelay: cfg.OperationInitialDelay, MaxDelay: cfg.OperationMaxDelay}),
		reservations: newReservations(),
		annotations:  newBindingAnnotations(),
		avail:        markNow{},
		ready:        make(chan struct{}),
		own:          newOwnWrites(),
	}
	if b.kube, err = newKubeMetrics(cfg, b.store); err != nil {
		return nil, err
	}
	if err := registerPending(cfg.Registerer, b); err != nil {
		return nil, err
	}
	tcfg := trackerConfig{clock: cfg.Clock, retryBase: cfg.RetryBaseDelay, retryMax: cfg.RetryMaxDelay, metrics: queueProvider(m, b.kube)}
	if cfg.ResyncPeriod > 0 {
		tcfg.resync = jitter.ResyncConfig{Period: cfg.ResyncPeriod, Jitter: cfg.ResyncJitter, Clock: cfg.Clock}
		tcfg.shards = b.store.claims.Shards()
		tcfg.claimKeys, tcfg.volumeKeys = b.store.claims.AppendKeys, b.store.volumes.AppendKeys
	}
	if cfg.AvailableDelay > 0 {
		var h *holds
		tcfg.claimQueued = func(key string) (waitingClaim, bool) {
			h.claimGone(key) // it searches again
			return b.waitingClaimOf(key)
		}
		b.work = newTracker(tcfg)
		h = newHolds(cfg.AvailableDelay, cfg.Clock, b.work.mayTake)
		b.avail = h
	} else {
		b.work = newTracker(tcfg)
	}
	return b, nil
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
	ctx = b.withLogger(ctx)
	logger := klog.FromContext(ctx)
	defer b.setReady()
	defer func() {
		b.ops.Shutdown()
		_ = b.ops.Wait(context.Background())
	}()
	if len(b.cfg.Synced) > 0 && !toolscache.WaitForCacheSync(ctx.Done(), b.cfg.Synced...) {
		return nil
	}
	b.store.index.ReserveClaims(b.store.volumes.Len())
	rs, err := b.work.start(runSizes{claims: b.store.claims.Len(), volumes: b.store.volumes.Len()})
	if err != nil {
		return err
	}
	defer b.work.stop(rs)

	for _, pv := range b.store.volumes.List() {
		b.work.add(volumeWork(pv.Name))
	}
	for _, pvc := range b.store.claims.List() {
		b.work.add(claimWork(cache.ClaimKey(pvc.Namespace, pvc.Name)))
	}
	b.setReady()
	logger.V(2).Info("Starting volume binder", "claimWorkers", b.cfg.ClaimWorkers, "volumeWorkers", b.cfg.VolumeWorkers,
		"volumes", b.store.volumes.Len(), "claims", b.store.claims.Len())

	var wg sync.WaitGroup
	for _, r := range rs.resyncs() {
		wg.Go(func() { r.Run(ctx) })
	}
	for range b.cfg.ClaimWorkers {
		wg.Go(func() { b.work.work(ctx, rs, claimQueue, b.syncKey) })
	}
	for range b.cfg.VolumeWorkers {
		wg.Go(func() { b.work.work(ctx, rs, volumeQueue, b.syncKey) })
	}
	<-ctx.Done()
	rs.claims.ShutDown()
	rs.volumes.ShutDown()
	wg.Wait()
	logger.V(2).Info("Stopped volume binder")
	return nil
}

// withLogger returns ctx with Config.Logger, unless ctx carries a logger.
func (b *Binder) withLogger(ctx context.Context) context.Context {
	if _, err := logr.FromContext(ctx); err == nil {
		return ctx
	}
	return klog.NewContext(ctx, b.cfg.Logger)
}

func (b *Binder) setReady() { b.readyOnce.Do(func() { close(b.ready) }) }

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
	return b.work.waitIdle(ctx, b.ops.Wait)
}

// SyncClaim runs one sync of the claim with key "namespace/name", the
// equivalent of Kubernetes' syncClaim, and returns its error (a Conflict
// when a write raced with another writer, an *InvalidObjectError for a
// malformed claim). A claim the Binder does not know is not an error.
// It blocks while a worker syncs the same claim.
func (b *Binder) SyncClaim(ctx context.Context, key string) error {
	return b.work.syncing(func() error { return b.syncKey(b.withLogger(ctx), claimWork(key)) })
}

// SyncVolume runs one sync of the named volume, the equivalent of
// Kubernetes' syncVolume, and returns its error. A volume the Binder does
// not know is not an error. It blocks while a worker syncs the same volume.
func (b *Binder) SyncVolume(ctx context.Context, name string) error {
	return b.work.syncing(func() error { return b.syncKey(b.withLogger(ctx), volumeWork(name)) })
}

// syncKey syncs one key under its lock and records the metrics.
func (b *Binder) syncKey(ctx context.Context, wk workKey) error {
	start := b.cfg.Clock.Now()
	var err error
	kind := wk.kind.String()
	if wk.kind == volumeQueue {
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
	b.claimLocks.Lock(key)
	defer b.claimLocks.Unlock(key)
	if err := b.verifyClaim(ctx, key); err != nil {
		return err
	}
	claim, ok := b.store.claim(key)
	if !ok {
		// Deleted (the delete handler has queued its volume) or never seen.
		return nil
	}
	b.observe(claim)
	if err := validateClaim(claim); err != nil {
		b.invalidEvent(claim, err)
		return err
	}
	return b.syncClaim(ctx, claim)
}

func (b *Binder) syncVolumeKey(ctx context.Context, name string) error {
	b.volumeLocks.Lock(name)
	defer b.volumeLocks.Unlock(name)
	if err := b.verifyVolume(ctx, name); err != nil {
		return err
	}
	pv, ok := b.store.volume(name)
	if !ok {
		// Deleted (the delete handler has queued its claim) or never seen.
		return nil
	}
	b.observe(pv)
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
