package jitter

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// grid cuts time into periods of period ns starting at multiples of period
// since the Unix epoch, and each period into slots equal slots: the
// schedule Resync and Sweep share.
type grid struct {
	period int64 // ns
	slots  int
}

// runs is what Resync and Sweep keep about their Runs: one at a time, the
// first counting its periods from when the Resync or Sweep was made, and
// when the running one next wakes, for Due.
type runs struct {
	// wake is when Run next wakes (ns since the epoch), as it last
	// planned it; made until the first Run plans, math.MaxInt64 once a
	// Run has returned.
	wake atomic.Int64
	// made is when the Resync or Sweep was made (ns since the epoch).
	made int64
	// runMu is held by Run: one Run at a time; ran, under it, says a
	// Run has started.
	runMu sync.Mutex
	ran   bool
}

// init records now (ns since the epoch) as when the Resync or Sweep was
// made.
func (r *runs) init(now int64) {
	r.made = now
	r.wake.Store(now)
}

// begin waits for any other Run to return, then returns the first absolute
// slot of g that the Run starting now on clk handles: the first that starts
// at or after now, or, for the first Run, at or after made (a first Run
// that starts late catches up). The caller calls end when it returns.
func (r *runs) begin(g grid, clk clock.Clock) int64 {
	r.runMu.Lock()
	start := clk.Now().UnixNano()
	if !r.ran {
		r.ran, start = true, min(start, r.made)
	}
	next := g.absSlot(start)
	if g.slotTime(next) < start {
		next++
	}
	return next
}

// end records that no Run runs any more and lets the next one begin.
func (r *runs) end() {
	r.wake.Store(math.MaxInt64)
	r.runMu.Unlock()
}

// due reports whether the Run's planned wake is at or before now.
func (r *runs) due(now time.Time) bool {
	return r.wake.Load() <= now.UnixNano()
}

// slotStart returns the offset of slot s (0 <= s <= slots) in ns:
// ⌈s·period/slots⌉, computed without overflow.
func (g grid) slotStart(s int) int64 {
	hi, lo := bits.Mul64(uint64(s), uint64(g.period))
	lo, carry := bits.Add64(lo, uint64(g.slots-1), 0)
	q, _ := bits.Div64(hi+carry, lo, uint64(g.slots))
	return int64(q)
}

// slotOf returns the slot containing the offset ph (0 <= ph < period):
// ⌊ph·slots/period⌋, consistent with slotStart.
func (g grid) slotOf(ph int64) int {
	hi, lo := bits.Mul64(uint64(ph), uint64(g.slots))
	q, _ := bits.Div64(hi, lo, uint64(g.period))
	return int(q)
}

// absSlot returns the number of slots from the Unix epoch to the slot
// containing t (ns since the epoch).
func (g grid) absSlot(t int64) int64 {
	p := floorDiv(t, g.period)
	return p*int64(g.slots) + int64(g.slotOf(t-p*g.period))
}

// slotTime returns the start of absolute slot a in ns since the epoch.
func (g grid) slotTime(a int64) int64 {
	p := floorDiv(a, int64(g.slots))
	return p*g.period + g.slotStart(int(a-p*int64(g.slots)))
}

// slotIndex returns the slot within the period of absolute slot a.
func (g grid) slotIndex(a int64) int {
	return int(a - floorDiv(a, int64(g.slots))*int64(g.slots))
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// armSlack is how far the clock may move while Run arms its timer before
// armTimer arms it again: a real clock moves microseconds, a fake one stepped by
// another goroutine at that moment moves by the step.
const armSlack = time.Millisecond

// armTimer sets *timer (made on first use) to fire at wake and reports whether
// Run must wait for it: false when wake has passed already, or when the
// clock moved (by more than armSlack) while it armed the timer. A timer
// armed for the duration until wake fires late by what the clock moved
// between reading it and arming; had a fake clock been stepped just then,
// Due would report wake as due while the timer waited for a later step,
// and a quiescence wait would wait for ever. Run then collects again at
// the new time before it arms anew: arming again here instead kept Run
// from enqueuing while a test stepped the clock at every arm (a whole
// period's keys came late, at once; 13 in 900 loaded runs of
// TestResyncAddRemoveWhileRunning).
func armTimer(clk clock.Clock, timer *clock.Timer, wake int64) bool {
	now := clk.Now().UnixNano()
	d := time.Duration(wake - now)
	if d <= 0 {
		return false
	}
	if *timer == nil {
		*timer = clk.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	if time.Duration(clk.Now().UnixNano()-now) < armSlack {
		return true
	}
	if !(*timer).Stop() {
		<-(*timer).C()
	}
	return false
}
