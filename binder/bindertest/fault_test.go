package bindertest_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/volbind/volbind/binder/bindertest"
)

func TestInjectFault(t *testing.T) {
	ctx := context.Background()
	boom := apierrors.NewInternalError(errors.New("boom"))
	// Each call below is made once per case, in order; want lists which
	// of them fail.
	calls := []struct {
		name string
		do   func(s *bindertest.Server) error
	}{
		{"update pv1", func(s *bindertest.Server) error {
			pv, err := s.GetVolume(ctx, "pv1")
			if err != nil {
				return fmt.Errorf("setup get: %w", err)
			}
			pv.Labels = map[string]string{"n": fmt.Sprint(time.Now().UnixNano())}
			_, err = s.UpdateVolume(ctx, pv)
			return err
		}},
		{"update status pv2", func(s *bindertest.Server) error {
			pv := newVolume("pv2", "1Gi")
			_, err := s.UpdateVolumeStatus(ctx, pv)
			return err
		}},
		{"update claim ns/c1", func(s *bindertest.Server) error {
			c := newClaim("ns", "c1", "1Gi")
			_, err := s.UpdateClaim(ctx, c)
			return err
		}},
		{"create pv3", func(s *bindertest.Server) error { _, err := s.CreateVolume(ctx, newVolume("pv3", "1Gi")); return err }},
		{"delete ns/c2", func(s *bindertest.Server) error { return s.DeleteClaim(ctx, "ns", "c2") }},
	}
	tests := []struct {
		name     string
		fault    bindertest.Fault
		wantFail []bool
		is       func(error) bool
	}{
		{"error on every update", bindertest.Fault{Verb: bindertest.VerbUpdate, Err: boom},
			[]bool{true, false, true, false, false}, apierrors.IsInternalError},
		{"conflict on volumes", bindertest.Fault{Kind: bindertest.KindVolume, Verb: bindertest.VerbUpdateStatus, Conflict: true},
			[]bool{false, true, false, false, false}, apierrors.IsConflict},
		{"by name", bindertest.Fault{Name: "pv3", Err: boom},
			[]bool{false, false, false, true, false}, apierrors.IsInternalError},
		{"by namespace", bindertest.Fault{Namespace: "ns", Err: boom},
			[]bool{false, false, true, false, true}, apierrors.IsInternalError},
		{"by namespace and name", bindertest.Fault{Namespace: "ns", Name: "c2", Verb: bindertest.VerbDelete, Err: boom},
			[]bool{false, false, false, false, true}, apierrors.IsInternalError},
		{"times", bindertest.Fault{Err: boom, Times: 2, Verb: bindertest.VerbUpdate},
			[]bool{true, false, true, false, false}, apierrors.IsInternalError},
		{"times one", bindertest.Fault{Err: boom, Times: 1},
			[]bool{true, false, false, false, false}, apierrors.IsInternalError},
		{"nothing set is an internal error", bindertest.Fault{Kind: bindertest.KindClaim},
			[]bool{false, false, true, false, true}, apierrors.IsInternalError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			if err := s.Seed(ctx, newVolume("pv1", "1Gi"), newVolume("pv2", "1Gi"),
				newClaim("ns", "c1", "1Gi"), newClaim("ns", "c2", "1Gi")); err != nil {
				t.Fatalf("Seed = %v", err)
			}
			s.InjectFault(tc.fault)
			for i, c := range calls {
				err := c.do(s)
				if tc.wantFail[i] != (err != nil) {
					t.Errorf("%s = %v, want failure %v", c.name, err, tc.wantFail[i])
				}
				if err != nil && !tc.is(err) {
					t.Errorf("%s = %v, want the injected kind of error", c.name, err)
				}
			}
		})
	}
}

func TestInjectFaultLeavesStateAlone(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	pv := mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	rv := s.ResourceVersion()
	remove := s.InjectFault(bindertest.Fault{Conflict: true})
	pv.Labels = map[string]string{"a": "b"}
	if _, err := s.UpdateVolume(ctx, pv); !apierrors.IsConflict(err) {
		t.Fatalf("UpdateVolume = %v, want Conflict", err)
	}
	if got := s.ResourceVersion(); got != rv {
		t.Errorf("resourceVersion after a faulted write = %s, want %s", got, rv)
	}
	st := s.Stats()
	if st.Conflicts != 1 || st.Faults != 1 {
		t.Errorf("Stats = %+v, want 1 conflict and 1 fault", st)
	}
	remove()
	remove() // harmless
	if _, err := s.UpdateVolume(ctx, pv); err != nil {
		t.Errorf("UpdateVolume after remove = %v, want success", err)
	}
}

func TestInjectFaultFraction(t *testing.T) {
	ctx := context.Background()
	const n = 1000
	count := func(seed int64) int {
		s, _ := newServer(t)
		mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
		s.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Err: errors.New("flaky"), Fraction: 0.25, Seed: seed})
		failed := 0
		for range n {
			if _, err := s.GetVolume(ctx, "pv1"); err != nil {
				failed++
			}
		}
		return failed
	}
	a, b := count(7), count(7)
	if a != b {
		t.Errorf("same seed failed %d and %d requests, want equal", a, b)
	}
	if a < n/5 || a > n*3/10 {
		t.Errorf("Fraction 0.25 failed %d of %d requests, want about %d", a, n, n/4)
	}
}

func TestInjectFaultLatency(t *testing.T) {
	ctx := context.Background()
	s, fc := newServer(t)
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	s.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Latency: 3 * time.Second, Times: 1})
	var done atomic.Bool
	errc := make(chan error, 1)
	go func() {
		_, err := s.GetVolume(ctx, "pv1")
		done.Store(true)
		errc <- err
	}()
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return fc.HasWaiters(), nil }); err != nil {
		t.Fatalf("the request never waited on the clock: %v", err)
	}
	fc.Step(2 * time.Second)
	if done.Load() {
		t.Fatalf("request returned before its latency elapsed")
	}
	fc.Step(time.Second)
	if err := <-errc; err != nil {
		t.Errorf("GetVolume with latency only = %v, want success", err)
	}
	// Cancelling the request's ctx ends the wait.
	s.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Latency: time.Hour})
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		_, err := s.GetVolume(cctx, "pv1")
		errc <- err
	}()
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return fc.HasWaiters(), nil }); err != nil {
		t.Fatalf("the request never waited on the clock: %v", err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("GetVolume cancelled during latency = %v, want context.Canceled", err)
	}
}
