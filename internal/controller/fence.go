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
// was last renewed longer than the renew deadline ago, i.e. when less than
// leaseDuration-renewDeadline of its validity is left: the elector gives
// up at that point, and another replica may take the Lease once it
// expires. Refusing early keeps a replica that is about to lose the Lease
// from starting a write or a Provision, Delete or Recycle that the next
// leader would run too.
type leaseFence struct {
	holder leaseHolder
	// margin is the validity left below which the fence refuses.
	margin time.Duration
}

var _ binder.Fence = (*leaseFence)(nil)

// newLeaseFence returns the fence of holder for a Lease of leaseDuration
// renewed within renewDeadline.
func newLeaseFence(holder leaseHolder, leaseDuration, renewDeadline time.Duration) *leaseFence {
	return &leaseFence{holder: holder, margin: leaseDuration - renewDeadline}
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
