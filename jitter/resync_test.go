package jitter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
)

// enqueue is one Add seen by recorder.
type enqueue struct {
	at  time.Duration // since the fake clock's start
	key string
}

// recorder is a TypedDelayingInterface that records when each key is
// added, on a fake clock. Unlike a real delaying queue it starts no
// goroutine and arms no timer, so the Resync's timer is the fake clock's
// only waiter.
type recorder struct {
	clock *testingclock.FakeClock
	start time.Time

	mu   sync.Mutex
	adds []enqueue
}

var _ workqueue.TypedDelayingInterface[string] = (*recorder)(nil)

func newRecorder(fc *testingclock.FakeClock) *recorder { return &recorder{clock: fc, start: fc.Now()} }

func (r *recorder) Add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adds = append(r.adds, enqueue{at: r.clock.Since(r.start), key: key})
}

func (r *recorder) AddAfter(string, time.Duration) { panic("Resync must not call AddAfter") }
func (r *recorder) Len() int                       { return 0 }
func (r *recorder) Get() (string, bool)            { return "", true }
func (r *recorder) Done(string)                    {}
func (r *recorder) ShutDown()                      {}
func (r *recorder) ShutDownWithDrain()             {}
func (r *recorder) ShuttingDown() bool             { return false }

func (r *recorder) snapshot() []enqueue {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]enqueue(nil), r.adds...)
}

// newFakeResync returns a Resync of cfg on a fake clock at the Unix epoch
// (cfg.Clock is set to it) that enqueues into a recorder.
func newFakeResync(t *testing.T, cfg ResyncConfig) (*Resync[string], *testingclock.FakeClock, *recorder) {
	t.Helper()
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	q := newRecorder(fc)
	cfg.Clock = fc
	r, err := NewResync(q.Add, StringHash, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, fc, q
}

// startResync runs r.Run (a Resync's or a Sweep's) in a goroutine until
// the test ends.
func startResync(t *testing.T, r interface{ Run(context.Context) }) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

// drive steps fc by step until d has passed, each time after Run has armed
// its timer, that is after it has enqueued everything due.
func drive(t *testing.T, fc *testingclock.FakeClock, d, step time.Duration) {
	t.Helper()
	for end := fc.Now().Add(d); fc.Now().Before(end); {
		pollUntil(t, "Run waits", fc.HasWaiters)
		fc.Step(step)
	}
	pollUntil(t, "Run waits", fc.HasWaiters)
}

func keyNames(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return keys
}

func TestNewResyncRejectsBadInput(t *testing.T) {
	q := newRecorder(testingclock.NewFakeClock(time.Unix(0, 0)))
	tests := []struct {
		name string
		add  func(string)
		hash func(string) uint64
		cfg  ResyncConfig
	}{
		{"nil add function", nil, StringHash, ResyncConfig{Period: time.Minute}},
		{"nil hash", q.Add, nil, ResyncConfig{Period: time.Minute}},
		{"zero period", q.Add, StringHash, ResyncConfig{}},
		{"negative period", q.Add, StringHash, ResyncConfig{Period: -time.Second}},
		{"negative jitter", q.Add, StringHash, ResyncConfig{Period: time.Minute, Jitter: -0.1}},
		{"jitter of one period", q.Add, StringHash, ResyncConfig{Period: time.Minute, Jitter: 1}},
		{"negative slots", q.Add, StringHash, ResyncConfig{Period: time.Minute, Slots: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewResync(tc.add, tc.hash, tc.cfg)
			if !errors.Is(err, ErrInvalidConfig) || r != nil {
				t.Errorf("NewResync() = %v, %v; want nil, ErrInvalidConfig", r, err)
			}
		})
	}
	r, err := NewResync(q.Add, StringHash, ResyncConfig{Period: 10 * time.Nanosecond})
	if err != nil {
		t.Fatalf("NewResync(10ns period) = %v", err)
	}
	if r.slots != 10 {
		t.Errorf("slots of a 10ns period = %d, want 10", r.slots)
	}
}

// checkBalanced fails unless every slot holds ⌊n/slots⌋ or ⌈n/slots⌉ of
// the n keys; or, if peak > 0, at most ⌈peak/slots⌉.
func checkBalanced(t *testing.T, r *Resync[string], peak int) {
	t.Helper()
	n := r.Len()
	lo, hi := n/r.slots, (n+r.slots-1)/r.slots
	if peak > 0 {
		lo, hi = 0, (peak+r.slots-1)/r.slots
	}
	for i, keys := range r.slot {
		if len(keys) < lo || len(keys) > hi {
			t.Fatalf("slot %d holds %d of %d keys, want %d..%d", i, len(keys), n, lo, hi)
		}
	}
}

func TestResyncOffsetsBalancedAndStable(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 1))
	for _, slots := range []int{7, 100, 1000, 1024} {
		t.Run(fmt.Sprint("slots=", slots), func(t *testing.T) {
			fc := testingclock.NewFakeClock(time.Unix(0, 0))
			r, err := NewResync(newRecorder(fc).Add, StringHash, ResyncConfig{Period: time.Hour, Slots: slots})
			if err != nil {
				t.Fatal(err)
			}
			keys := keyNames("pvc", 3*slots+rnd.IntN(5*slots))
			offsets := map[string]time.Duration{}
			for i, k := range keys {
				r.Add(k)
				offsets[k] = r.Offset(k)
				if slots <= 100 || i%61 == 0 || i == len(keys)-1 {
					checkBalanced(t, r, 0)
				}
			}
			r.Add(keys[0]) // again: no change
			if r.Len() != len(keys) {
				t.Fatalf("Len() = %d, want %d", r.Len(), len(keys))
			}
			// Remove a random half; the others keep their offsets.
			rnd.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			removed, kept := keys[:len(keys)/2], keys[len(keys)/2:]
			for _, k := range removed {
				r.Remove(k)
			}
			r.Remove("never-added")
			for _, k := range kept {
				if got := r.Offset(k); got != offsets[k] {
					t.Fatalf("Offset(%q) = %v after removals, want %v", k, got, offsets[k])
				}
			}
			if got := r.Offset(removed[0]); got != -1 {
				t.Errorf("Offset(removed key) = %v, want -1", got)
			}
			// Adding back never fills a slot beyond ⌈peak/slots⌉.
			for i, k := range removed {
				r.Add(k)
				if slots <= 100 || i%61 == 0 || i == len(removed)-1 {
					checkBalanced(t, r, len(keys))
				}
			}
			for _, k := range keys {
				if off := r.Offset(k); off < 0 || off >= time.Hour {
					t.Fatalf("Offset(%q) = %v, want within [0, 1h)", k, off)
				}
			}
		})
	}
}

// periodSlices counts enqueues in [0, period) per 1/n of the period and returns
// the counts and the busiest count over the mean.
func periodSlices(adds []enqueue, period time.Duration, n int) ([]int, float64) {
	counts := make([]int, n)
	total := 0
	for _, a := range adds {
		if a.at >= 0 && a.at < period {
			counts[int(int64(a.at)*int64(n)/int64(period))]++
			total++
		}
	}
	busiest := 0
	for _, c := range counts {
		busiest = max(busiest, c)
	}
	return counts, float64(busiest) / (float64(total) / float64(n))
}

// TestResyncFlat is the flatness goal: 10,000 keys, a period cut into 100
// equal slices, busiest slice at most 1.2 × the mean, counted from the
// times the keys are really enqueued on a fake clock.
func TestResyncFlat(t *testing.T) {
	tests := []struct {
		name  string
		keys  int
		slots int
		bound float64 // the package documentation's bound
	}{
		{"10000 keys default slots", 10_000, 0, 1.0},
		{"10000 keys 1024 slots", 10_000, 1024, 1.1},
		{"12345 keys 1000 slots", 12_345, 1000, 1.06},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const period = 100 * time.Second
			r, fc, q := newFakeResync(t, ResyncConfig{Period: period, Slots: tc.slots})
			keys := keyNames("default/claim", tc.keys)
			for _, k := range keys {
				r.Add(k)
			}
			startResync(t, r)
			step := period / time.Duration(r.slots)
			drive(t, fc, 2*period-step, step)

			adds := q.snapshot()
			seen := map[string]int{}
			for _, a := range adds {
				if a.at < period {
					seen[a.key]++
				}
				if want := r.Offset(a.key) + a.at/period*period; a.at != want {
					t.Fatalf("%q enqueued at %v, want at its offset %v", a.key, a.at, want)
				}
			}
			if len(adds) != 2*tc.keys || len(seen) != tc.keys {
				t.Fatalf("%d enqueues of %d distinct keys in two periods, want each of %d keys once per period",
					len(adds), len(seen), tc.keys)
			}
			counts, ratio := periodSlices(adds, period, 100)
			t.Logf("busiest slice %.3f × mean; counts %v", ratio, counts)
			if ratio > 1.2 || ratio > tc.bound+1e-9 {
				t.Errorf("busiest slice gets %.3f × the mean, want at most 1.2 (bound %.2f)", ratio, tc.bound)
			}
		})
	}
}

// TestPlainHashIsNotFlat shows that TestResyncFlat can fail: the same keys
// at their plain hash positions break the 1.2 bound.
func TestPlainHashIsNotFlat(t *testing.T) {
	const period = 100 * time.Second
	var adds []enqueue
	for _, k := range keyNames("default/claim", 10_000) {
		adds = append(adds, enqueue{at: time.Duration(StringHash(k) % uint64(period)), key: k})
	}
	if _, ratio := periodSlices(adds, period, 100); ratio <= 1.2 {
		t.Errorf("plain hash offsets give a busiest slice of %.3f × the mean, want > 1.2", ratio)
	} else {
		t.Logf("plain hash: busiest slice %.3f × the mean", ratio)
	}
}

func TestResyncAddRemoveWhileRunning(t *testing.T) {
	const period = 10 * time.Second
	r, fc, q := newFakeResync(t, ResyncConfig{Period: period, Slots: 100})
	startResync(t, r)
	pollUntil(t, "Run waits", fc.HasWaiters)
	keys := keyNames("pv", 50)
	for _, k := range keys {
		r.Add(k)
	}
	// Run's timer, armed for the empty registry, lets drive step at
	// once: wait until Run has planned for the keys (on one CPU the steps
	// ran before Run, which then enqueued a whole period's keys at 10s).
	pollUntil(t, "Run plans the added keys", func() bool { return r.wake.Load() < int64(period) && fc.HasWaiters() })
	drive(t, fc, period, period/100)
	removeAt := fc.Since(q.start)
	for _, k := range keys[:25] {
		r.Remove(k)
	}
	drive(t, fc, 2*period, period/100)

	perKey := map[string][]time.Duration{}
	for _, a := range q.snapshot() {
		perKey[a.key] = append(perKey[a.key], a.at)
	}
	for i, k := range keys {
		times := perKey[k]
		if i < 25 {
			for _, at := range times {
				if at >= removeAt {
					t.Errorf("%q enqueued at %v, after its removal at %v", k, at, removeAt)
				}
			}
			continue
		}
		// Added during the first period: enqueued in it (or, if its
		// offset had passed, not), then once in each later period.
		if n := len(times); n < 2 || n > 3 {
			t.Errorf("%q enqueued %d times in three periods, want 2 or 3: %v", k, n, times)
		}
	}
}

func TestResyncJitter(t *testing.T) {
	const period, jitter = 10 * time.Second, 0.05
	r, fc, q := newFakeResync(t, ResyncConfig{Period: period, Slots: 100, Jitter: jitter, Rand: rand.New(rand.NewPCG(1, 2))})
	keys := keyNames("pv", 300)
	for _, k := range keys {
		r.Add(k)
	}
	startResync(t, r)
	drive(t, fc, 3*period, 100*time.Millisecond)
	r.Remove(keys[0])
	removeAt := fc.Since(q.start)
	drive(t, fc, time.Duration(jitter*float64(period)), 100*time.Millisecond)

	late := 0
	counts := map[string]int{}
	for _, a := range q.snapshot() {
		if a.key == keys[0] && a.at >= removeAt {
			t.Errorf("%q enqueued at %v after its removal at %v", a.key, a.at, removeAt)
		}
		off := r.Offset(a.key)
		if a.key == keys[0] {
			continue
		}
		// Time after the key's offset; the fake clock moves in steps of
		// 100ms, so an enqueue is seen up to 100ms after it is due.
		since := (a.at - off) % period
		if limit := time.Duration(jitter*float64(period)) + 100*time.Millisecond; since >= limit {
			t.Fatalf("%q enqueued %v after its offset, want less than %v", a.key, since, limit)
		}
		if since > 0 {
			late++
		}
		if a.at < 3*period {
			counts[a.key]++
		}
	}
	if late == 0 {
		t.Errorf("no enqueue was jittered")
	}
	for _, k := range keys[1:] {
		if counts[k] < 2 || counts[k] > 3 {
			t.Errorf("%q enqueued %d times in three periods, want about 3", k, counts[k])
		}
	}
}

// TestResyncWithWorkqueue runs a Resync into a real client-go delaying
// queue on the real clock and reads every key back.
func TestResyncWithWorkqueue(t *testing.T) {
	defer goleak.VerifyNone(t)
	q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "resync-test"})
	defer q.ShutDown()
	r, err := NewResync[string](q.Add, StringHash, ResyncConfig{Period: 50 * time.Millisecond, Slots: 10})
	if err != nil {
		t.Fatal(err)
	}
	keys := keyNames("pv", 20)
	for _, k := range keys {
		r.Add(k)
	}
	stop := startResync(t, r)
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	deadline := time.AfterFunc(10*time.Second, q.ShutDown)
	defer deadline.Stop()
	for len(want) > 0 {
		k, shutdown := q.Get()
		if shutdown {
			t.Fatalf("keys %v not enqueued within 10s", want)
		}
		delete(want, k)
		q.Done(k)
	}
	stop()
}

func TestResyncRunReturnsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	r, err := NewResync(newRecorder(fc).Add, StringHash, ResyncConfig{Period: time.Minute, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	r.Add("a")
	stop := startResync(t, r)
	pollUntil(t, "Run waits", fc.HasWaiters)
	stop()
	if fc.HasWaiters() {
		t.Errorf("Run left its timer armed after returning")
	}
}

func TestStringHash(t *testing.T) {
	// Golden values: the hash must not change between versions, or keys
	// would move within the period after an upgrade.
	tests := []struct {
		in   string
		want uint64
	}{
		{"", 0xf52a15e9a9b5e89b},
		{"a", 0x2c0bdbf481420f8},
		{"default/claim-0", 0xc4b9b1df905d7938},
		{"pvc-6f1c2a4e", 0xa723a8886bd886be},
	}
	for _, tc := range tests {
		if got := StringHash(tc.in); got != tc.want {
			t.Errorf("StringHash(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}

// removalGuard is a queue that fails the test when a key is added after
// Remove of it has returned.
type removalGuard struct {
	recorder
	t       *testing.T
	removed sync.Map // key -> struct{}: Remove(key) has returned
	adds    atomic.Int64
}

func (q *removalGuard) Add(key string) {
	q.adds.Add(1)
	// Yield, so that the batch Run is enqueueing takes long enough for
	// Removes to come in the middle of it.
	runtime.Gosched()
	if _, ok := q.removed.Load(key); ok {
		q.t.Errorf("%q enqueued after Remove(%q) returned", key, key)
	}
}

// TestResyncRemoveRacesRun removes keys while Run enqueues them on the
// real clock: once Remove has returned, the key must never be added.
func TestResyncRemoveRacesRun(t *testing.T) {
	q := &removalGuard{t: t}
	r, err := NewResync[string](q.Add, StringHash, ResyncConfig{Period: 5 * time.Millisecond, Slots: 5})
	if err != nil {
		t.Fatal(err)
	}
	keys := keyNames("pv", 2000)
	for _, k := range keys {
		r.Add(k)
	}
	stop := startResync(t, r)
	pollUntil(t, "Run enqueues", func() bool { return q.adds.Load() > int64(len(keys)) })
	for _, k := range keys {
		r.Remove(k)
		q.removed.Store(k, struct{}{})
	}
	// Give Run a few more periods to misbehave.
	before := q.adds.Load()
	for _, k := range keyNames("other", 10) {
		r.Add(k)
	}
	pollUntil(t, "Run enqueues the other keys", func() bool { return q.adds.Load() >= before+30 })
	stop()
	if r.Len() != 10 {
		t.Errorf("Len() = %d, want 10", r.Len())
	}
}

// TestResyncDue: Due is false before Run runs and after it returns, false
// while Run waits for a later slot, true from the slot's time on, and false
// again once Run has enqueued the slot's keys.
func TestResyncDue(t *testing.T) {
	const period = 10 * time.Second
	r, fc, q := newFakeResync(t, ResyncConfig{Period: period, Slots: 10})
	r.Add("pv1")
	if !r.Due(fc.Now()) {
		t.Errorf("Due before the first Run = false, want true (its Run has to start)")
	}
	stop := startResync(t, r)
	pollUntil(t, "Run waits", fc.HasWaiters)
	if r.Due(fc.Now()) {
		t.Errorf("Due while Run waits for a later slot = true, want false")
	}
	if !r.Due(fc.Now().Add(period)) {
		t.Errorf("Due a period later = false, want true")
	}
	fc.Step(period)
	pollUntil(t, "pv1 enqueued", func() bool { return len(q.snapshot()) == 1 })
	pollUntil(t, "Due false after the enqueue", func() bool { return !r.Due(fc.Now()) })
	stop()
	if r.Due(fc.Now().Add(2 * period)) {
		t.Errorf("Due after Run returned = true, want false")
	}
}

// TestResyncFirstRunStartsLate: a clock stepped a period between NewResync
// and the start of Run's goroutine (a Binder's Run starts its resyncs in
// goroutines that a loaded machine may run late) loses no enqueue: Due
// stays true until Run has started, and Run enqueues the key at once,
// without another step; a second Run counts from its own start.
func TestResyncFirstRunStartsLate(t *testing.T) {
	const period = 10 * time.Second
	r, fc, q := newFakeResync(t, ResyncConfig{Period: period, Slots: 10})
	r.Add("pv1")
	fc.Step(period)
	if !r.Due(fc.Now()) {
		t.Fatalf("Due after a period stepped before Run = false, want true")
	}
	stop := startResync(t, r)
	pollUntil(t, "pv1 enqueued without another step", func() bool { return len(q.snapshot()) == 1 })
	pollUntil(t, "Due false once Run planned", func() bool { return !r.Due(fc.Now()) })
	stop()

	fc.Step(period)
	stop = startResync(t, r)
	pollUntil(t, "the second Run waits", fc.HasWaiters)
	if n := len(q.snapshot()); n != 1 {
		t.Errorf("%d enqueues after a second Run started a period late, want 1 (it counts from its start)", n)
	}
	stop()
}
