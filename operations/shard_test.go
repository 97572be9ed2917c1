package operations

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// pendingEntries counts the operations m's shards still hold, finished or
// not.
func pendingEntries(m *Map) int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i].Value
		s.mu.Lock()
		n += len(s.pending) + len(s.started)
		s.mu.Unlock()
	}
	return n
}

// A finished operation leaves its name in its shard until a sweep: Run
// must sweep, or a controller that runs ever new names keeps them all.
func TestRunSweepsFinishedNames(t *testing.T) {
	t.Parallel()
	m := New(Config{})
	const n = 20000
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		if err := m.RunThen(context.Background(), fmt.Sprintf("op-%d", i), noop, func(error) { wg.Done() }); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	// Each shard sweeps once it holds twice what its last sweep left,
	// and at least minSweep: here a few operations ran at each sweep.
	if got, limit := pendingEntries(m), mapShards*4*minSweep; got > limit {
		t.Errorf("after %d operations the shards hold %d, want at most %d", n, got, limit)
	}
	waitIdle(t, m)
	// Wait takes the finished operations it meets out of the shards.
	if got := pendingEntries(m); got != 0 {
		t.Errorf("after Wait the shards hold %d operations, want 0", got)
	}
}

// An operation whose then still runs when its name is run again is no
// longer in the shard's map under that name: Wait must still wait for it.
func TestWaitWaitsForThenOfReplacedOperation(t *testing.T) {
	t.Parallel()
	m := New(Config{})
	thenRuns, release := make(chan struct{}), make(chan struct{})
	if err := m.RunThen(context.Background(), "a", noop, func(error) {
		close(thenRuns)
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	<-thenRuns
	second := make(chan struct{})
	if err := m.RunThen(context.Background(), "a", noop, func(error) { close(second) }); err != nil {
		t.Fatalf("Run(a) while the first one's then runs = %v, want nil", err)
	}
	<-second
	// The second operation is finished once its then has returned:
	// wait for that, so that only the first one's then keeps the Map
	// busy.
	s := m.shard("a")
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			o := s.pending["a"]
			return o != nil && o.state.Load() == opFinished, nil
		}); err != nil {
		t.Fatalf("the second operation of a did not finish: %v", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Wait(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait while a replaced operation's then runs = %v, want context.Canceled (not idle)", err)
	}
	close(release)
	waitIdle(t, m)
}
