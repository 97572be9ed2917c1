package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/volbind/volbind/binder"
)

// errNotLeader is the Fence's refusal once the Lease is not this replica's.
var errNotLeader = errors.New("controller: this replica does not hold the leader-election Lease")

// leaseHolder is what leaseFence needs of a *leaderelection.LeaderElector.
type leaseHolder interface {
	// IsLeader reports whether the last observed Lease names this replica.
	IsLeader() bool
	// Check fails when the Lease was last renewed longer than its
	// duration plus tolerance ago (a negative tolerance means "before it
	// expires").
	Check(tolerance time.Duration) error
}

var _ leaseHolder = (*leaderelection.LeaderElector)(nil)

// leaseFence is the binder.Fence of a leader-elected controller: it
// refuses when the Lease is no longer this replica's, and when the Lease
// was last renewed longer than the renew deadline less one retry period
// ago, i.e. when less than leaseDuration-renewDeadline+retryPeriod of its
// validity is left: the elector gives up about then, and another replica
// may take the Lease once it expires. Refusing early keeps a replica that
// is about to lose the Lease from starting a write or a Provision, Delete
// or Recycle that the next leader would run too.
//
// The retry period is there because client-go's elector (v0.37.2) times
// its renewals from when it last observed the Lease, and the first failed
// renewal after a successful one observes it anew: the successful renewal
// (the fast path) does not keep the Lease as read, so the failed one's
// read of the unchanged Lease looks like a change and restarts the clock
// one retry period after the renewal. Without it the fence could still
// allow when the elector stopped leading: TestLeaseFenceOnElector failed 3
// times in 900 runs (two processes at once, race detector, -cpu 1,2,4),
// and none with it.
type leaseFence struct {
	holder leaseHolder
	// margin is the validity left below which the fence refuses.
	margin time.Duration
}

var _ binder.Fence = (*leaseFence)(nil)

// newLeaseFence returns the fence of holder for a Lease of leaseDuration
// renewed within renewDeadline, retrying every retryPeriod.
func newLeaseFence(holder leaseHolder, leaseDuration, renewDeadline, retryPeriod time.Duration) *leaseFence {
	return &leaseFence{holder: holder, margin: leaseDuration - renewDeadline + retryPeriod}
}

// Allow returns nil while this replica holds a Lease that is not about to
// expire.
func (f *leaseFence) Allow(context.Context) error {
	if !f.holder.IsLeader() {
		return errNotLeader
	}
	if err := f.holder.Check(-f.margin); err != nil {
		return fmt.Errorf("controller: the Lease expires in less than %v: %w", f.margin, err)
	}
	return nil
}
