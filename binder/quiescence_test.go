package binder

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestWaitForQuiescenceWaitsForDueResync: once the fake clock is stepped
// past the resync period, WaitForQuiescence returns only after the
// resync's syncs have run.
func TestWaitForQuiescenceWaitsForDueResync(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "10Gi"), newPVC("claim1", "1Gi"))
	reg := prometheus.NewRegistry()
	b := e.newBinder(Config{Registerer: reg})
	e.run(b)
	e.settle(b)
	if got := e.claim("claim1").Status.Phase; got != v1.ClaimBound {
		t.Fatalf("claim = %s, want Bound", got)
	}
	for i := range 5 {
		before := counterSum(t, reg, "volbind_binder_syncs_total")
		e.fc.Step(DefaultResyncPeriod)
		if err := b.WaitForQuiescence(e.ctx); err != nil {
			t.Fatal(err)
		}
		if got := counterSum(t, reg, "volbind_binder_syncs_total") - before; got < 2 {
			t.Fatalf("period %d: %v syncs when WaitForQuiescence returned, want the resync of both objects", i, got)
		}
	}
}

// TestWaitForQuiescenceWaitsForRetries: a sync that failed waits for its
// rate-limited retry, and WaitForQuiescence waits for that retry.
func TestWaitForQuiescenceWaitsForRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "10Gi"), newPVC("claim1", "1Gi"))
	remove := e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdateStatus, Kind: bindertest.KindClaim, Err: apierrors.NewInternalError(errPlugin)})
	e.run(e.b)
	ctx, cancel := context.WithTimeout(e.ctx, 100*time.Millisecond)
	defer cancel()
	if err := e.b.WaitForQuiescence(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForQuiescence with a retry pending = %v, want DeadlineExceeded", err)
	}
	remove()
	e.fc.Step(time.Minute) // past the retry delay
	if err := e.b.WaitForQuiescence(e.ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.claim("claim1").Status.Phase; got != v1.ClaimBound {
		t.Errorf("claim = %s after the retry, want Bound", got)
	}
}
