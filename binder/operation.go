package binder

import (
	"context"
	"errors"

	"k8s.io/klog/v2"

	"github.com/volbind/volbind/operations"
)

// Operation names, the op argument of operations.VolumeOpName and
// ClaimOpName, as in Kubernetes.
const (
	opDelete    = "delete"
	opRecycle   = "recycle"
	opProvision = "provision"
)

// scheduleOperation starts op under name in its own goroutine unless an
// operation of that name is running or backing off after a failure, as
// Kubernetes' scheduleOperation does: a refusal is logged, not returned, so
// the sync that asked succeeds and the next sync asks again. op gets a
// context with ctx's logger and values, cancelled when Run returns, not
// when ctx is.
func (b *Binder) scheduleOperation(ctx context.Context, name string, op func(context.Context) error) {
	b.scheduleOperationThen(ctx, name, op, nil)
}

// scheduleOperationThen is scheduleOperation, and then, unless nil, is
// called with op's error once the operation no longer counts as running
// (provisioning(claim) is false): a claim queued by then finds its
// operation over. The Binder is not idle before then has returned.
func (b *Binder) scheduleOperationThen(ctx context.Context, name string, op func(context.Context) error, then func(error)) {
	logger := klog.FromContext(ctx)
	b.work.operationStarted()
	err := b.ops.RunThen(ctx, name, func(opCtx context.Context) error {
		return op(klog.NewContext(opCtx, logger.WithValues("operation", name)))
	}, func(err error) {
		defer b.work.operationDone()
		if then != nil {
			then(err)
		}
	})
	if err == nil {
		logger.V(4).Info("Started operation", "operation", name)
		return
	}
	b.work.operationDone()
	switch {
	case errors.Is(err, operations.ErrAlreadyRunning):
		logger.V(4).Info("Operation is already running, skipping", "operation", name)
	case operations.IsBackoff(err):
		logger.V(4).Info("Operation postponed due to exponential backoff", "operation", name, "err", err)
	default:
		logger.V(4).Info("Operation not started", "operation", name, "err", err)
	}
}
