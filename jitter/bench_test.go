package jitter

import (
	"fmt"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// BenchmarkResyncSchedule schedules n keys into a new Resync (one op =
// all n keys).
func BenchmarkResyncSchedule(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		keys := keyNames("default/claim", n)
		q := newRecorder(testingclock.NewFakeClock(time.Unix(0, 0)))
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := NewResync(q.Add, StringHash, ResyncConfig{Period: time.Hour})
				if err != nil {
					b.Fatal(err)
				}
				for _, k := range keys {
					r.Add(k)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}

// BenchmarkResyncAddRemove re-registers one key among n registered ones,
// as a controller does when an object is deleted and another created.
func BenchmarkResyncAddRemove(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		keys := keyNames("default/claim", n+1)
		q := newRecorder(testingclock.NewFakeClock(time.Unix(0, 0)))
		r, err := NewResync(q.Add, StringHash, ResyncConfig{Period: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range keys[:n] {
			r.Add(k)
		}
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Remove(keys[i%(n+1)])
				r.Add(keys[(i+n)%(n+1)])
				i++
			}
		})
	}
}

// BenchmarkResyncPeriod collects and enqueues one period's worth of n keys
// (one op = one period).
func BenchmarkResyncPeriod(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		keys := keyNames("default/claim", n)
		q := &countingQueue{}
		r, err := NewResync(q.Add, StringHash, ResyncConfig{Period: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range keys {
			r.Add(k)
		}
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var batch []string
			var pending dueHeap[string]
			next, now := int64(0), int64(0)
			for b.Loop() {
				now += r.period
				batch = r.collect(batch[:0], &next, now-1, &pending)
				r.enqueue(batch)
			}
			if q.n != int64(b.N)*int64(n) {
				b.Fatalf("%d enqueues, want %d", q.n, int64(b.N)*int64(n))
			}
		})
	}
}

// countingQueue counts Adds.
type countingQueue struct {
	recorder
	n int64
}

func (q *countingQueue) Add(string) { q.n++ }
