package operations

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/util/wait"
	testingclock "k8s.io/utils/clock/testing"
)

var errTest = errors.New("test failure")

// discard drops the panic logs of tests that panic on purpose.
var discard = logr.Discard()

// waitIdle waits for every operation of m to finish.
func waitIdle(t *testing.T, m *Map) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait.ForeverTestTimeout)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatalf("Wait() = %v, want nil", err)
	}
}

// blocker is an operation that runs until released.
type blocker struct {
	started chan struct{}
	release chan struct{}
	err     error
}

func newBlocker(err error) *blocker {
	return &blocker{started: make(chan struct{}), release: make(chan struct{}), err: err}
}

func (b *blocker) op(context.Context) error {
	close(b.started)
	<-b.release
	return b.err
}

func TestRunRefusesRunningName(t *testing.T) {
	m := New(Config{})
	b := newBlocker(nil)
	if err := m.Run(context.Background(), "a", b.op); err != nil {
		t.Fatalf("Run(a) = %v, want nil", err)
	}
	<-b.started
	if !m.IsPending("a") {
		t.Errorf("IsPending(a) = false while running, want true")
	}
	if m.IsPending("b") {
		t.Errorf("IsPending(b) = true, want false")
	}
	ran := make(chan struct{})
	if err := m.Run(context.Background(), "a", func(context.Context) error { close(ran); return nil }); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run(a) = %v, want ErrAlreadyRunning", err)
	}
	other := make(chan struct{})
	if err := m.Run(context.Background(), "b", func(context.Context) error { close(other); return nil }); err != nil {
		t.Errorf("Run(b) while a runs = %v, want nil", err)
	}
	<-other
	close(b.release)
	waitIdle(t, m)
	select {
	case <-ran:
		t.Errorf("refused operation ran")
	default:
	}
	if m.IsPending("a") {
		t.Errorf("IsPending(a) = true after it finished, want false")
	}
	if err := m.Run(context.Background(), "a", func(context.Context) error { return nil }); err != nil {
		t.Errorf("Run(a) after success = %v, want nil", err)
	}
	waitIdle(t, m)
}

// step is one Run attempt in a backoff scenario.
type step struct {
	advance time.Duration // fake time to step before Run
	fail    bool          // the operation, if it runs, fails
	want    error         // nil, or ErrBackoff
	until   time.Duration // for ErrBackoff: Until - start
}

func TestRunBackoff(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{{
		name: "first failure backs off 500ms, inclusive as in Kubernetes",
		steps: []step{
			{fail: true},
			{want: ErrBackoff, until: 500 * ms},
			{advance: 500 * ms, want: ErrBackoff, until: 500 * ms},
			{advance: 1, fail: false},
			{},
		},
	}, {
		name: "consecutive failures double",
		steps: []step{
			{fail: true},                    // t=0, until 0.5s
			{advance: 501 * ms, fail: true}, // t=0.501, until 1.501
			{want: ErrBackoff, until: 1501 * ms},
			{advance: 1001 * ms, fail: true}, // t=1.502, until 3.502
			{want: ErrBackoff, until: 3502 * ms},
		},
	}, {
		name: "success resets the backoff",
		steps: []step{
			{fail: true},
			{advance: 501 * ms, fail: true},
			{advance: 1001 * ms}, // succeeds at t=1.502
			{fail: true},         // first failure again: 500ms
			{want: ErrBackoff, until: 2002 * ms},
		},
	}, {
		name: "custom delays are capped",
		cfg:  Config{InitialDelay: time.Second, MaxDelay: 3 * time.Second},
		steps: []step{
			{fail: true},                     // until 1s
			{advance: 1001 * ms, fail: true}, // t=1.001, delay 2s, until 3.001
			{advance: 2001 * ms, fail: true}, // t=3.002, delay 3s (capped), until 6.002
			{want: ErrBackoff, until: 6002 * ms},
			{advance: 3001 * ms, fail: true}, // t=6.003, delay 3s, until 9.003
			{want: ErrBackoff, until: 9003 * ms},
		},
	}, {
		name: "disabled backoff runs again at once",
		cfg:  Config{DisableBackoff: true},
		steps: []step{
			{fail: true},
			{fail: true},
			{},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Unix(1000, 0)
			fc := testingclock.NewFakeClock(start)
			tc.cfg.Clock = fc
			m := New(tc.cfg)
			for i, s := range tc.steps {
				fc.Step(s.advance)
				ran := false
				err := m.Run(context.Background(), "op", func(context.Context) error {
					ran = true
					if s.fail {
						return fmt.Errorf("step %d: %w", i, errTest)
					}
					return nil
				})
				waitIdle(t, m)
				if s.want == nil {
					if err != nil || !ran {
						t.Fatalf("step %d: Run() = %v, ran %v; want nil, ran", i, err, ran)
					}
					continue
				}
				if !errors.Is(err, s.want) || ran {
					t.Fatalf("step %d: Run() = %v, ran %v; want %v, not ran", i, err, ran, s.want)
				}
				var berr *BackoffError
				if !errors.As(err, &berr) {
					t.Fatalf("step %d: Run() = %T, want *BackoffError", i, err)
				}
				if got := berr.Until.Sub(start); got != s.until {
					t.Errorf("step %d: Until = start+%v, want start+%v", i, got, s.until)
				}
				if berr.Name != "op" || !errors.Is(err, errTest) || !IsBackoff(err) {
					t.Errorf("step %d: error %v: want name op, wrapping the last failure, IsBackoff", i, err)
				}
			}
		})
	}
}

func TestRunDefaultBackoffCap(t *testing.T) {
	t.Parallel()
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	m := New(Config{Clock: fc})
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second, DefaultMaxDelay, DefaultMaxDelay}
	for i, d := range want {
		if err := m.Run(context.Background(), "op", func(context.Context) error { return errTest }); err != nil {
			t.Fatalf("failure %d: Run() = %v, want nil", i, err)
		}
		waitIdle(t, m)
		var berr *BackoffError
		if err := m.Run(context.Background(), "op", func(context.Context) error { return nil }); !errors.As(err, &berr) {
			t.Fatalf("failure %d: Run() = %v, want *BackoffError", i, err)
		}
		if got := berr.Until.Sub(fc.Now()); got != d {
			t.Errorf("failure %d: delay %v, want %v", i, got, d)
		}
		fc.Step(d + 1)
	}
}

func TestRunRecoversPanic(t *testing.T) {
	t.Parallel()
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	m := New(Config{Clock: fc, Logger: discard})
	tests := []struct {
		name    string
		value   any
		wantErr error // wrapped by the *PanicError, if any
	}{
		{name: "string", value: "boom"},
		{name: "error", value: errTest, wantErr: errTest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := m.Run(context.Background(), tc.name, func(context.Context) error { panic(tc.value) }); err != nil {
				t.Fatalf("Run() = %v, want nil", err)
			}
			waitIdle(t, m)
			if m.IsPending(tc.name) {
				t.Fatalf("IsPending() = true after the panic, want false")
			}
			err := m.Run(context.Background(), tc.name, func(context.Context) error { return nil })
			var perr *PanicError
			if !IsBackoff(err) || !errors.As(err, &perr) {
				t.Fatalf("Run() after panic = %v, want a *BackoffError wrapping a *PanicError", err)
			}
			if perr.Name != tc.name || perr.Value != tc.value || len(perr.Stack) == 0 {
				t.Errorf("PanicError = {%q, %v, %d bytes of stack}, want {%q, %v, a stack}",
					perr.Name, perr.Value, len(perr.Stack), tc.name, tc.value)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("Run() = %v, want it to wrap %v", err, tc.wantErr)
			}
			fc.Step(DefaultInitialDelay + 1)
			if err := m.Run(context.Background(), tc.name, func(context.Context) error { return nil }); err != nil {
				t.Errorf("Run() after the backoff = %v, want nil", err)
			}
			waitIdle(t, m)
		})
	}
}

func TestShutdown(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := New(Config{})
	var cancelled atomic.Int32
	started := make(chan struct{}, 3)
	for i := range 3 {
		err := m.Run(context.Background(), fmt.Sprint("op-", i), func(ctx context.Context) error {
			started <- struct{}{}
			<-ctx.Done()
			cancelled.Add(1)
			return ctx.Err()
		})
		if err != nil {
			t.Fatalf("Run(op-%d) = %v, want nil", i, err)
		}
	}
	for range 3 {
		<-started
	}
	short, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Wait(short); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait(cancelled ctx) with running operations = %v, want context.Canceled", err)
	}
	m.Shutdown()
	waitIdle(t, m)
	if got := cancelled.Load(); got != 3 {
		t.Errorf("%d operations saw their context cancelled, want 3", got)
	}
	if err := m.Run(context.Background(), "late", func(context.Context) error { return nil }); !errors.Is(err, ErrShutdown) {
		t.Errorf("Run() after Shutdown = %v, want ErrShutdown", err)
	}
	m.Shutdown() // a second call does nothing
}

func TestWaitWaitsForAll(t *testing.T) {
	m := New(Config{})
	if err := m.Wait(context.Background()); err != nil {
		t.Fatalf("Wait() on an empty map = %v, want nil", err)
	}
	const n = 100
	var done atomic.Int32
	release := make(chan struct{})
	for i := range n {
		if err := m.Run(context.Background(), fmt.Sprint(i), func(context.Context) error {
			<-release
			done.Add(1)
			return nil
		}); err != nil {
			t.Fatalf("Run(%d) = %v", i, err)
		}
	}
	waited := make(chan error)
	go func() { waited <- m.Wait(context.Background()) }()
	close(release)
	if err := <-waited; err != nil {
		t.Fatalf("Wait() = %v, want nil", err)
	}
	if got := done.Load(); got != n {
		t.Errorf("Wait returned after %d of %d operations", got, n)
	}
}

func TestRunConcurrentSameName(t *testing.T) {
	m := New(Config{DisableBackoff: true})
	var running, maxRunning, runs atomic.Int32
	op := func(context.Context) error {
		n := running.Add(1)
		for {
			old := maxRunning.Load()
			if n <= old || maxRunning.CompareAndSwap(old, n) {
				break
			}
		}
		runs.Add(1)
		running.Add(-1)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait.ForeverTestTimeout)
	defer cancel()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for runs.Load() < 100 {
				err := m.Run(context.Background(), "same", op)
				if err != nil && !errors.Is(err, ErrAlreadyRunning) {
					errs <- err
					return
				}
				if ctx.Err() != nil {
					errs <- ctx.Err()
					return
				}
				runtime.Gosched() // let the operation run
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("Run() = %v, want nil or ErrAlreadyRunning", err)
		}
	}
	waitIdle(t, m)
	if got := maxRunning.Load(); got != 1 {
		t.Errorf("at most %d operations ran at once under one name, want 1", got)
	}
}

func TestErrorMessages(t *testing.T) {
	berr := &BackoffError{Name: "delete-pv-1", Until: time.Unix(0, 0).UTC(), LastError: errTest}
	perr := &PanicError{Name: "delete-pv-2", Value: "boom"}
	tests := []struct {
		err  error
		want string
	}{
		{berr, `operations: "delete-pv-1" failed, no retries permitted until 1970-01-01T00:00:00Z: test failure`},
		{perr, `operations: "delete-pv-2" panicked: boom`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	if perr.Unwrap() != nil {
		t.Errorf("PanicError{Value: string}.Unwrap() = %v, want nil", perr.Unwrap())
	}
}

// TestRunContext: an operation's context carries the caller's values (its
// logger among them), outlives the caller's context and ends with
// Shutdown.
func TestRunContext(t *testing.T) {
	t.Parallel()
	type key struct{}
	m := New(Config{})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "caller"))
	got := make(chan any, 1)
	opCtx := make(chan context.Context, 1)
	if err := m.Run(ctx, "op", func(ctx context.Context) error {
		got <- ctx.Value(key{})
		opCtx <- ctx
		<-ctx.Done()
		return ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "caller" {
		t.Errorf("operation's ctx.Value = %v, want the caller's %q", v, "caller")
	}
	c := <-opCtx
	cancel()
	if err := c.Err(); err != nil {
		t.Fatalf("operation's context ended with the caller's: %v", err)
	}
	m.Shutdown()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(c.Err(), context.Canceled) {
		t.Errorf("operation's context after Shutdown: %v, want Canceled", c.Err())
	}
}

// TestRunContextCause: the caller's cancellation cause does not leak into
// the operation's context, and contexts derived from it end with Shutdown
// with the Map's cause.
func TestRunContextCause(t *testing.T) {
	t.Parallel()
	errCaller := errors.New("caller gone")
	m := New(Config{})
	ctx, cancel := context.WithCancelCause(context.Background())
	type derived struct{ op, child context.Context }
	got := make(chan derived, 1)
	if err := m.Run(ctx, "op", func(opCtx context.Context) error {
		child, stop := context.WithTimeout(opCtx, time.Hour)
		defer stop()
		got <- derived{opCtx, child}
		<-child.Done()
		return child.Err()
	}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	cancel(errCaller)
	if err := context.Cause(d.op); err != nil {
		t.Errorf("context.Cause(operation's ctx) after the caller's cancel = %v, want nil", err)
	}
	if err := d.child.Err(); err != nil {
		t.Errorf("derived ctx.Err() after the caller's cancel = %v, want nil", err)
	}
	if _, ok := d.child.Deadline(); !ok {
		t.Errorf("derived WithTimeout ctx has no deadline")
	}
	m.Shutdown()
	waitIdle(t, m)
	for what, c := range map[string]context.Context{"operation's": d.op, "derived": d.child} {
		if err := context.Cause(c); !errors.Is(err, context.Canceled) {
			t.Errorf("context.Cause(%s ctx) after Shutdown = %v, want context.Canceled", what, err)
		}
	}
}

func TestRunNilContext(t *testing.T) {
	t.Parallel()
	m := New(Config{})
	var ran atomic.Bool
	//nolint:staticcheck // SA1012: a nil context on purpose, to test its refusal.
	if err := m.Run(nil, "op", func(context.Context) error { ran.Store(true); return nil }); !errors.Is(err, ErrNilContext) {
		t.Errorf("Run(nil ctx) = %v, want ErrNilContext", err)
	}
	waitIdle(t, m)
	if ran.Load() || m.IsPending("op") {
		t.Errorf("Run(nil ctx) started the operation or left it pending")
	}
}

// TestRunThen: then gets op's error once the name no longer runs (a Run of
// it is not refused as running), and Wait waits for then.
func TestRunThen(t *testing.T) {
	t.Parallel()
	m := New(Config{DisableBackoff: true})
	opErr := errors.New("op failed")
	started, release := make(chan struct{}), make(chan struct{})
	type seen struct {
		err, rerun error
	}
	got := make(chan seen, 1)
	err := m.RunThen(context.Background(), "a", func(context.Context) error { return opErr }, func(err error) {
		close(started)
		<-release
		rerun := m.Run(context.Background(), "a", func(context.Context) error { return nil })
		got <- seen{err: err, rerun: rerun}
	})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if m.IsPending("a") {
		t.Error("the name is still pending while then runs")
	}
	// Wait on a cancelled context returns nil only when nothing runs.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Wait(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait while then runs = %v, want context.Canceled (not idle)", err)
	}
	close(release)
	s := <-got
	if !errors.Is(s.err, opErr) || s.rerun != nil {
		t.Errorf("then saw err %v and a Run of the name %v; want %v and nil", s.err, s.rerun, opErr)
	}
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}
