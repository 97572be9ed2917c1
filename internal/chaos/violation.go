package chaos

import (
	"fmt"
	"sync"
)

// The invariants a run checks; a Violation names one.
const (
	// DoubleBind: two claims Bound to one volume.
	DoubleBind = "double-bind"
	// BoundClaimVolume: a Bound claim whose volume is missing or does not
	// name it by UID.
	BoundClaimVolume = "bound-claim-volume"
	// HalfBound: a volume bound by UID to an existing claim that is not
	// bound to it.
	HalfBound = "half-bound"
	// RetainDeleted: a Retain volume, or its storage, deleted. The storage
	// of a provisioned volume whose object was never created is not a
	// Retain volume's yet: Kubernetes deletes it after the last failed
	// create, whatever the class's reclaim policy.
	RetainDeleted = "retain-deleted"
	// ReclaimWhileClaimed: a volume's storage deleted or recycled, or the
	// volume deleted, while the claim it is bound to (by UID) exists and
	// is bound to it or to no volume.
	ReclaimWhileClaimed = "reclaim-while-claimed"
	// StorageLost: storage deleted while a volume object refers to it.
	StorageLost = "storage-lost"
	// NotReclaimed: a released volume not reclaimed per its policy
	// (Retain: Released; Delete: gone with its storage; Recycle:
	// Available).
	NotReclaimed = "not-reclaimed"
	// ClaimUnbound: a Pending claim that a volume matches or that its
	// class provisions.
	ClaimUnbound = "claim-unbound"
	// ProvisionedUnsynced: a volume the Binder created that is not bound
	// to its claim, or storage it provisioned that no volume refers to.
	ProvisionedUnsynced = "provisioned-unsynced"
	// ReclaimedTwice: storage deleted or recycled twice at once, or one
	// volume lifetime recycled twice without a crash to explain it.
	ReclaimedTwice = "reclaimed-twice"
	// NotSettled: the run did not come to rest.
	NotSettled = "not-settled"
	// PhaseWrong: an object left in a phase it cannot stay in (a claim
	// Pending with a volume name bound to it, a bound volume Available).
	PhaseWrong = "phase"
	// BoundMismatch: a claim Bound to a volume the Binder chose for it
	// (it wrote the volume's claimRef, with bound-by-controller, while the
	// claim named no volume, or provisioned the volume for the claim) that
	// does not satisfy the claim's matching rules (class, access modes,
	// volume mode, capacity, selector). A claim that names its volume
	// takes it by Kubernetes' rule, whatever its class, as does a claim a
	// user pre-bound a volume to.
	BoundMismatch = "bound-mismatch"
	// Unsynced: an object that exists at the end and that no live Binder
	// synced at its final version (or wrote at it).
	Unsynced = "unsynced"
	// DeletedTwice: a Deleter ran twice for one volume UID, and the first
	// run's Binder did not stop before it could record it.
	DeletedTwice = "deleted-twice"
)

// Violation is one broken invariant.
type Violation struct {
	// Invariant is one of the invariant names above (DoubleBind, ...).
	Invariant string
	// Detail names the objects and what was found.
	Detail string
}

func (v Violation) String() string { return v.Invariant + ": " + v.Detail }

// violations collects Violations from several goroutines.
type violations struct {
	mu   sync.Mutex
	list []Violation
}

func (vs *violations) add(invariant, format string, args ...any) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.list = append(vs.list, Violation{Invariant: invariant, Detail: fmt.Sprintf(format, args...)})
}

func (vs *violations) all() []Violation {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return append([]Violation(nil), vs.list...)
}
