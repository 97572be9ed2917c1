package jitter

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/util/wait"
	testingclock "k8s.io/utils/clock/testing"
)

// pollUntil waits until cond holds, failing the test after
// wait.ForeverTestTimeout.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Microsecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}

// startEvery runs Every in a goroutine and returns its run counter and a
// stop function that cancels it and waits for it to return.
func startEvery(t *testing.T, fc *testingclock.FakeClock, period time.Duration, factor float64, sliding bool,
	during func(run int32)) (runs *atomic.Int32, stop func()) {
	t.Helper()
	runs = new(atomic.Int32)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run := EveryNonSliding
		if sliding {
			run = Every
		}
		run(ctx, fc, period, factor, func(context.Context) {
			n := runs.Add(1)
			if during != nil {
				during(n)
			}
		})
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return runs, stop
}

func TestEveryPlainPeriod(t *testing.T) {
	for _, sliding := range []bool{false, true} {
		t.Run(map[bool]string{false: "non-sliding", true: "sliding"}[sliding], func(t *testing.T) {
			const period = 10 * time.Second
			fc := testingclock.NewFakeClock(time.Unix(0, 0))
			runs, _ := startEvery(t, fc, period, 0, sliding, nil)
			for want := int32(1); want <= 5; want++ {
				pollUntil(t, "f ran and the timer is armed", func() bool { return runs.Load() == want && fc.HasWaiters() })
				fc.Step(period - 1)
				if !fc.HasWaiters() {
					t.Fatalf("run %d: timer fired before the period", want)
				}
				fc.Step(1)
			}
		})
	}
}

// TestEverySliding checks where the period starts: with f taking 4s of a
// 10s period, a non-sliding loop runs again 6s after f returns, a sliding
// one 10s after.
func TestEverySliding(t *testing.T) {
	tests := []struct {
		name    string
		sliding bool
		after   time.Duration // time after f returns until the next run
	}{
		{"non-sliding", false, 6 * time.Second},
		{"sliding", true, 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const period, work = 10 * time.Second, 4 * time.Second
			fc := testingclock.NewFakeClock(time.Unix(0, 0))
			var returned atomic.Bool
			runs, _ := startEvery(t, fc, period, 0, tc.sliding, func(run int32) {
				if run == 1 {
					fc.Step(work) // f's own running time
					returned.Store(true)
				}
			})
			pollUntil(t, "the first run returned and the timer is armed",
				func() bool { return returned.Load() && fc.HasWaiters() })
			fc.Step(tc.after - 1)
			if !fc.HasWaiters() {
				t.Fatalf("timer fired %v after f returned, want %v", tc.after-1, tc.after)
			}
			fc.Step(1)
			pollUntil(t, "the second run", func() bool { return runs.Load() == 2 })
		})
	}
}

func TestEveryJitter(t *testing.T) {
	const period, factor = 10 * time.Second, 0.5
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	runs, _ := startEvery(t, fc, period, factor, true, nil)
	var waits []time.Duration
	for want := int32(1); want <= 20; want++ {
		pollUntil(t, "f ran and the timer is armed", func() bool { return runs.Load() == want && fc.HasWaiters() })
		fc.Step(period - 1)
		if !fc.HasWaiters() {
			t.Fatalf("run %d: timer fired before the period", want)
		}
		// Find the jittered wait to a second. Once the timer is armed
		// again, runs tells whether it fired: f runs before the re-arm.
		waited := period - 1
		for runs.Load() == want {
			if waited > time.Duration(float64(period)*(1+factor)) {
				t.Fatalf("run %d: no run within period × (1 + factor)", want)
			}
			fc.Step(time.Second)
			waited += time.Second
			pollUntil(t, "the timer is armed", fc.HasWaiters)
		}
		waits = append(waits, waited)
	}
	distinct := map[time.Duration]bool{}
	for _, w := range waits {
		distinct[w] = true
	}
	if len(distinct) < 2 {
		t.Errorf("all 20 jittered waits were %v: no jitter", waits[0])
	}
}

func TestEveryStopsWhenContextDone(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	runs, stop := startEvery(t, fc, time.Second, 0.1, false, nil)
	pollUntil(t, "the first run", func() bool { return runs.Load() == 1 && fc.HasWaiters() })
	stop()
	fc.Step(time.Hour)
	if got := runs.Load(); got != 1 {
		t.Errorf("f ran %d times, want 1 (none after the context was cancelled)", got)
	}
	// A nil clock means the real clock; a done context returns at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Every(ctx, nil, time.Hour, 0, func(context.Context) { t.Error("f ran with a done context") })
}
