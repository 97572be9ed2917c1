package bindertest

import "k8s.io/utils/clock"

// Config configures a Server. The zero value is valid: the real clock,
// events delivered before the write returns, no seed, DefaultHistory.
type Config struct {
	// Clock stamps creation, deletion and phase transition times and times
	// injected latency. Nil means clock.RealClock{}. Use
	// k8s.io/utils/clock/testing.FakeClock in tests.
	Clock clock.Clock
	// AsyncEvents makes the Server deliver events to handlers
	// (AddEventHandler) on a goroutine of its own, after the write that
	// caused them has returned, as an informer's handlers see them: a
	// client can no longer rely on its handlers having seen its own write.
	// Use WaitForEvents to wait for the deliveries. The goroutine runs only
	// while deliveries are queued. False (the default) delivers them before
	// the write returns.
	AsyncEvents bool
	// Seed, when set, makes a run replayable from one number: every fault
	// with a Fraction and no Seed of its own, and every watch fault, draws
	// from its own random stream derived from *Seed and the number of
	// faults injected before it. It changes nothing else (UIDs and names
	// are numbered in order either way). Nil means unseeded.
	Seed *int64
	// History is how many recent events the Server keeps so that a watch
	// can resume from a recent resourceVersion. A watch from a
	// resourceVersion older than the history fails with a 410 Gone
	// (Expired) error, on which client-go reflectors relist. Zero means
	// DefaultHistory; a negative value keeps none: only a watch from the
	// current resourceVersion resumes.
	History int
	// SharedResults makes every request that returns an object (Create,
	// Update, UpdateStatus, Get and their typed forms) return the stored
	// version itself instead of a deep copy: it is shared with the Server
	// and with event handlers, so the caller must never modify it, as
	// handlers must never modify theirs. A binder.Binder never modifies
	// what its API returns (binder.VolumeAPI), so a Server that only a
	// Binder writes to can set it: the Binder's cache of the versions it
	// wrote then shares them with the Server instead of holding copies
	// (one deep copy less per write, about 1 KB of heap less per bound
	// pair). False (the default) returns copies the caller owns.
	SharedResults bool
	// AdoptSeeds makes Seed and SeedInvalid store the objects they are
	// given instead of deep copies: Seed sets their resourceVersion, uid,
	// creationTimestamp and defaults, whether or not it succeeds, and the
	// caller must neither use nor modify them afterwards (nor pass one
	// twice). It saves a copy of every seeded object, which matters when
	// seeding millions of them. False (the default) copies them.
	AdoptSeeds bool
}

// New returns an empty Server with the zero Config: NewWithConfig(Config{}).
// It starts no goroutines.
func New() *Server { return NewWithConfig(Config{}) }

// NewWithConfig returns an empty Server configured by cfg. It starts no
// goroutines.
func NewWithConfig(cfg Config) *Server {
	s := &Server{clk: cfg.Clock, async: cfg.AsyncEvents, sharedResults: cfg.SharedResults, adoptSeeds: cfg.AdoptSeeds}
	if s.clk == nil {
		s.clk = clock.RealClock{}
	}
	if cfg.Seed != nil {
		s.seed, s.seeded = *cfg.Seed, true
	}
	switch {
	case cfg.History == 0:
		s.hist = newRing(DefaultHistory)
	case cfg.History < 0:
		s.hist = newRing(0)
	default:
		s.hist = newRing(cfg.History)
	}
	for k := range s.objs {
		s.objs[k] = newStore(Kind(k).namespaced())
	}
	return s
}
