package bindertest

import "sort"

// ring keeps the most recent committed events of every kind, oldest first,
// so that a watch can resume from a recent resourceVersion.
type ring struct {
	buf   []event
	start int // index of the oldest event
	n     int // number of events held
	// compacted is the resourceVersion of the newest event dropped (0 when
	// none was): a watch can resume only from compacted or later.
	compacted uint64
}

// newRing returns a ring holding up to n events (none when n < 1).
func newRing(n int) *ring {
	return &ring{buf: make([]event, max(n, 0))}
}

// add appends ev, dropping the oldest event when full. Of the version
// before a Modified event it keeps the labels only, which is all that a
// watch resumed from the history reads of it (selector.matchedBefore):
// holding the version kept each object's previous version alive for as
// long as its first event of the window stayed, 28 bytes per pair at
// 100,000 pairs (BenchmarkMemoryPerPair).
func (r *ring) add(ev event) {
	if len(r.buf) == 0 {
		r.compacted = ev.rv
		return
	}
	if ev.old != nil {
		ev.oldLabels, ev.old = ev.old.GetLabels(), nil
	}
	if r.n == len(r.buf) {
		r.compacted = r.buf[r.start].rv
		r.buf[r.start] = ev
		r.start = (r.start + 1) % len(r.buf)
		return
	}
	r.buf[(r.start+r.n)%len(r.buf)] = ev
	r.n++
}

func (r *ring) at(i int) *event { return &r.buf[(r.start+i)%len(r.buf)] }

// since returns the events of kind committed after resourceVersion rv, or
// false when some of them were already dropped.
func (r *ring) since(rv uint64, kind Kind) ([]event, bool) {
	if rv < r.compacted {
		return nil, false
	}
	first := sort.Search(r.n, func(i int) bool { return r.at(i).rv > rv })
	var out []event
	for i := first; i < r.n; i++ {
		if e := r.at(i); e.kind == kind {
			out = append(out, *e)
		}
	}
	return out, true
}

// oldest returns the oldest resourceVersion a watch can resume from.
func (r *ring) oldest() uint64 { return r.compacted }
