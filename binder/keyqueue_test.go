package binder

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
)

// recordedMetrics is a workqueue.MetricsProvider that records what each
// metric was told.
type recordedMetrics struct {
	mu     sync.Mutex
	values map[string]float64   // gauges and counters by "metric/queue"
	obs    map[string][]float64 // histograms by "metric/queue"
}

func newRecordedMetrics() *recordedMetrics {
	return &recordedMetrics{values: map[string]float64{}, obs: map[string][]float64{}}
}

// recorded is one metric of a recordedMetrics.
type recorded struct {
	m    *recordedMetrics
	name string
}

func (r recorded) add(d float64) {
	r.m.mu.Lock()
	r.m.values[r.name] += d
	r.m.mu.Unlock()
}
func (r recorded) Inc() { r.add(1) }
func (r recorded) Dec() { r.add(-1) }
func (r recorded) Set(v float64) {
	r.m.mu.Lock()
	r.m.values[r.name] = v
	r.m.mu.Unlock()
}
func (r recorded) Observe(v float64) {
	r.m.mu.Lock()
	r.m.obs[r.name] = append(r.m.obs[r.name], v)
	r.m.mu.Unlock()
}

func (m *recordedMetrics) metric(kind, name string) recorded {
	return recorded{m: m, name: kind + "/" + name}
}

func (m *recordedMetrics) NewDepthMetric(n string) workqueue.GaugeMetric { return m.metric("depth", n) }
func (m *recordedMetrics) NewAddsMetric(n string) workqueue.CounterMetric {
	return m.metric("adds", n)
}
func (m *recordedMetrics) NewLatencyMetric(n string) workqueue.HistogramMetric {
	return m.metric("latency", n)
}
func (m *recordedMetrics) NewWorkDurationMetric(n string) workqueue.HistogramMetric {
	return m.metric("work", n)
}
func (m *recordedMetrics) NewUnfinishedWorkSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return m.metric("unfinished", n)
}
func (m *recordedMetrics) NewLongestRunningProcessorSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return m.metric("longest", n)
}
func (m *recordedMetrics) NewRetriesMetric(n string) workqueue.CounterMetric {
	return m.metric("retries", n)
}

func (m *recordedMetrics) snapshot() (map[string]float64, map[string][]float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	obs := map[string][]float64{}
	for k, v := range m.obs {
		obs[k] = slices.Clone(v)
	}
	return maps.Clone(m.values), obs
}

// TestKeyQueueMatchesClientGo runs random adds, gets, dones and clock steps
// on a keyQueue and on client-go's workqueue.Typed side by side, with
// metrics, and requires the same keys handed out, the same lengths and the
// same metrics, unfinished-work gauges and shutdown included.
func TestKeyQueueMatchesClientGo(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Parallel()
			compareWithClientGo(t, seed)
		})
	}
}

func compareWithClientGo(t *testing.T, seed uint64) {
	fc := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	oursM, theirsM := newRecordedMetrics(), newRecordedMetrics()
	ours := newKeyQueue("q", fc, oursM, 0)
	theirs := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "q", MetricsProvider: theirsM, Clock: fc})
	rng := rand.New(rand.NewPCG(seed, 7))
	keys := []string{"a", "b", "c", "d", "e", "f"}
	var taken []string // handed out and not done
	takenAt := map[string]time.Time{}
	gets := 0
	for step := range 400 {
		switch r := rng.IntN(100); {
		case r < 45:
			k := keys[rng.IntN(len(keys))]
			ours.Add(k)
			theirs.Add(k)
		case r < 70:
			if ours.Len() != theirs.Len() {
				t.Fatalf("step %d: Len %d, client-go %d", step, ours.Len(), theirs.Len())
			}
			if ours.Len() == 0 {
				continue
			}
			a, _ := ours.Get()
			b, _ := theirs.Get()
			if a != b {
				t.Fatalf("step %d: Get %q, client-go %q", step, a, b)
			}
			taken = append(taken, a)
			takenAt[a] = fc.Now()
			gets++
		case r < 92:
			if len(taken) == 0 {
				continue
			}
			i := rng.IntN(len(taken))
			ours.Done(taken[i])
			theirs.Done(taken[i])
			taken = slices.Delete(taken, i, i+1)
		default:
			fc.Step(time.Duration(rng.IntN(1000)) * time.Millisecond)
		}
	}
	if gets < 50 {
		t.Fatalf("only %d gets: the comparison says little", gets)
	}
	ov, oo := oursM.snapshot()
	tv, to := theirsM.snapshot()
	if !reflect.DeepEqual(oo, to) || !equalValues(ov, tv, "unfinished/q", "longest/q") {
		t.Fatalf("metrics differ:\nours      %v %v\nclient-go %v %v", ov, oo, tv, to)
	}

	// The unfinished-work gauges, set at each tick from when each key
	// was taken. The clock steps until both queues' tickers have fired
	// at its latest time (their goroutines start them asynchronously).
	if len(taken) == 0 {
		ours.Add("z")
		theirs.Add("z")
		ours.Get()
		theirs.Get()
		taken = append(taken, "z")
		takenAt["z"] = fc.Now()
	}
	want := func() (total, oldest float64) {
		for _, k := range taken {
			age := fc.Since(takenAt[k]).Seconds()
			total += age
			oldest = max(oldest, age)
		}
		return total, oldest
	}
	var stepped time.Time
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		if time.Since(stepped) > 50*time.Millisecond {
			fc.Step(time.Second)
			stepped = time.Now()
			return false, nil
		}
		total, oldest := want()
		ov, _ := oursM.snapshot()
		tv, _ := theirsM.snapshot()
		return ov["unfinished/q"] == total && ov["longest/q"] == oldest &&
			tv["unfinished/q"] == total && tv["longest/q"] == oldest, nil
	})
	if err != nil {
		ov, _ := oursM.snapshot()
		tv, _ := theirsM.snapshot()
		total, oldest := want()
		t.Fatalf("unfinished work: ours %v, client-go %v; want %v and %v", ov, tv, total, oldest)
	}

	ours.ShutDown()
	theirs.ShutDown()
	for {
		a, aq := ours.Get()
		b, bq := theirs.Get()
		if a != b || aq != bq {
			t.Fatalf("after ShutDown: Get %q, %v; client-go %q, %v", a, aq, b, bq)
		}
		if aq {
			break
		}
	}
	ours.Add("late")
	if ours.Len() != 0 || !ours.ShuttingDown() {
		t.Errorf("after ShutDown: Len %d, ShuttingDown %v; want 0, true", ours.Len(), ours.ShuttingDown())
	}
}

// equalValues compares a and b, but for the keys skipped.
func equalValues(a, b map[string]float64, skip ...string) bool {
	a, b = maps.Clone(a), maps.Clone(b)
	for _, k := range skip {
		delete(a, k)
		delete(b, k)
	}
	return reflect.DeepEqual(a, b)
}

// TestKeyQueueLetsGoAfterBurst: the map of queued keys that held a burst is
// made anew once it empties, and a small one is kept.
func TestKeyQueueLetsGoAfterBurst(t *testing.T) {
	t.Parallel()
	q := newKeyQueue("", testingclock.NewFakeClock(time.Unix(0, 0)), nil, 0)
	defer q.ShutDown()
	drain := func(n int) {
		for i := range n {
			q.Add(fmt.Sprint(i))
		}
		for range n {
			k, _ := q.Get()
			q.Done(k)
		}
	}
	small := reflect.ValueOf(q.dirty).UnsafePointer()
	drain(keepQueuedKeys)
	if reflect.ValueOf(q.dirty).UnsafePointer() != small {
		t.Errorf("the map was made anew after %d keys, want it kept", keepQueuedKeys)
	}
	drain(keepQueuedKeys + 1)
	if reflect.ValueOf(q.dirty).UnsafePointer() == small || q.dirtyPeak != 0 {
		t.Errorf("after a burst of %d keys: same map kept (peak %d), want a new one", keepQueuedKeys+1, q.dirtyPeak)
	}
}

// TestKeyQueueMadeForBurstLetsGo: a queue made for a burst (Run's size
// hint) lets go of that map once it empties, even after fewer keys.
func TestKeyQueueMadeForBurstLetsGo(t *testing.T) {
	t.Parallel()
	q := newKeyQueue("", testingclock.NewFakeClock(time.Unix(0, 0)), nil, 10*keepQueuedKeys)
	defer q.ShutDown()
	big := reflect.ValueOf(q.dirty).UnsafePointer()
	for _, k := range []string{"a", "b"} {
		q.Add(k)
	}
	for range 2 {
		k, _ := q.Get()
		q.Done(k)
	}
	if reflect.ValueOf(q.dirty).UnsafePointer() == big || q.dirtyPeak != 0 || q.order.items != nil && cap(q.order.items) > fifoKeepCap {
		t.Errorf("emptied queue made for %d keys kept its map (peak %d) or its order (cap %d)", 10*keepQueuedKeys, q.dirtyPeak, cap(q.order.items))
	}
}

// TestKeyQueueShutDownWithDrain waits for the keys handed out.
func TestKeyQueueShutDownWithDrain(t *testing.T) {
	t.Parallel()
	q := newKeyQueue("", testingclock.NewFakeClock(time.Unix(0, 0)), nil, 0)
	q.Add("a")
	k, _ := q.Get()
	done := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(done)
	}()
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return q.ShuttingDown(), nil }); err != nil {
		t.Fatal("not shutting down")
	}
	select {
	case <-done:
		t.Fatal("ShutDownWithDrain returned with a key not done")
	default:
	}
	q.Done(k)
	<-done
}

// TestKeyQueueHasAndBusy: what the tracker reads for quiescence and for
// the waiting claims — a key is queued from its add until a worker takes
// it, and again when added while it is processed; the queue is busy until
// the last key taken is done.
func TestKeyQueueHasAndBusy(t *testing.T) {
	t.Parallel()
	q := newKeyQueue("", testingclock.NewFakeClock(time.Unix(0, 0)), nil, 0)
	defer q.ShutDown()
	check := func(step string, wantHas, wantBusy bool) {
		t.Helper()
		if got := q.has("a"); got != wantHas {
			t.Errorf("%s: has(a) = %v, want %v", step, got, wantHas)
		}
		if got := q.busy(); got != wantBusy {
			t.Errorf("%s: busy = %v, want %v", step, got, wantBusy)
		}
	}
	check("empty", false, false)
	q.Add("a")
	check("added", true, true)
	k, _ := q.Get()
	check("taken", false, true)
	q.Add("a")
	check("added while processed", true, true)
	q.Done(k)
	check("done, handed out again", true, true)
	k, _ = q.Get()
	q.Done(k)
	check("taken and done", false, false)
}
