package operations

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/internal/shard"
)

// Kubernetes' goroutinemap defaults (pkg/util/goroutinemap/exponentialbackoff).
const (
	// DefaultInitialDelay is the backoff after the first failure of a name.
	DefaultInitialDelay = 500 * time.Millisecond
	// DefaultMaxDelay caps the doubling backoff. It is slightly more than two
	// minutes so that timeouts caused by it are recognisable, as in Kubernetes.
	DefaultMaxDelay = 2*time.Minute + 2*time.Second
)

// mapShards is the number of independently locked parts of a Map. Names
// are spread over them by hash so that Runs of different names on
// different CPUs rarely touch the same mutex.
const mapShards = 32

// Config configures a Map. The zero value is valid and gives Kubernetes'
// behaviour: the real clock and a backoff of 500 ms doubling up to 2 min 2 s.
type Config struct {
	// Clock reads the time for backoff. Default: clock.RealClock{}.
	Clock clock.PassiveClock
	// InitialDelay is how long a name is refused after its first failure.
	// Default: DefaultInitialDelay (500 ms).
	InitialDelay time.Duration
	// MaxDelay caps the delay, which doubles with every consecutive failure.
	// Default: DefaultMaxDelay (2 min 2 s).
	MaxDelay time.Duration
	// DisableBackoff turns backoff off: a failed name may run again at once.
	// Default: false (backoff on).
	DisableBackoff bool
	// Logger receives one error line, with the stack, per recovered panic.
	// The zero value means klog.Background().
	Logger klog.Logger
}

// Map runs at most one operation per name, each in its own goroutine, and
// backs a name off after its operation fails. Create it with New; all
// methods are safe for concurrent use.
type Map struct {
	clock          clock.PassiveClock
	initialDelay   time.Duration
	maxDelay       time.Duration
	disableBackoff bool
	logger         klog.Logger

	// ctx is cancelled by Shutdown, and with it every operation's context.
	ctx    context.Context
	cancel context.CancelFunc
	closed atomic.Bool

	// waiters counts the Wait calls in progress; while it is zero,
	// finishing operations need not look for idleness.
	waiters atomic.Int32
	// nFailed counts the backoff entries of all shards; while it is
	// zero, a successful operation has no backoff to forget and does not
	// lock its shard. Finishing operations read it, failures write it:
	// it is apart from the shards so that the reads do not take their
	// cache lines away from Run.
	nFailed atomic.Int32
	// idleMu guards idle.
	idleMu sync.Mutex
	// idle is closed (and reset to nil) when no operation runs any more;
	// nil while nobody waits.
	idle chan struct{}

	hasher shard.Hasher
	shards [mapShards]shard.Padded[mapShard]
}

// New returns an empty Map configured by cfg. It starts no goroutine.
func New(cfg Config) *Map {
	m := &Map{
		clock:          cfg.Clock,
		initialDelay:   cfg.InitialDelay,
		maxDelay:       cfg.MaxDelay,
		disableBackoff: cfg.DisableBackoff,
	}
	if cfg.Clock == nil {
		m.clock = clock.RealClock{}
	}
	if m.initialDelay <= 0 {
		m.initialDelay = DefaultInitialDelay
	}
	if m.maxDelay <= 0 {
		m.maxDelay = DefaultMaxDelay
	}
	if m.maxDelay < m.initialDelay {
		m.maxDelay = m.initialDelay
	}
	m.logger = cfg.Logger
	if m.logger.GetSink() == nil {
		m.logger = klog.Background()
	}
	m.hasher = shard.NewHasher()
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for i := range m.shards {
		m.shards[i].Value.init()
	}
	return m
}

func (m *Map) shard(name string) *mapShard {
	return &m.shards[m.hasher.Index(name, mapShards)].Value
}

// Run starts op in a new goroutine under name and returns nil, or refuses
// at once without starting it. It never blocks on a running operation.
//
// Run returns ErrAlreadyRunning while an operation under name is running,
// a *BackoffError (errors.Is(err, ErrBackoff)) while name backs off after a
// failure, ErrShutdown after Shutdown and ErrNilContext for a nil ctx.
//
// op's context carries ctx's values, as context.WithoutCancel(ctx) would,
// so that ctx's logger and values flow into the operation, which outlives
// the call. It has no deadline and is cancelled by Shutdown, not when ctx
// is; context.Cause reports the Map's cause, never ctx's. A context op
// derives from it with WithCancel or WithTimeout ends with Shutdown too.
//
// A non-nil error from op, or a panic (recovered as a *PanicError), is a
// failure: name is refused until its backoff has passed, InitialDelay
// after the first failure and twice as long after each further one, up to
// MaxDelay. A success forgets the backoff.
func (m *Map) Run(ctx context.Context, name string, op func(ctx context.Context) error) error {
	return m.RunThen(ctx, name, op, nil)
}

// RunThen is Run, and then, unless nil, is called with op's error (a
// *PanicError after a panic) on op's goroutine once name is no longer
// pending: IsPending reports false and a Run of name is no longer refused
// as running (it may back off). Wait waits for then to return.
func (m *Map) RunThen(ctx context.Context, name string, op func(ctx context.Context) error, then func(error)) error {
	if m.closed.Load() {
		return ErrShutdown
	}
	if ctx == nil {
		return ErrNilContext
	}
	s := m.shard(name)
	s.mu.Lock()
	prev := s.pending[name]
	if prev != nil && prev.state.Load() == opRunning {
		s.mu.Unlock()
		return ErrAlreadyRunning
	}
	if len(s.failed) > 0 {
		if b, ok := s.failed[name]; ok {
			if now := m.clock.Now(); !now.After(b.until) {
				err := &BackoffError{Name: name, Until: b.until, LastError: b.lastErr}
				s.mu.Unlock()
				return err
			}
		}
	}
	o := &operation{m: m, name: name, op: op, then: then, parent: ctx}
	s.startLocked(o)
	s.mu.Unlock()
	go o.run()
	return nil
}

// run is the goroutine of one operation.
func (o *operation) run() {
	var err error
	defer o.m.finish(o, &err)
	err = o.op(o)
}

// finish records the outcome of operation o, turning a panic into a
// *PanicError, marks it done (its name is no longer pending), calls its
// then and marks it finished. It is deferred by run, so it may recover. It
// writes nothing its shard's Run writes unless the operation failed, a
// backoff is to be forgotten or a Wait waits.
func (m *Map) finish(o *operation, errp *error) {
	name, then := o.name, o.then
	if r := recover(); r != nil {
		perr := &PanicError{Name: name, Value: r, Stack: debug.Stack()}
		m.logger.Error(perr, "Operation panicked", "operation", name, "stack", string(perr.Stack))
		*errp = perr
	}
	err := *errp
	// A Run that finds o done must see its backoff: record it first. A
	// failed entry of name can only be from an earlier operation of
	// name, which Run saw done under mu, so m.nFailed counts it.
	switch {
	case err != nil && !m.disableBackoff:
		s := m.shard(name)
		s.mu.Lock()
		b := s.failed[name]
		if b == nil {
			b = &backoff{}
			s.failed[name] = b
			m.nFailed.Add(1)
		}
		b.fail(m.clock.Now(), err, m.initialDelay, m.maxDelay)
		s.mu.Unlock()
	case m.nFailed.Load() > 0:
		s := m.shard(name)
		s.mu.Lock()
		if _, ok := s.failed[name]; ok {
			delete(s.failed, name)
			m.nFailed.Add(-1)
		}
		s.mu.Unlock()
	}
	// The closures are not needed any more: o stays in pending until
	// swept, and its context may outlive it.
	o.op, o.then = nil, nil
	o.state.Store(opDone)
	if then != nil {
		then(err)
	}
	o.state.Store(opFinished)
	// Wait increments waiters before it looks at the shards, so either it
	// sees o finished or this sees it waiting.
	if m.waiters.Load() > 0 {
		m.idleMu.Lock()
		if m.idle != nil && m.idleLocked() {
			close(m.idle)
			m.idle = nil
		}
		m.idleMu.Unlock()
	}
}

// idleLocked reports whether no operation runs. It is called with idleMu
// held.
func (m *Map) idleLocked() bool {
	for i := range m.shards {
		if m.shards[i].Value.busy() {
			return false
		}
	}
	return true
}

// IsPending reports whether an operation under name is running. It does
// not block.
func (m *Map) IsPending(name string) bool {
	s := m.shard(name)
	s.mu.Lock()
	o := s.pending[name]
	s.mu.Unlock()
	return o != nil && o.state.Load() == opRunning
}

// Wait blocks until no operation is running or ctx is done, and then
// returns nil or ctx.Err(). Operations started while Wait waits are waited
// for too.
func (m *Map) Wait(ctx context.Context) error {
	m.waiters.Add(1)
	defer m.waiters.Add(-1)
	m.idleMu.Lock()
	if m.idleLocked() {
		m.idleMu.Unlock()
		return nil
	}
	if m.idle == nil {
		m.idle = make(chan struct{})
	}
	idle := m.idle
	m.idleMu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown cancels the context of every running operation and makes every
// later Run return ErrShutdown. It does not wait: call Wait for that.
// Calling it again does nothing.
func (m *Map) Shutdown() {
	m.closed.Store(true)
	m.cancel()
}
