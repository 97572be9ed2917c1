package jitter

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// Every calls f at once and then again each time a wait has passed after
// f returned, until ctx is done, and returns when ctx is done; f's last
// call has returned by then. Each wait lasts period × (1 + r·factor) for a
// fresh random r in [0, 1), as with wait.JitterUntil; a factor of 0 or
// less waits exactly period. EveryNonSliding counts f's running time as
// part of the period instead.
//
// The waits run on clk (nil: the real clock), so tests drive Every with a
// fake clock. period must be positive; a non-positive period calls f back
// to back, as wait.JitterUntil does. A panic in f is logged and re-raised,
// as in wait.
func Every(ctx context.Context, clk clock.WithTicker, period time.Duration, factor float64, f func(context.Context)) {
	every(ctx, clk, period, factor, true, f)
}

// EveryNonSliding is Every with each wait starting when f is called, so
// that f's running time is part of the period (wait.NonSlidingUntil's
// behaviour): f is called every period, unless it runs longer than that.
func EveryNonSliding(ctx context.Context, clk clock.WithTicker, period time.Duration, factor float64, f func(context.Context)) {
	every(ctx, clk, period, factor, false, f)
}

func every(ctx context.Context, clk clock.WithTicker, period time.Duration, factor float64, sliding bool, f func(context.Context)) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	wait.BackoffUntilWithContext(ctx, f, &jittered{clock: clk, period: period, factor: factor}, sliding)
}

// jittered is a wait.BackoffManager that waits period × (1 + r·factor) on
// an injected clock. wait.NewJitteredBackoffManager does the same but
// needs a full clock.Clock and is deprecated.
type jittered struct {
	clock  clock.WithTicker
	period time.Duration
	factor float64
	timer  clock.Timer
}

var _ wait.BackoffManager = (*jittered)(nil)

// Backoff returns the timer for the next wait, reusing one timer.
func (j *jittered) Backoff() clock.Timer {
	d := j.period
	if j.factor > 0 {
		d = wait.Jitter(d, j.factor)
	}
	if j.timer == nil {
		j.timer = j.clock.NewTimer(d)
	} else {
		j.timer.Reset(d)
	}
	return j.timer
}
