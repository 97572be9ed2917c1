package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/internal/testhelp"
)

// Result is what a run found.
type Result struct {
	// Case is the case that ran.
	Case Case
	// Violations are the broken invariants; none when the run passed.
	Violations []Violation
	// Writes, Faults and Conflicts are the Server's counts.
	Writes, Faults, Conflicts int64
	// Instances is the number of Binders started (crash restarts and
	// overlaps add to the first).
	Instances int
	// Crashed reports whether a Binder crashed (at Case.CrashAt): false
	// when the first one made fewer calls.
	Crashed bool
	// FenceRefusals counts the calls the Fences of a fenced case
	// (Case.Fenced) refused: the writes and storage calls of the Binders
	// that had lost the lease.
	FenceRefusals int64
	// State describes every volume and claim at the end, one line each.
	State []string
	// RepairedByRestart is set when every violation was of the settled
	// cluster (none was seen while it ran) and a new Binder, started on it
	// without faults, repaired them all: the Binder that ran had got stuck
	// (a liveness bug) rather than done something it cannot undo.
	RepairedByRestart bool
}

// Failed reports whether the run broke an invariant.
func (r Result) Failed() bool { return len(r.Violations) > 0 }

// Invariants returns the names of the distinct invariants broken, in
// order of first appearance.
func (r Result) Invariants() []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range r.Violations {
		if !seen[v.Invariant] {
			seen[v.Invariant] = true
			out = append(out, v.Invariant)
		}
	}
	return out
}

// run is the state of one Run.
type run struct {
	ctx  context.Context
	c    Case
	rng  *rand.Rand
	fc   *testingclock.FakeClock
	srv  *bindertest.Server
	st   *storage
	vs   *violations
	live []*instance
	// started are the instances started, in order.
	started []*instance
	// retained are the Retain volumes that must exist at the end; the
	// driver removes the ones it deletes itself.
	retained map[string]bool
	created  int
	undo     []func()
	// lease fences the instances of a fenced run (Case.Fenced); nil
	// otherwise.
	lease *lease
	// crash is the crash plan of the instances the case runs (not of the
	// one secondOpinion starts).
	crash *crashPlan
	// defaultClass is the default StorageClass of a DefaultClass run; ""
	// otherwise.
	defaultClass string
	// final are the instances that were live when the run (or the second
	// opinion) settled: the check of what was synced asks them.
	final []*instance
}

// Run executes c and checks the invariants once it has settled. It
// returns an error only when it could not run (bad Case, ctx done); broken
// invariants are in the Result. It blocks until every goroutine it
// started has exited.
func Run(ctx context.Context, c Case) (Result, error) {
	if c.Objects < 0 || c.Workers < 1 {
		return Result{}, fmt.Errorf("chaos: invalid case %s", c)
	}
	// The Binder logs every injected failure; a run keeps them quiet.
	ctx = klog.NewContext(ctx, klog.Background().V(10).WithSink(nil))
	r := &run{ctx: ctx, c: c, rng: rand.New(rand.NewPCG(uint64(c.Seed), 0x5eed)),
		fc: testingclock.NewFakeClock(time.Unix(1_700_000_000, 0)), vs: &violations{},
		retained: map[string]bool{}}
	r.srv = bindertest.NewWithConfig(bindertest.Config{Clock: r.fc, Seed: &c.Seed, AsyncEvents: c.Async})
	r.crash = &crashPlan{at: int64(c.CrashAt), applied: c.CrashApplied}
	if c.Fenced() {
		r.lease = &lease{}
	}
	r.st = newStorage(r.srv, r.vs, r.lease)
	if c.Classes&FailedReads != 0 {
		r.st.reads = newReadFaults(r.srv, c.Seed)
		r.undo = append(r.undo, r.st.reads.stop)
	}
	r.defaultClass = r.pickDefaultClass()
	vols, claims := cluster(r.rng, c.Objects, r.newClaim, r.staticClass, r.policy)
	objs := classesWithDefault(r.defaultClass)
	for _, pv := range vols {
		objs = append(objs, pv)
		r.addedVolume(pv)
	}
	for _, pvc := range claims {
		objs = append(objs, pvc)
	}
	if err := r.srv.Seed(ctx, objs...); err != nil {
		return Result{}, fmt.Errorf("chaos: seed the cluster of %s: %w", c, err)
	}
	defer func() {
		for _, in := range r.live {
			in.stop()
		}
	}()
	if err := r.startInstance(r.crash); err != nil {
		return Result{}, err
	}
	r.injectFaults()
	if err := r.disturb(); err != nil {
		return Result{}, err
	}
	for i := len(r.undo) - 1; i >= 0; i-- {
		r.undo[i]()
	}
	r.srv.FlushWatchFaults()
	if c.Informers && c.Classes&(Watch|Relist) != 0 {
		r.srv.ForceRelist() // repairs dropped events, as a relist does
	}
	settled, err := r.settle()
	if err != nil {
		return Result{}, err
	}
	if !settled {
		r.vs.add(NotSettled, "still writing or busy after %d clock steps of %v: %s", settleRounds, settleStep, r.busyReport())
	}
	r.stopLive()
	// Violations seen while it ran (a reclaim that must not happen) stand
	// whatever a restart does; only a settled state can be repaired.
	seen := len(r.vs.all())
	r.check(r.vs)
	repaired, err := r.secondOpinion()
	repaired = repaired && seen == 0
	if err != nil {
		return Result{}, err
	}
	st := r.srv.Stats()
	return Result{Case: c, Violations: r.vs.all(), Writes: st.TotalWrites(), Faults: st.Faults,
		Conflicts: st.Conflicts, Instances: len(r.started), Crashed: r.crashed(), FenceRefusals: r.fenceRefusals(),
		State: r.state(), RepairedByRestart: repaired}, nil
}

// stopLive stops the live instances and keeps them as the final ones.
func (r *run) stopLive() {
	for _, in := range r.live {
		in.stop()
	}
	r.final, r.live = r.live, nil
}

// addedVolume records a volume the driver creates or seeds.
func (r *run) addedVolume(pv *v1.PersistentVolume) {
	if h := handleOf(pv); h != "" {
		r.st.addStatic(h, pv.Spec.PersistentVolumeReclaimPolicy)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimRetain {
		r.retained[pv.Name] = true
	}
}

// startInstance starts a Binder with the crash plan crash (nil: it never
// crashes).
func (r *run) startInstance(crash *crashPlan) error {
	in := &instance{id: len(r.started) + 1, srv: r.srv, st: r.st, vs: r.vs, crash: crash}
	if r.lease != nil {
		// A new replica leads once it has the Lease: the instance it
		// replaces (crashed, or overlapping with it) has lost it.
		in.fence = r.lease.fence(in)
		r.lease.acquire(in)
	}
	if err := in.start(r.ctx, r.c, r.fc); err != nil {
		return fmt.Errorf("chaos: start Binder %d: %w", in.id, err)
	}
	r.started = append(r.started, in)
	r.live = append(r.live, in)
	return nil
}

// fenceRefusals returns the calls the lease's fences refused.
func (r *run) fenceRefusals() int64 {
	if r.lease == nil {
		return 0
	}
	return r.lease.refused.Load()
}

// crashed reports whether an instance crashed.
func (r *run) crashed() bool {
	return slices.ContainsFunc(r.started, (*instance).isDead)
}

// restartCrashed replaces crashed instances by new ones.
func (r *run) restartCrashed() error {
	for i, in := range r.live {
		if !in.isDead() {
			continue
		}
		in.stop()
		r.live = append(r.live[:i:i], r.live[i+1:]...)
		if err := r.startInstance(r.crash); err != nil {
			return err
		}
		return r.restartCrashed()
	}
	return nil
}

// disturbSteps is the number of steps of the disturbed phase beside churn.
const disturbSteps = 6

// disturb runs the disturbed phase: churn, stalls, relists and overlap,
// with clock steps between them.
func (r *run) disturb() error {
	steps := r.c.Churn + disturbSteps
	overlapAt, overlapEnd := -1, -1
	if r.c.Classes&Overlap != 0 {
		overlapAt = r.rng.IntN(steps/2 + 1)
		overlapEnd = overlapAt + 1 + r.rng.IntN(steps-overlapAt)
	}
	stallAt, stallKind := -1, bindertest.KindVolume
	if r.c.Classes&Watch != 0 {
		stallAt = r.rng.IntN(steps)
		if r.rng.IntN(2) == 0 {
			stallKind = bindertest.KindClaim
		}
	}
	slowAt, slowKind, slowLag := -1, bindertest.KindVolume, 0
	if r.c.Classes&SlowWatch != 0 {
		slowAt, slowLag = r.rng.IntN(steps/2+1), 1+r.rng.IntN(5)
		if r.rng.IntN(2) == 0 {
			slowKind = bindertest.KindClaim
		}
	}
	var resume, resumeSlow func()
	for step := range steps {
		if step < r.c.Churn {
			if err := r.churn(); err != nil {
				return err
			}
		}
		switch step {
		case overlapAt:
			if err := r.startInstance(r.crash); err != nil {
				return err
			}
		case overlapEnd:
			if len(r.live) > 1 {
				r.live[0].retire()
				r.live = r.live[1:]
			}
		}
		if step == stallAt {
			resume = r.srv.StallWatches(stallKind)
		} else if resume != nil && r.rng.IntN(3) == 0 {
			resume()
			resume = nil
		}
		if step == slowAt {
			resumeSlow = r.srv.SlowWatches(slowKind, slowLag)
		} else if resumeSlow != nil && r.rng.IntN(4) == 0 {
			resumeSlow()
			resumeSlow = nil
		}
		if r.c.Classes&Relist != 0 && r.rng.IntN(steps) == 0 {
			r.srv.ForceRelist(bindertest.KindVolume + bindertest.Kind(r.rng.IntN(2)))
		}
		r.step(time.Duration(r.rng.IntN(1500)) * time.Millisecond)
		r.quiesce(20 * time.Millisecond)
		if err := r.restartCrashed(); err != nil {
			return err
		}
	}
	if resume != nil {
		resume()
	}
	if resumeSlow != nil {
		resumeSlow()
	}
	r.stopFenced()
	return r.ctx.Err()
}

// stopFenced stops the live instances that lost the lease of a fenced
// run, as `volbind controller` stops its Binder once it notices it no
// longer leads: a fenced Binder retries its refused writes forever.
func (r *run) stopFenced() {
	if r.lease == nil {
		return
	}
	kept := r.live[:0:0]
	for _, in := range r.live {
		if r.lease.holds(in) {
			kept = append(kept, in)
			continue
		}
		in.retire()
	}
	r.live = kept
}

// step advances the fake clock by d once the goroutines that set timers
// on it (workqueue delays, resyncs, backoffs) have armed them
// (testhelp.WaitArmed): a timer armed after a step counts from the new
// time and may never catch up with a loop that keeps stepping.
func (r *run) step(d time.Duration) {
	testhelp.WaitArmed(r.fc)
	r.fc.Step(d)
}

// quiesce waits up to d (real time) for every live Binder to be quiescent
// and reports whether they all were.
func (r *run) quiesce(d time.Duration) bool {
	ctx, cancel := context.WithTimeout(r.ctx, d)
	defer cancel()
	if r.srv.WaitForEvents(ctx) != nil {
		return false
	}
	for _, in := range r.live {
		if in.b.WaitForQuiescence(ctx) != nil {
			return false
		}
	}
	return true
}

// settleRounds bounds the settling phase: each round steps the clock by
// settleStep.
const (
	settleRounds = 150
	settleStep   = 4 * time.Second
	// stableRounds is the number of rounds in a row in which the Binders
	// are quiescent, nothing is written and every invariant holds that
	// ends the settling phase.
	stableRounds = 2
)

// settle steps the clock until the Binders are quiescent, their caches
// caught up, the Server unchanged and the invariants hold, for
// stableRounds rounds. Timers that a clock step fires reach the Binder's
// queues on their own goroutines, after the step: a state that holds for
// one quiet round may still change, so settling ends on the invariants,
// not on quiet alone. It reports whether the last round was quiet.
func (r *run) settle() (bool, error) {
	stable := 0
	quietLast := false
	for range settleRounds {
		if err := r.ctx.Err(); err != nil {
			return false, err
		}
		if err := r.restartCrashed(); err != nil {
			return false, err
		}
		rv := r.srv.ResourceVersion()
		r.step(settleStep)
		quietLast = r.quiesce(2*time.Second) && r.caughtUp() && r.srv.HeldEvents() == 0 && r.srv.ResourceVersion() == rv
		if quietLast {
			var dry violations
			r.check(&dry)
			if len(dry.all()) == 0 {
				if stable++; stable >= stableRounds {
					return true, nil
				}
				continue
			}
		}
		stable = 0
	}
	return quietLast, nil
}

// caughtUp waits briefly for every live instance's informers to hold what
// the Server holds.
func (r *run) caughtUp() bool {
	return wait.PollUntilContextTimeout(r.ctx, time.Millisecond, 2*time.Second, true, func(context.Context) (bool, error) {
		for _, in := range r.live {
			if !in.caughtUp() {
				return false, nil
			}
		}
		return true, nil
	}) == nil
}

// busyReport says what kept a run from settling.
func (r *run) busyReport() string {
	lag := "caught up"
	if !r.caughtUp() {
		lag = "not caught up"
		for _, in := range r.live {
			if l := in.lag(); l != "" {
				lag += ": " + l
				break
			}
		}
	}
	return fmt.Sprintf("resourceVersion %s, %d held events, %d live Binders, %s",
		r.srv.ResourceVersion(), r.srv.HeldEvents(), len(r.live), lag)
}

// state describes every volume and claim, one line each.
func (r *run) state() []string {
	var out []string
	for _, pv := range r.srv.Volumes() {
		out = append(out, fmt.Sprintf("volume %s %s class=%q size=%s policy=%s claim=%s ann=%v", pv.Name, pv.Status.Phase,
			pv.Spec.StorageClassName, pv.Spec.Capacity.Storage(), pv.Spec.PersistentVolumeReclaimPolicy, refName(pv.Spec.ClaimRef), pv.Annotations))
	}
	for _, pvc := range r.srv.Claims() {
		out = append(out, fmt.Sprintf("claim %s %s class=%q size=%s volume=%q uid=%s ann=%v", pvc.Name, pvc.Status.Phase,
			ptr.Deref(pvc.Spec.StorageClassName, "<nil>"), pvc.Spec.Resources.Requests.Storage(), pvc.Spec.VolumeName, pvc.UID, pvc.Annotations))
	}
	return out
}

// secondOpinion starts a new Binder, without faults, on a settled cluster
// that breaks invariants, lets it settle and reports whether the cluster
// then holds every invariant.
func (r *run) secondOpinion() (bool, error) {
	if len(r.vs.all()) == 0 {
		return false, nil
	}
	if err := r.startInstance(nil); err != nil {
		return false, err
	}
	_, err := r.settle()
	r.stopLive()
	if err != nil {
		return false, err
	}
	var after violations
	r.check(&after)
	return len(after.all()) == 0, nil
}
