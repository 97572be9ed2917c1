package jitter

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// TestResyncGrow checks that Grow, before, between or after Adds, leaves
// every key where it would be without it: the same offsets, the same
// keys removed and added again.
func TestResyncGrow(t *testing.T) {
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	cfg := ResyncConfig{Period: time.Hour, Slots: 50, Clock: fc}
	plain, err := NewResync(newRecorder(fc).Add, StringHash, cfg)
	if err != nil {
		t.Fatal(err)
	}
	grown, err := NewResync(newRecorder(fc).Add, StringHash, cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 600)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/claim-%d", i)
	}
	grown.Grow(5) // fewer than the slots: the key map only
	grown.Grow(400)
	for i, k := range keys {
		switch i {
		case 200:
			grown.Grow(10) // fewer than registered: nothing to do
		case 300:
			grown.Grow(1000) // room for more than it holds: copies them
		}
		plain.Add(k)
		grown.Add(k)
	}
	for i := 0; i < len(keys); i += 3 {
		plain.Remove(keys[i])
		grown.Remove(keys[i])
	}
	for i := 0; i < len(keys); i += 6 {
		plain.Add(keys[i])
		grown.Add(keys[i])
	}
	registered := 0
	for _, k := range keys {
		p, g := plain.Offset(k), grown.Offset(k)
		if p != g {
			t.Errorf("Offset(%q) = %v after Grow, %v without", k, g, p)
		}
		if p >= 0 {
			registered++
		}
	}
	if want := 600 - 200 + 100; registered != want {
		t.Errorf("%d keys registered, want %d", registered, want)
	}
}

// steppingClock is a fake clock that, once, moves by step while its first
// timer is being made: a clock stepped by another goroutine between Run's
// reading it and arming its timer.
type steppingClock struct {
	*testingclock.FakeClock
	step    time.Duration
	stepped bool
}

func (c *steppingClock) NewTimer(d time.Duration) clock.Timer {
	if !c.stepped {
		c.stepped = true
		c.Step(c.step)
	}
	return c.FakeClock.NewTimer(d)
}

// TestResyncArmsAtWake: when the clock moves while Run arms its timer, the
// key is still enqueued at the planned wake: a step to exactly that time
// enqueues it, as Due says it will (or Run, seeing the clock move, has
// already collected again at the new time).
func TestResyncArmsAtWake(t *testing.T) {
	const period = 10 * time.Second
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	sc := &steppingClock{FakeClock: fc, step: time.Second}
	q := newRecorder(fc)
	r, err := NewResync(q.Add, StringHash, ResyncConfig{Period: period, Slots: 10, Clock: sc})
	if err != nil {
		t.Fatal(err)
	}
	r.Add("pv1")
	off := r.Offset("pv1")
	if off <= 2*time.Second {
		t.Fatalf("pv1's offset %v leaves no room for the 1s step; pick another key", off)
	}
	stop := startResync(t, r)
	pollUntil(t, "Run waits", fc.HasWaiters)
	if got := fc.Since(time.Unix(0, 0)); got != time.Second {
		t.Fatalf("clock at %v after Run armed its timer, want the 1s step", got)
	}
	fc.SetTime(time.Unix(0, 0).Add(off)) // exactly pv1's slot
	// Run may have seen the clock move while it armed and already caught
	// up (it plans a later wake only after enqueuing): Due first.
	if !r.Due(fc.Now()) && len(q.snapshot()) == 0 {
		t.Fatalf("at pv1's offset %v Due is false and pv1 is not enqueued", off)
	}
	pollUntil(t, "pv1 enqueued at its slot", func() bool { return len(q.snapshot()) == 1 })
	if at := q.snapshot()[0].at; at != off {
		t.Errorf("pv1 enqueued at %v, want its offset %v", at, off)
	}
	stop()
}
