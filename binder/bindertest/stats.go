package bindertest

import "sync/atomic"

// Verb names a request the Server serves, as used in Stats and Fault.
type Verb string

// The verbs of the requests a Server serves.
const (
	// VerbCreate is a create (Create, CreateVolume, CreateClaim, ...).
	VerbCreate Verb = "create"
	// VerbUpdate is an update of metadata and spec (Update, UpdateVolume, ...).
	VerbUpdate Verb = "update"
	// VerbUpdateStatus is an update of the status subresource (UpdateStatus,
	// UpdateVolumeStatus, ...).
	VerbUpdateStatus Verb = "update/status"
	// VerbDelete is a delete (Delete, DeleteVolume, ...).
	VerbDelete Verb = "delete"
	// VerbGet is a read of one object (Get, GetVolume, ...).
	VerbGet Verb = "get"
)

// verbIndex numbers the verbs for the counter arrays.
type verbIndex int

const (
	vCreate verbIndex = iota
	vUpdate
	vUpdateStatus
	vDelete
	vGet
	numVerbs
)

var verbNames = [numVerbs]Verb{VerbCreate, VerbUpdate, VerbUpdateStatus, VerbDelete, VerbGet}

func (v verbIndex) verb() Verb { return verbNames[v] }

// Stats counts the requests a Server received since New or ResetStats.
// Seed and the listing methods (List, Volumes, Watch, ...) are not counted.
type Stats struct {
	// Writes counts write requests (every verb but VerbGet) by kind and
	// verb, whatever their outcome: successful, no-op, conflicting, invalid
	// or failed by an injected fault. Each counts as one API call.
	Writes map[Kind]map[Verb]int64
	// Reads counts get requests by kind.
	Reads map[Kind]int64
	// Conflicts counts requests that failed with a Conflict error: updates
	// with a stale resourceVersion and injected conflicts.
	Conflicts int64
	// Faults counts injected faults that fired (errors, conflicts and
	// latencies).
	Faults int64
}

// TotalWrites returns the sum of Writes over every kind and verb.
func (s Stats) TotalWrites() int64 {
	var n int64
	for _, byVerb := range s.Writes {
		for _, c := range byVerb {
			n += c
		}
	}
	return n
}

// counters are the Server's request counters. Lock-free so that counting
// adds nothing to a write's critical section.
type counters struct {
	requests  [numKinds][numVerbs]atomic.Int64
	conflicts atomic.Int64
	faults    atomic.Int64
}

func (c *counters) request(v verbIndex, k Kind) { c.requests[k][v].Add(1) }

func (c *counters) snapshot() Stats {
	st := Stats{Writes: make(map[Kind]map[Verb]int64), Reads: make(map[Kind]int64)}
	for _, k := range allKinds() {
		for v := range numVerbs {
			n := c.requests[k][v].Load()
			if n == 0 {
				continue
			}
			if v == vGet {
				st.Reads[k] = n
				continue
			}
			if st.Writes[k] == nil {
				st.Writes[k] = make(map[Verb]int64)
			}
			st.Writes[k][v.verb()] = n
		}
	}
	st.Conflicts = c.conflicts.Load()
	st.Faults = c.faults.Load()
	return st
}

func (c *counters) reset() {
	for k := range c.requests {
		for v := range c.requests[k] {
			c.requests[k][v].Store(0)
		}
	}
	c.conflicts.Store(0)
	c.faults.Store(0)
}

// Stats returns the request counts since New or the last ResetStats. The
// caller owns the result.
func (s *Server) Stats() Stats { return s.stats.snapshot() }

// ResetStats sets every count to zero (for example after seeding, before
// the part of a test that is measured).
func (s *Server) ResetStats() { s.stats.reset() }
