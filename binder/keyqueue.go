package binder

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// keyQueue is the innermost layer of a Binder's workqueue: client-go's
// workqueue.Typed, the same behaviour and the same metrics, except that it
// lets go of its maps after a burst. client-go's keeps, for good, a set of
// the keys queued and, with metrics on, a map of their add times, each
// sized by the largest backlog it ever held — Run queues every object of
// the cluster at once: 273 MB at a million pairs with metrics (heap
// profile of volbind simulate). With this queue, BenchmarkMemoryPerPair's
// Binder part at 100,000 pairs (no metrics) went from 523 to 454 bytes per
// pair (2 cores, same run). Here one map holds both (a key queued and not
// taken yet, with its add time as an 8-byte offset from the queue's
// creation, so that the map is no larger than client-go's set plus 8 bytes
// a key),
// and is made anew when it empties after holding more than
// keepQueuedKeys keys. client-go's delaying and rate-limiting layers wrap
// it unchanged (newWorkqueue); TestKeyQueueMatchesClientGo runs both on
// the same operations and compares what they return and report.
type keyQueue struct {
	clock   clock.WithTicker
	metrics *keyQueueMetrics // nil: none
	// made is when the queue was made; the times kept are offsets
	// from it.
	made time.Time

	mu   sync.Mutex
	cond *sync.Cond
	// order holds the keys to hand out, in FIFO order: the keys of dirty
	// that are not being processed.
	order fifo[string]
	// dirty holds the keys added and not taken yet, with the time of the
	// add that queued each (see now); dirtyPeak is the most it held, or
	// was made for, since it was last made.
	dirty     map[string]time.Duration
	dirtyPeak int
	// processing holds the keys taken and not done yet, with the time
	// each was taken (see now).
	processing          map[string]time.Duration
	shuttingDown, drain bool

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

var _ workqueue.TypedInterface[string] = (*keyQueue)(nil)

// keyQueueMetrics are the metrics of a named queue, as client-go's
// workqueue reports them.
type keyQueueMetrics struct {
	depth                   workqueue.GaugeMetric
	adds                    workqueue.CounterMetric
	latency, workDuration   workqueue.HistogramMetric
	unfinished, longestWork workqueue.SettableGaugeMetric
}

// unfinishedWorkPeriod is how often the unfinished-work gauges are
// updated, as in client-go.
const unfinishedWorkPeriod = 500 * time.Millisecond

// newKeyQueue returns a queue reporting to metrics under name; with a nil
// provider or an empty name it reports nothing and starts no goroutine,
// otherwise it starts the one updating the unfinished-work gauges, which
// ShutDown stops. Its queued keys and their order have room for size
// keys from the start (a hint); the map is made anew once it empties (see
// dirtyPeak).
func newKeyQueue(name string, clk clock.WithTicker, metrics workqueue.MetricsProvider, size int) *keyQueue {
	q := &keyQueue{
		clock:      clk,
		dirty:      make(map[string]time.Duration, size),
		dirtyPeak:  size,
		order:      fifo[string]{items: make([]string, 0, size)},
		processing: make(map[string]time.Duration),
		stop:       make(chan struct{}),
	}
	q.cond = sync.NewCond(&q.mu)
	if metrics == nil || name == "" {
		return q
	}
	q.made = clk.Now()
	q.metrics = &keyQueueMetrics{
		depth:        metrics.NewDepthMetric(name),
		adds:         metrics.NewAddsMetric(name),
		latency:      metrics.NewLatencyMetric(name),
		workDuration: metrics.NewWorkDurationMetric(name),
		unfinished:   metrics.NewUnfinishedWorkSecondsMetric(name),
		longestWork:  metrics.NewLongestRunningProcessorSecondsMetric(name),
	}
	q.wg.Go(q.updateUnfinishedWorkLoop)
	return q
}

// now is the time since the queue was made when metrics are on (the
// clock is not read otherwise), else zero.
func (q *keyQueue) now() time.Duration {
	if q.metrics == nil {
		return 0
	}
	return q.clock.Since(q.made)
}

// Add queues key unless it is queued already; a key being processed is
// handed out again once it is done.
func (q *keyQueue) Add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if _, ok := q.dirty[key]; ok {
		return
	}
	if m := q.metrics; m != nil {
		m.adds.Inc()
		m.depth.Inc()
	}
	q.dirty[key] = q.now()
	q.dirtyPeak = max(q.dirtyPeak, len(q.dirty))
	if _, ok := q.processing[key]; ok {
		return
	}
	q.order.Push(key)
	q.cond.Signal()
}

// has reports whether key is queued: added and not taken yet (a key
// added again while it is being processed is queued).
func (q *keyQueue) has(key string) bool {
	q.mu.Lock()
	_, ok := q.dirty[key]
	q.mu.Unlock()
	return ok
}

// busy reports whether a key is queued or being processed.
func (q *keyQueue) busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.dirty) > 0 || len(q.processing) > 0
}

// Len returns the number of keys waiting to be handed out.
func (q *keyQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.order.Len()
}

// Get blocks until a key can be handed out, or returns shutdown true once
// the queue shuts down with none left.
func (q *keyQueue) Get() (key string, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.order.Len() == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if q.order.Len() == 0 {
		return "", true
	}
	key = q.order.Pop()
	now := q.now()
	if m := q.metrics; m != nil {
		m.depth.Dec()
		m.latency.Observe((now - q.dirty[key]).Seconds())
	}
	q.processing[key] = now
	delete(q.dirty, key)
	if len(q.dirty) == 0 && q.dirtyPeak > keepQueuedKeys {
		q.dirty, q.dirtyPeak = make(map[string]time.Duration), 0
	}
	return key, false
}

// Done marks key as processed; if it was added meanwhile, it is handed
// out again.
func (q *keyQueue) Done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m := q.metrics; m != nil {
		if start, ok := q.processing[key]; ok {
			m.workDuration.Observe((q.now() - start).Seconds())
		}
	}
	delete(q.processing, key)
	if _, ok := q.dirty[key]; ok {
		q.order.Push(key)
		q.cond.Signal()
	} else if len(q.processing) == 0 {
		q.cond.Signal()
	}
}

// ShutDown makes Get return shutdown once the queue is empty and ignores
// later adds; it returns once the metrics goroutine has exited.
func (q *keyQueue) ShutDown() { q.shutDown(false) }

// ShutDownWithDrain is ShutDown that also waits until every key handed
// out is done.
func (q *keyQueue) ShutDownWithDrain() { q.shutDown(true) }

func (q *keyQueue) shutDown(drain bool) {
	defer q.wg.Wait()
	q.stopOnce.Do(func() { close(q.stop) })
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = drain
	q.shuttingDown = true
	q.cond.Broadcast()
	for drain && len(q.processing) != 0 && q.drain {
		q.cond.Wait()
	}
}

// ShuttingDown reports whether ShutDown was called.
func (q *keyQueue) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

// updateUnfinishedWorkLoop sets the unfinished-work gauges every
// unfinishedWorkPeriod until ShutDown.
func (q *keyQueue) updateUnfinishedWorkLoop() {
	t := q.clock.NewTicker(unfinishedWorkPeriod)
	defer t.Stop()
	for {
		select {
		case <-t.C():
			q.updateUnfinishedWork()
		case <-q.stop:
			return
		}
	}
}

// updateUnfinishedWork sets the total and the longest time the keys being
// processed have been.
func (q *keyQueue) updateUnfinishedWork() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	var total, oldest float64
	now := q.now()
	for _, start := range q.processing {
		age := (now - start).Seconds()
		total += age
		oldest = max(oldest, age)
	}
	q.metrics.unfinished.Set(total)
	q.metrics.longestWork.Set(oldest)
}
