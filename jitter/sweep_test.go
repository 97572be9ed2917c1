package jitter

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	testingclock "k8s.io/utils/clock/testing"
)

// parted is a store of keys split into parts, as a sharded cache is; its
// keys method is a Sweep's. It counts the calls of each part.
type parted struct {
	mu    sync.Mutex
	parts [][]string
	asked []int
}

func newParted(parts, perPart int) *parted {
	p := &parted{parts: make([][]string, parts), asked: make([]int, parts)}
	for i := range p.parts {
		for j := range perPart {
			p.parts[i] = append(p.parts[i], fmt.Sprintf("p%d-%d", i, j))
		}
	}
	return p
}

func (p *parted) keys(part int, dst []string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked[part]++
	return append(dst, p.parts[part]...)
}

// remove drops key from its part.
func (p *parted) remove(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, keys := range p.parts {
		p.parts[i] = slices.DeleteFunc(keys, func(k string) bool { return k == key })
	}
}

// snapshot returns copies of the parts' keys and of the counts of calls.
func (p *parted) snapshot() (parts [][]string, asked []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, keys := range p.parts {
		parts = append(parts, slices.Clone(keys))
	}
	return parts, slices.Clone(p.asked)
}

// partOf returns the part a key of newParted belongs to.
func partOf(key string) int {
	digits, _, _ := strings.Cut(strings.TrimPrefix(key, "p"), "-")
	part, err := strconv.Atoi(digits)
	if err != nil {
		panic(fmt.Sprintf("key %q is not one of newParted's", key))
	}
	return part
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newFakeSweep(t *testing.T, parts int, p *parted, cfg ResyncConfig) (*Sweep[string], *testingclock.FakeClock, *recorder) {
	t.Helper()
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	q := newRecorder(fc)
	cfg.Clock = fc
	s, err := NewSweep(parts, p.keys, q.Add, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, fc, q
}

func TestNewSweepRejectsBadInput(t *testing.T) {
	keys := func(int, []string) []string { return nil }
	add := func(string) {}
	for _, tc := range []struct {
		name  string
		keys  func(int, []string) []string
		add   func(string)
		parts int
		cfg   ResyncConfig
		want  string
	}{
		{"nil keys", nil, add, 4, ResyncConfig{Period: time.Second}, "nil keys function"},
		{"nil add", keys, nil, 4, ResyncConfig{Period: time.Second}, "nil add function"},
		{"no period", keys, add, 4, ResyncConfig{}, "period 0s is not positive"},
		{"no parts", keys, add, 0, ResyncConfig{Period: time.Second}, "0 parts"},
		{"parts beyond the period's ns", keys, add, 5, ResyncConfig{Period: 4}, "5 parts for a period of 4ns"},
		{"slots other than the parts", keys, add, 4, ResyncConfig{Period: time.Second, Slots: 8}, "8 slots for 4 parts"},
		{"jitter of 1", keys, add, 4, ResyncConfig{Period: time.Second, Jitter: 1}, "jitter 1 is not in [0, 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSweep(tc.parts, tc.keys, tc.add, tc.cfg)
			if s != nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewSweep = %v, %v; want nil and an ErrInvalidConfig saying %q", s, err, tc.want)
			}
		})
	}
	if _, err := NewSweep(4, keys, add, ResyncConfig{Period: time.Second, Slots: 4}); err != nil {
		t.Errorf("NewSweep with Slots equal to the parts: %v", err)
	}
}

// TestSweepEachKeyOncePerPeriod: over three periods every key is added
// three times, each time at its part's offset, and each part is asked for
// its keys once per period.
func TestSweepEachKeyOncePerPeriod(t *testing.T) {
	const period, parts = 8 * time.Second, 8
	p := newParted(parts, 5)
	s, fc, q := newFakeSweep(t, parts, p, ResyncConfig{Period: period})
	for i := range parts {
		if got, want := s.Offset(i), time.Duration(i)*time.Second; got != want {
			t.Errorf("Offset(%d) = %v, want %v", i, got, want)
		}
	}
	if s.Offset(-1) != -1 || s.Offset(parts) != -1 {
		t.Errorf("Offset out of range = %v, %v; want -1", s.Offset(-1), s.Offset(parts))
	}
	startResync(t, s)
	drive(t, fc, 3*period-period/16, period/16)

	counts := map[string]int{}
	for _, a := range q.snapshot() {
		counts[a.key]++
		if off := a.at % period; off != s.Offset(partOf(a.key)) {
			t.Errorf("%q added at %v into the period, want its part's offset %v", a.key, off, s.Offset(partOf(a.key)))
		}
	}
	// Part 0's offset is the period's start, when Run started: it is
	// swept at once, and then at 8s and 16s; the clock stops at 23.5s.
	stored, asked := p.snapshot()
	for i, keys := range stored {
		const want = 3
		if asked[i] != want {
			t.Errorf("part %d asked for its keys %d times, want %d", i, asked[i], want)
		}
		for _, k := range keys {
			if counts[k] != want {
				t.Errorf("%q added %d times, want %d", k, counts[k], want)
			}
		}
	}
}

// TestSweepAddsWhatThePartHoldsThen: a key removed from the store is not
// added at the next sweep, one put in is, without telling the Sweep.
func TestSweepAddsWhatThePartHoldsThen(t *testing.T) {
	const period, parts = 4 * time.Second, 4
	p := newParted(parts, 3)
	s, fc, q := newFakeSweep(t, parts, p, ResyncConfig{Period: period})
	startResync(t, s)
	drive(t, fc, period, period/8)
	p.remove("p2-1")
	p.mu.Lock()
	p.parts[3] = append(p.parts[3], "p3-new")
	p.mu.Unlock()
	removedAt := fc.Since(q.start)
	drive(t, fc, period, period/8)

	var newAdds int
	for _, a := range q.snapshot() {
		if a.key == "p2-1" && a.at >= removedAt {
			t.Errorf("p2-1 added at %v, after its removal at %v", a.at, removedAt)
		}
		if a.key == "p3-new" {
			newAdds++
		}
	}
	if newAdds != 1 {
		t.Errorf("p3-new added %d times in the period after it was stored, want 1", newAdds)
	}
}

// TestSweepLate: a Run woken more than a period late sweeps every part
// once, at once, and a Run woken two slots late sweeps both slots' parts.
func TestSweepLate(t *testing.T) {
	const period, parts = 4 * time.Second, 4
	p := newParted(parts, 2)
	s, fc, q := newFakeSweep(t, parts, p, ResyncConfig{Period: period})
	startResync(t, s)
	pollUntil(t, "Run waits", fc.HasWaiters)
	// Part 0 (offset 0) was swept when Run started at 0.
	if got := len(q.snapshot()); got != 2 {
		t.Fatalf("%d keys added at the start, want part 0's 2", got)
	}
	fc.Step(3 * period)
	pollUntil(t, "every part swept", func() bool { return len(q.snapshot()) == 2+parts*2 })
	pollUntil(t, "Run waits again", func() bool { return !s.Due(fc.Now()) })
	_, asked := p.snapshot()
	for i, n := range asked {
		if want := 1 + btoi(i == 0); n != want {
			t.Errorf("part %d asked %d times after a step of 3 periods, want %d", i, n, want)
		}
	}
	fc.Step(period / 2) // two slots
	pollUntil(t, "two more parts swept", func() bool { return len(q.snapshot()) == 2+parts*2+4 })
}

// TestSweepJitter: each part's sweep comes within Jitter·Period after its
// offset, once per period, and some come later than the offset.
func TestSweepJitter(t *testing.T) {
	const period, parts, jitter = 10 * time.Second, 20, 0.1
	p := newParted(parts, 2)
	s, fc, q := newFakeSweep(t, parts, p, ResyncConfig{Period: period, Jitter: jitter, Rand: rand.New(rand.NewPCG(1, 2))})
	startResync(t, s)
	drive(t, fc, 3*period, 50*time.Millisecond)

	late := 0
	limit := time.Duration(jitter*float64(period)) + 50*time.Millisecond
	for _, a := range q.snapshot() {
		since := (a.at - s.Offset(partOf(a.key)) + period) % period
		if since >= limit {
			t.Fatalf("%q added %v after its part's offset, want less than %v", a.key, since, limit)
		}
		if since > 0 {
			late++
		}
	}
	if late == 0 {
		t.Errorf("no sweep was jittered")
	}
	_, asked := p.snapshot()
	for i, n := range asked {
		if n < 2 || n > 3 {
			t.Errorf("part %d asked %d times in three periods, want about 3", i, n)
		}
	}
}

// TestSweepDue: Due as Resync's: true before the first Run plans, false
// while it waits, true from a slot's time until the slot is swept, false
// after Run returns; a first Run that starts a period late sweeps at once.
func TestSweepDue(t *testing.T) {
	const period, parts = 10 * time.Second, 10
	p := newParted(parts, 1)
	s, fc, q := newFakeSweep(t, parts, p, ResyncConfig{Period: period})
	fc.Step(period)
	if !s.Due(fc.Now()) {
		t.Errorf("Due before the first Run = false, want true")
	}
	stop := startResync(t, s)
	pollUntil(t, "the missed period swept without a step", func() bool { return len(q.snapshot()) == parts })
	pollUntil(t, "Due false once Run planned", func() bool { return !s.Due(fc.Now()) })
	if !s.Due(fc.Now().Add(period / parts)) {
		t.Errorf("Due at the next slot = false, want true")
	}
	stop()
	if s.Due(fc.Now().Add(2 * period)) {
		t.Errorf("Due after Run returned = true, want false")
	}
}

func TestSweepRunReturnsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newParted(2, 1)
	s, fc, _ := newFakeSweep(t, 2, p, ResyncConfig{Period: time.Minute})
	stop := startResync(t, s)
	pollUntil(t, "Run waits", fc.HasWaiters)
	stop()
	if fc.HasWaiters() {
		t.Errorf("Run left its timer armed after returning")
	}
}
