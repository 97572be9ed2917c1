package simulate

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// Heap metrics of runtime/metrics that heapPeak samples.
const (
	// metricHeapObjects is the heap occupied by objects, live or not yet
	// collected: what the heap holds at a given moment.
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	// metricHeapLive is the heap the last GC marked live.
	metricHeapLive = "/gc/heap/live:bytes"
)

// heapPeak samples the heap every period while Run runs and keeps the
// largest values. Sampling reads runtime/metrics, which does not stop the
// world (runtime.ReadMemStats would).
type heapPeak struct {
	// mu guards the peaks.
	mu      sync.Mutex
	objects uint64 // largest heap objects (live and garbage), bytes
	live    uint64 // largest live heap after a GC, bytes
	samples []metrics.Sample
}

func newHeapPeak() *heapPeak {
	return &heapPeak{samples: []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapLive}}}
}

// sample reads the heap metrics once and keeps the largest.
func (p *heapPeak) sample() {
	p.mu.Lock()
	defer p.mu.Unlock()
	metrics.Read(p.samples)
	for i, m := range []*uint64{&p.objects, &p.live} {
		if v := p.samples[i].Value; v.Kind() == metrics.KindUint64 {
			*m = max(*m, v.Uint64())
		}
	}
}

// Run samples every period until ctx is done, and once more then.
func (p *heapPeak) Run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		p.sample()
		select {
		case <-ctx.Done():
			p.sample()
			return
		case <-t.C:
		}
	}
}

// peaks returns the largest heap and live heap seen, in bytes.
func (p *heapPeak) peaks() (heap, live uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.objects, p.live
}

// writeHeapProfile collects garbage, so that the profile shows what is
// live, and writes the heap profile to name (for go tool pprof).
func writeHeapProfile(name string) error {
	runtime.GC()
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("simulate: -memprofile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("simulate: -memprofile %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("simulate: -memprofile %s: %w", name, err)
	}
	return nil
}

// startCPUProfile starts writing the CPU profile to name; the function it
// returns stops the profile and closes the file.
func startCPUProfile(name string) (stop func() error, err error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("simulate: -cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("simulate: -cpuprofile %s: %w", name, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("simulate: -cpuprofile %s: %w", name, err)
		}
		return nil
	}, nil
}
