package operations

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// pollUntil waits until cond holds, failing the test after
// wait.ForeverTestTimeout.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Microsecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}

func TestLocksDistinctKeysDoNotWait(t *testing.T) {
	var l Locks
	l.Lock("a")
	done := make(chan struct{})
	go func() {
		l.Lock("b")
		l.Unlock("b")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("Lock(b) blocked while only a was held")
	}
	l.Unlock("a")
	if n := l.len(); n != 0 {
		t.Errorf("%d keys remain after every Unlock, want 0", n)
	}
}

func TestLocksTryLock(t *testing.T) {
	var l Locks
	tests := []struct {
		name   string
		do     func() bool
		want   bool
		wantNo int // keys in the registry afterwards
	}{
		{"free key", func() bool { return l.TryLock("k") }, true, 1},
		{"held key", func() bool { return l.TryLock("k") }, false, 1},
		{"other key", func() bool { return l.TryLock("j") }, true, 2},
		{"after unlock", func() bool { l.Unlock("k"); return l.TryLock("k") }, true, 2},
		{"all unlocked", func() bool { l.Unlock("k"); l.Unlock("j"); return true }, true, 0},
	}
	for _, tc := range tests {
		if got := tc.do(); got != tc.want {
			t.Errorf("%s: TryLock() = %v, want %v", tc.name, got, tc.want)
		}
		if got := l.len(); got != tc.wantNo {
			t.Errorf("%s: %d keys in the registry, want %d", tc.name, got, tc.wantNo)
		}
	}
}

func TestLocksUnlockOfUnlockedKeyPanics(t *testing.T) {
	var l Locks
	defer func() {
		if r := recover(); r == nil {
			t.Error("Unlock of an unlocked key did not panic")
		}
	}()
	l.Unlock("never-locked")
}

// TestLocksMutualExclusion hammers a few keys from many goroutines and
// checks that no key ever has two holders, and that every key's memory is
// released at the end.
func TestLocksMutualExclusion(t *testing.T) {
	var l Locks
	const keys, goroutines, rounds = 4, 16, 300
	var holders [keys]atomic.Int32
	var counts [keys]int // guarded by the key's lock; -race checks it
	var violations atomic.Int32
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				k := (g + i) % keys
				key := fmt.Sprint("vol-", k)
				l.Lock(key)
				if holders[k].Add(1) != 1 {
					violations.Add(1)
				}
				counts[k]++
				holders[k].Add(-1)
				l.Unlock(key)
			}
		})
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Errorf("%d times a key had two holders, want 0", v)
	}
	total := 0
	for k := range counts {
		total += counts[k]
	}
	if total != goroutines*rounds {
		t.Errorf("%d critical sections ran, want %d", total, goroutines*rounds)
	}
	if n := l.len(); n != 0 {
		t.Errorf("%d keys remain after every Unlock, want 0", n)
	}
}

// TestLocksRegistryShrinks holds many keys at once, some of them contended,
// and checks that the registry is empty, and its large maps dropped, after
// the last Unlock.
func TestLocksRegistryShrinks(t *testing.T) {
	var l Locks
	const n = 50_000
	for i := range n {
		l.Lock(fmt.Sprint("pv-", i))
	}
	if got := l.len(); got != n {
		t.Fatalf("%d keys in the registry while %d are held", got, n)
	}
	// Queue a waiter on a few keys, so their waiter state is released too.
	var wg sync.WaitGroup
	for i := range 10 {
		key := fmt.Sprint("pv-", i)
		wg.Go(func() {
			l.Lock(key)
			l.Unlock(key)
		})
		pollUntil(t, key+" has a waiter", func() bool { return l.waiters(key) == 1 })
	}
	for i := range n {
		l.Unlock(fmt.Sprint("pv-", i))
	}
	wg.Wait()
	if got := l.len(); got != 0 {
		t.Errorf("%d keys in the registry after every Unlock, want 0", got)
	}
	for i := range l.shards {
		if s := &l.shards[i].Value; s.keys != nil {
			t.Errorf("shard %d keeps its map (peak %d) after emptying, want it dropped", i, s.peak)
		}
	}
}

// volume is the state a kubelet's SetUp and TearDown change in several
// steps. phase: 0 torn down, 1 half set up, 2 set up, 3 half torn down.
type volume struct {
	phase atomic.Int32
	// badSeen counts the times an operation started on a half-done volume.
	badSeen atomic.Int32
}

func (v *volume) observe() {
	if p := v.phase.Load(); p == 1 || p == 3 {
		v.badSeen.Add(1)
	}
}

// kubelet reproduces a race of the kubelet's: a starting pod's SetUp and
// a dying pod's TearDown of the same volume. Each operation, when it is
// half done, waits until the other is either blocked in Lock (it must
// then not enter) or has looked at the volume (it wrongly entered).
type kubelet struct {
	locks   *Locks // nil: no per-volume lock, the bug
	vol     volume
	key     string
	entered [2]atomic.Bool // the operation looked at the volume
}

func (k *kubelet) lock() {
	if k.locks != nil {
		k.locks.Lock(k.key)
	}
}

func (k *kubelet) unlock() {
	if k.locks != nil {
		k.locks.Unlock(k.key)
	}
}

// run runs operation me (0 SetUp, 1 TearDown). half is closed by the first
// operation when it is half done.
func (k *kubelet) run(t *testing.T, me int, first bool, half chan struct{}) {
	steps := [2][2]int32{{1, 2}, {3, 0}}[me]
	other := 1 - me
	if !first {
		<-half
	}
	k.lock()
	k.vol.observe()
	k.entered[me].Store(true)
	k.vol.phase.Store(steps[0])
	if first {
		close(half)
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Microsecond, wait.ForeverTestTimeout, true,
			func(context.Context) (bool, error) {
				return k.entered[other].Load() || (k.locks != nil && k.locks.waiters(k.key) == 1), nil
			})
		if err != nil {
			t.Errorf("waiting until the other operation waits or has entered: %v", err)
		}
	}
	k.vol.phase.Store(steps[1])
	k.unlock()
}

func TestLocksSerialiseSetUpAndTearDown(t *testing.T) {
	tests := []struct {
		name     string
		lock     bool
		setUp1st bool
		wantBad  bool
	}{
		{name: "SetUp first, locked", lock: true, setUp1st: true},
		{name: "TearDown first, locked", lock: true, setUp1st: false},
		// Without the lock the same schedule shows the race: this is the
		// check that the test can fail.
		{name: "SetUp first, no lock", lock: false, setUp1st: true, wantBad: true},
		{name: "TearDown first, no lock", lock: false, setUp1st: false, wantBad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var locks Locks
			for round := range 20 {
				k := &kubelet{key: "pvc-1"}
				if tc.lock {
					k.locks = &locks
				}
				if !tc.setUp1st {
					k.vol.phase.Store(2) // the dying pod's volume is set up
				}
				half := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() { k.run(t, 0, tc.setUp1st, half) })
				wg.Go(func() { k.run(t, 1, !tc.setUp1st, half) })
				wg.Wait()
				if bad := k.vol.badSeen.Load() > 0; bad != tc.wantBad {
					t.Fatalf("round %d: an operation saw the volume half done: %v, want %v", round, bad, tc.wantBad)
				}
			}
			if n := locks.len(); n != 0 {
				t.Errorf("%d keys remain locked, want 0", n)
			}
		})
	}
}
