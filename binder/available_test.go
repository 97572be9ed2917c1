package binder

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
)

// newPairs returns n volumes as the API server creates them (phase
// Pending) and n claims: of sizes 1..n Gi, or all of 1Gi when sameSize.
func newPairs(n int, sameSize bool) []runtime.Object {
	var out []runtime.Object
	for i := 1; i <= n; i++ {
		size := fmt.Sprintf("%dGi", i)
		if sameSize {
			size = "1Gi"
		}
		out = append(out, newPV(fmt.Sprintf("pv%03d", i), size, pvPhase(v1.VolumePending)),
			newPVC(fmt.Sprintf("claim%03d", i), size))
	}
	return out
}

// queue records claim as queued, as tracker.add does.
func queue(wc *waitingClaims, key string, claim *v1.PersistentVolumeClaim, delayed bool) {
	w, ok := waitingFor(claim, delayed)
	wc.queued(key, w, ok)
}

// heldVolumes returns the number of volumes being held.
func heldVolumes(h *holds) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.since)
}

// volumeStatusWrites counts the status writes of volumes the server saw.
func volumeStatusWrites(e *env) int64 {
	return e.srv.Stats().Writes[bindertest.KindVolume][bindertest.VerbUpdateStatus]
}

func TestAvailableDelayBindsNewVolumesWithFourWrites(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{1, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			t.Parallel()
			const n = 40
			e := newEnv(t, newPairs(n, false)...)
			b := e.newBinder(Config{AvailableDelay: 10 * time.Second, ClaimWorkers: workers, VolumeWorkers: workers})
			// Every volume is a candidate from the start: each claim gets
			// the volume of exactly its size, with four writes.
			bindPairs(t, e, b, n)
			// The claims took the volumes before any hold ended; once the
			// held volumes' delayed syncs have run, nothing is held and
			// nothing more was written.
			e.fc.Step(time.Minute)
			e.eventually(b, func() bool { return heldVolumes(b.avail.(*holds)) == 0 })
			if got := e.writes(); got != 4*n {
				t.Errorf("writes after the delay = %d, want %d", got, 4*n)
			}
		})
	}
}

// Without AvailableDelay the Binder does what Kubernetes does: every new
// volume is marked Available first, a binding then costs four more writes.
// (The volumes are of one size: claims synced before a volume was marked
// wait for their resync and then take whatever is Available, so with
// distinct sizes Kubernetes' order can leave a claim without a volume.)
func TestNoAvailableDelayMarksEveryVolume(t *testing.T) {
	t.Parallel()
	const n = 20
	e := newEnv(t, newPairs(n, true)...)
	e.run(e.b)
	e.eventually(e.b, func() bool {
		e.events() // the claims' FailedBinding events until they bind
		for _, pvc := range e.srv.Claims() {
			if pvc.Status.Phase != v1.ClaimBound {
				return false
			}
		}
		return true
	})
	checkAllBound(t, e, n)
	if got := e.writes(); got != 5*n {
		t.Errorf("writes = %d, want %d", got, 5*n)
	}
}

func TestAvailableDelayMarksUnclaimedVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		newPV("pv1", "1Gi", pvPhase(v1.VolumePending)),
		newPV("small", "1Gi", pvPhase(v1.VolumePending), pvClass("gold")),
		newPVC("big", "5Gi", pvcClass(ptr.To("gold"))), // waits, but cannot take "small"
	)
	const delay = 10 * time.Second
	b := e.newBinder(Config{AvailableDelay: delay})
	e.srv.ResetStats()
	e.run(b)
	// Nothing here waits for a timer: wait without stepping the clock
	// (settle steps it while the Binder is slow to come to rest, which
	// on a loaded machine took it past the delay).
	e.quiesce(b)
	if e.writes() != 0 {
		t.Fatalf("wrote %d times before the delay: %v", e.writes(), e.state())
	}
	e.fc.Step(delay - time.Second)
	e.quiesce(b)
	if got := e.volume("pv1").Status.Phase; got != v1.VolumePending {
		t.Fatalf("pv1 is %s before the delay ended, want Pending", got)
	}
	e.eventually(b, func() bool {
		return e.volume("pv1").Status.Phase == v1.VolumeAvailable && e.volume("small").Status.Phase == v1.VolumeAvailable
	})
	if elapsed := e.fc.Since(time.Unix(1_000_000, 0)); elapsed < delay {
		t.Errorf("marked Available after %v, before the delay of %v", elapsed, delay)
	}
	if got := volumeStatusWrites(e); got != 2 {
		t.Errorf("%d volume status writes, want 2", got)
	}
	if got := e.claim("big").Spec.VolumeName; got != "" {
		t.Errorf("claim big bound to %s, which is too small", got)
	}
}

// A claim that comes while its volume is held binds it with four writes.
func TestAvailableDelayLateClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "1Gi", pvPhase(v1.VolumePending)))
	b := e.newBinder(Config{AvailableDelay: 10 * time.Second})
	e.srv.ResetStats()
	e.run(b)
	e.settle(b)
	e.fc.Step(5 * time.Second)
	e.settle(b)
	if _, err := e.srv.CreateClaim(e.ctx, newPVC("claim1", "1Gi")); err != nil {
		t.Fatal(err)
	}
	e.settle(b)
	checkAllBound(t, e, 1)
	e.fc.Step(time.Minute)
	e.settle(b)
	// The claim's create and the four writes of the binding.
	if got := e.writes(); got != 1+4 {
		t.Errorf("writes = %d, want 1+4", got)
	}
	if got := volumeStatusWrites(e); got != 1 {
		t.Errorf("%d volume status writes, want 1 (Bound)", got)
	}
}

func TestHoldsWaitingClaims(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	const delay = 5 * time.Second
	cases := []struct {
		name   string
		pv     *v1.PersistentVolume
		claim  *v1.PersistentVolumeClaim
		delay  bool // the claim's class is WaitForFirstConsumer
		holdOn bool // the claim keeps the volume held after the delay
	}{
		{"same class, fits", newPV("pv", "2Gi"), newPVC("c", "1Gi"), false, true},
		{"same class, too big", newPV("pv", "1Gi"), newPVC("c", "2Gi"), false, false},
		{"other class", newPV("pv", "1Gi", pvClass("gold")), newPVC("c", "1Gi"), false, false},
		{"other volume mode", newPV("pv", "1Gi", pvBlock), newPVC("c", "1Gi"), false, false},
		{"other VolumeAttributesClass", newPV("pv", "1Gi"), newPVC("c", "1Gi", func(c *v1.PersistentVolumeClaim) {
			c.Spec.VolumeAttributesClassName = ptr.To("fast")
		}), false, false},
		{"WaitForFirstConsumer", newPV("pv", "1Gi"), newPVC("c", "1Gi"), true, false},
		{"bound already", newPV("pv", "1Gi"), newPVC("c", "1Gi", pvcBound("other")), false, false},
		{"pre-bound to the claim", newPV("pv", "1Gi", boundTo("c", "")), newPVC("c", "9Gi"), false, true},
		{"pre-bound to another claim", newPV("pv", "1Gi", boundTo("d", "")), newPVC("c", "1Gi"), false, false},
		{"claim names the volume", newPV("pv", "1Gi", pvClass("gold")), newPVC("c", "5Gi", pvcVolume("pv")), false, true},
		{"claim names another volume", newPV("pv", "1Gi"), newPVC("c", "1Gi", pvcVolume("other")), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wc := newWaitingClaims()
			fc := testingclock.NewFakePassiveClock(now)
			h := newHolds(delay, fc, wc.mayTake)
			tc.pv.Status.Phase = v1.VolumePending // new: holdable
			queue(&wc, ns+"/c", tc.claim, tc.delay)
			if got, _ := h.hold(tc.pv); got != delay {
				t.Fatalf("first hold = %v, want %v", got, delay)
			}
			fc.SetTime(now.Add(2 * time.Second))
			if got, _ := h.hold(tc.pv); got != 3*time.Second {
				t.Fatalf("hold during the delay = %v, want 3s", got)
			}
			want := time.Duration(0)
			if tc.holdOn {
				want = delay
			}
			fc.SetTime(now.Add(delay))
			if got, _ := h.hold(tc.pv); got != want {
				t.Fatalf("hold after the delay = %v, want %v", got, want)
			}
			// The claim was synced: nothing keeps the volume held.
			wc.done(ns + "/c")
			if got, _ := h.hold(tc.pv); got != 0 {
				t.Fatalf("hold after the claim's sync = %v, want 0", got)
			}
			if len(wc.claims) != 0 || len(wc.sizes) != 0 || len(wc.byVolume) != 0 {
				t.Errorf("claims left behind: %v %v %v", wc.claims, wc.sizes, wc.byVolume)
			}
		})
	}
}

// A claim queued twice counts once, and its newest version counts.
func TestHoldsRequeuedClaim(t *testing.T) {
	t.Parallel()
	wc := newWaitingClaims()
	pv := newPV("pv", "1Gi")
	queue(&wc, ns+"/c", newPVC("c", "1Gi"), false)
	queue(&wc, ns+"/c", newPVC("c", "1Gi"), false)
	queue(&wc, ns+"/c", newPVC("c", "4Gi"), false) // grew: cannot take pv any more
	if wc.mayTake(pv) {
		t.Errorf("the 4Gi claim may take a 1Gi volume")
	}
	wc.done(ns + "/c")
	if len(wc.claims) != 0 || len(wc.sizes) != 0 {
		t.Errorf("claims left behind: %v %v", wc.claims, wc.sizes)
	}
}

func TestAvailableDelayNegative(t *testing.T) {
	t.Parallel()
	_, err := New(bindertest.New(), Config{AvailableDelay: -time.Second})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New with negative AvailableDelay: %v, want ErrInvalidConfig", err)
	}
}

// Random clusters of new volumes with injected conflicts: every binding is
// complete and one-to-one, and once the holds end every unbound volume is
// Available.
func TestAvailableDelayRandomClustersWithConflicts(t *testing.T) {
	t.Parallel()
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 7))
			objs := randomCluster(rng, 60)
			for _, o := range objs {
				if pv, ok := o.(*v1.PersistentVolume); ok {
					pv.Status.Phase = v1.VolumePending
				}
			}
			e := newEnv(t, objs...)
			for _, verb := range []bindertest.Verb{bindertest.VerbUpdate, bindertest.VerbUpdateStatus} {
				e.srv.InjectFault(bindertest.Fault{Verb: verb, Conflict: true, Fraction: 0.3, Seed: int64(seed)})
			}
			workers := []int{1, 2, 4, 8, 16, 8}[seed]
			b := e.newBinder(Config{AvailableDelay: 3 * time.Second, ClaimWorkers: workers, VolumeWorkers: workers})
			e.run(b)
			e.eventually(b, func() bool {
				for _, pv := range e.srv.Volumes() {
					if unmarked(pv) {
						return false
					}
				}
				return true
			})
			checkConsistent(t, e)
		})
	}
}

// A claim that found no volume is woken by the first new volume it fits and
// binds it with four writes, without waiting for its resync (off here);
// Kubernetes would wait for the resync and mark the volume Available first.
func TestAvailableDelayNewVolumeWakesUnmatchedClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPVC("small", "1Gi"), newPVC("big", "5Gi"), newPVC("other", "1Gi", pvcClass(ptr.To("gold"))))
	b := e.newBinder(Config{AvailableDelay: 10 * time.Second, ResyncPeriod: -1})
	e.run(b)
	e.settle(b)
	e.events()
	h := b.avail.(*holds)
	h.mu.Lock()
	unmatched := len(h.unmatchedGroup)
	h.mu.Unlock()
	if unmatched != 3 {
		t.Fatalf("%d unmatched claims, want 3", unmatched)
	}
	e.srv.ResetStats()
	// 3Gi: too small for "big", of the wrong class for "other".
	if _, err := e.srv.CreateVolume(e.ctx, newPV("pv1", "3Gi", pvPhase(v1.VolumePending))); err != nil {
		t.Fatal(err)
	}
	e.settle(b)
	if got := e.claim("small"); got.Status.Phase != v1.ClaimBound || got.Spec.VolumeName != "pv1" {
		t.Errorf("claim small: %s to %q, want Bound to pv1", got.Status.Phase, got.Spec.VolumeName)
	}
	if got := e.writes(); got != 1+4 {
		t.Errorf("writes = %d, want the create and 4", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.unmatchedGroup[ns+"/big"]; !ok || len(h.unmatchedGroup) != 2 {
		t.Errorf("unmatched claims %v, want big and other still listed", h.unmatchedGroup)
	}
}

// A deleted or re-queued claim is no longer offered new volumes.
func TestHoldsUnmatchedForgotten(t *testing.T) {
	t.Parallel()
	h := newHolds(time.Second, testingclock.NewFakePassiveClock(time.Unix(0, 0)), func(*v1.PersistentVolume) bool { return false })
	h.claimUnmatched(ns+"/a", newPVC("a", "1Gi"))
	h.claimUnmatched(ns+"/b", newPVC("b", "1Gi"))
	h.claimUnmatched(ns+"/c", newPVC("c", "1Gi"))
	h.claimGone(ns + "/a")
	h.claimGone(ns + "/b") // queued again: the tracker's claimQueued hook
	if _, wake := h.hold(newPV("pv1", "1Gi", pvPhase(v1.VolumePending))); wake != ns+"/c" {
		t.Errorf("new volume wakes %q, want %q", wake, ns+"/c")
	}
	if _, wake := h.hold(newPV("pv2", "1Gi", pvPhase(v1.VolumePending))); wake != "" {
		t.Errorf("second volume wakes %q, want nobody", wake)
	}
	if _, wake := h.hold(newPV("pv3", "1Gi", pvPhase(v1.VolumePending), boundTo("x", ""))); wake != ns+"/x" {
		t.Errorf("pre-bound volume wakes %q, want its claim", wake)
	}
	if len(h.unmatched) != 0 || len(h.unmatchedGroup) != 0 {
		t.Errorf("left behind: %v %v", h.unmatched, h.unmatchedGroup)
	}
}
