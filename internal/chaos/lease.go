package chaos

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/volbind/volbind/binder"
)

// errNotLeader is the refusal of a fenced instance that no longer holds
// the lease.
var errNotLeader = errors.New("chaos: this Binder instance does not hold the lease")

// lease models the leader-election Lease of `volbind controller` in a
// fenced run: the instance started last holds it (a new replica takes the
// Lease once the old holder's has expired, and a crashed one renews it no
// more), and each instance's Config.Fence refuses once the instance no
// longer holds it, as the controller's lease fence refuses once the Lease
// is not its own or is about to expire. The instance it replaced keeps
// running, reading and syncing until the run stops it, as a replica that
// has not noticed its loss yet does; its calls that passed the fence
// before the handover still land.
type lease struct {
	holder atomic.Pointer[instance]
	// refused counts the calls the fences refused.
	refused atomic.Int64
}

// acquire makes in the holder.
func (l *lease) acquire(in *instance) { l.holder.Store(in) }

// holds reports whether in holds the lease.
func (l *lease) holds(in *instance) bool { return l.holder.Load() == in }

// fence returns the Fence of in.
func (l *lease) fence(in *instance) binder.Fence {
	return binder.FenceFunc(func(context.Context) error {
		if !l.holds(in) {
			l.refused.Add(1)
			return errNotLeader
		}
		return nil
	})
}
