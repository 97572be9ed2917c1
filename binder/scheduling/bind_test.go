package scheduling_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/zones"
)

// reserve runs Find and Assume for p on nodeName.
func reserve(t *testing.T, e *env, p *v1.Pod, nodeName string) *scheduling.PodVolumes {
	t.Helper()
	pv := findFits(t, e, p, nodeName)
	if _, err := e.vb.Assume(e.ctx, p, nodeName, pv); err != nil {
		t.Fatalf("Assume: %v", err)
	}
	return pv
}

// waitPrebound waits until the API volume carries a claimRef to claim.
func waitPrebound(t *testing.T, e *env, pvName, claim string) {
	t.Helper()
	waitFor(t, "volume "+pvName+" pre-bound", func() bool {
		ref := e.volume(pvName).Spec.ClaimRef
		return ref != nil && ref.Name == claim
	})
}

func TestBindSuccess(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	e := newEnv(t, scheduling.Config{Registerer: reg}, assumeObjects()...)
	p := pod("p", "c1")
	pv := reserve(t, e, p, "node-a")
	e.srv.ResetStats()
	done := e.bindAsync(p, pv)
	waitPrebound(t, e, "pv1", "c1")
	select {
	case err := <-done:
		t.Fatalf("Bind returned %v before the binding completed", err)
	default:
	}
	api := e.volume("pv1")
	if api.Annotations[volume.AnnBoundByController] != "yes" || api.Spec.ClaimRef.UID != e.claim("c1").UID {
		t.Errorf("pre-bound volume = %v, %+v", api.Annotations, api.Spec.ClaimRef)
	}
	e.completeBinding("c1", "pv1")
	if err := <-done; err != nil {
		t.Fatalf("Bind() = %v", err)
	}
	if got := e.srv.Stats().Writes[bindertest.KindVolume][bindertest.VerbUpdate]; got != 1 {
		t.Errorf("volume updates = %d, want 1", got)
	}
	if e.decided(p, "node-a") {
		t.Errorf("decision kept after a successful Bind")
	}
	if e.vb.IsAssumed("", "pv1") || e.vb.IsAssumed(ns, "c1") {
		t.Errorf("objects still assumed after a successful Bind")
	}
	if got := counterValue(t, reg, "scheduler_volume_binder_cache_requests_total", "add"); got != 1 {
		t.Errorf("binder_cache_requests_total{add} = %v, want 1", got)
	}
	if got := histogramCount(t, reg, "scheduler_volume_scheduling_duration_seconds", "bind", 15, 1000); got != 1 {
		t.Errorf("scheduling_duration_seconds{bind} count = %v, want 1", got)
	}
	if got := histogramCount(t, reg, "volbind_scheduler_volume_stage_duration_seconds", "bind", 13, 1e-6); got != 1 {
		t.Errorf("stage_duration_seconds{bind} count = %v, want 1", got)
	}
}

func TestBindProvisioning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduling.Config{}, assumeObjects()...)
	p := pod("p", "d1")
	pv := reserve(t, e, p, "node-a")
	done := e.bindAsync(p, pv)
	waitFor(t, "selected node written", func() bool {
		return e.claim("d1").Annotations[volume.AnnSelectedNode] == "node-a"
	})
	// A provisioner creates a volume in the node's zone, bound to the claim.
	d1 := e.claim("d1")
	newPV := boundPV(pv_("pvc-"+string(d1.UID), "a"), "d1")
	newPV.Spec.ClaimRef.UID = d1.UID
	if _, err := e.srv.CreateVolume(e.ctx, newPV); err != nil {
		t.Fatal(err)
	}
	e.completeBinding("d1", newPV.Name)
	if err := <-done; err != nil {
		t.Fatalf("Bind() = %v", err)
	}
}

// pv_ is a provisioned volume in zone.
func pv_(name, zone string) *v1.PersistentVolume {
	return pv(name, "1Gi", "dyn", zones.ZoneLabel, zone)
}

func TestBindFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		claim string
		// act runs once the writes are made; it breaks the binding.
		act     func(t *testing.T, e *env)
		wantErr error
	}{{
		name:  "timeout",
		claim: "c1",
		act: func(t *testing.T, e *env) {
			e.fc.Step(scheduling.DefaultBindTimeout)
		},
		wantErr: scheduling.ErrBindTimeout,
	}, {
		name:  "claimRef reset by the Binder",
		claim: "c1",
		act: func(t *testing.T, e *env) {
			pv := e.volume("pv1")
			pv.Spec.ClaimRef = nil
			if _, err := e.srv.UpdateVolume(e.ctx, pv); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: scheduling.ErrBindingLost,
	}, {
		name:  "claim bound to another volume",
		claim: "c1",
		act: func(t *testing.T, e *env) {
			c := e.claim("c1")
			c.Spec.VolumeName = "elsewhere"
			if _, err := e.srv.UpdateClaim(e.ctx, c); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: scheduling.ErrBindingLost,
	}, {
		name:  "volume deleted",
		claim: "c1",
		act: func(t *testing.T, e *env) {
			if err := e.srv.DeleteVolume(e.ctx, "pv1"); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: scheduling.ErrVolumeNotFound,
	}, {
		name:  "provisioning failed",
		claim: "d1",
		act: func(t *testing.T, e *env) {
			c := e.claim("d1")
			delete(c.Annotations, volume.AnnSelectedNode)
			if _, err := e.srv.UpdateClaim(e.ctx, c); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: scheduling.ErrProvisioningFailed,
	}, {
		name:  "provisioned volume in another zone",
		claim: "d1",
		act: func(t *testing.T, e *env) {
			d1 := e.claim("d1")
			newPV := boundPV(pv_("pvc-d1", "b"), "d1")
			newPV.Spec.ClaimRef.UID = d1.UID
			if _, err := e.srv.CreateVolume(e.ctx, newPV); err != nil {
				t.Fatal(err)
			}
			d1.Spec.VolumeName = newPV.Name
			if _, err := e.srv.UpdateClaim(e.ctx, d1); err != nil {
				t.Fatal(err)
			}
		},
		wantErr: scheduling.ErrNodeConflict,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewPedanticRegistry()
			e := newEnv(t, scheduling.Config{Registerer: reg}, assumeObjects()...)
			p := pod("p", tc.claim)
			pv := reserve(t, e, p, "node-a")
			done := e.bindAsync(p, pv)
			// The wait's timer is armed once the writes are made.
			waitFor(t, "Bind waiting", e.fc.HasWaiters)
			tc.act(t, e)
			err := <-done
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Bind() error = %v, want %v", err, tc.wantErr)
			}
			var be *scheduling.BindError
			if !errors.As(err, &be) || be.Claim != ns+"/"+tc.claim || be.Pod != ns+"/p" {
				t.Errorf("Bind() error %v does not name pod and claim", err)
			}
			if e.vb.IsAssumed("", "pv1") || e.vb.IsAssumed(ns, tc.claim) || e.decided(p, "node-a") {
				t.Errorf("assumptions not reverted after a failed Bind")
			}
			if got := counterValue(t, reg, "scheduler_volume_scheduling_stage_error_total", "bind"); got != 1 {
				t.Errorf("scheduling_stage_error_total{bind} = %v, want 1", got)
			}
		})
	}
}

func TestBindCanceled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduling.Config{}, assumeObjects()...)
	p := pod("p", "c1")
	pv := reserve(t, e, p, "node-a")
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- e.vb.Bind(ctx, p, pv) }()
	waitFor(t, "Bind waiting", e.fc.HasWaiters)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !scheduling.IsBindError(err) {
		t.Fatalf("Bind() error = %v, want a BindError wrapping context.Canceled", err)
	}
}

// TestBindConflictRevertedAndRetried injects a Conflict into the pre-binding
// write: Bind fails with it and reverts, and the next cycle binds.
func TestBindConflictRevertedAndRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, scheduling.Config{}, assumeObjects()...)
	p := pod("p", "c1")
	pv := reserve(t, e, p, "node-a")
	e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindVolume, Name: "pv1", Conflict: true, Times: 1})
	err := e.vb.Bind(e.ctx, p, pv)
	if !apierrors.IsConflict(err) || !scheduling.IsBindError(err) {
		t.Fatalf("Bind() error = %v, want a BindError with a Conflict", err)
	}
	if got, _ := e.vb.Volume("pv1"); got.Spec.ClaimRef != nil || e.vb.IsAssumed("", "pv1") {
		t.Fatalf("volume still assumed pre-bound after the conflict: %+v", got.Spec.ClaimRef)
	}
	// Retry: the scheduler finds, assumes and binds again.
	pv = reserve(t, e, p, "node-a")
	done := e.bindAsync(p, pv)
	waitPrebound(t, e, "pv1", "c1")
	e.completeBinding("c1", "pv1")
	if err := <-done; err != nil {
		t.Fatalf("Bind() after retry = %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	srv := bindertest.New()
	if _, err := scheduling.New(nil, classLister(t), scheduling.Config{}); !errors.Is(err, scheduling.ErrInvalidArgument) {
		t.Errorf("New(nil API) error = %v", err)
	}
	if _, err := scheduling.New(srv, classLister(t), scheduling.Config{BindTimeout: -time.Second}); !errors.Is(err, scheduling.ErrInvalidArgument) {
		t.Errorf("New(negative timeout) error = %v", err)
	}
	reg := prometheus.NewPedanticRegistry()
	if _, err := scheduling.New(srv, classLister(t), scheduling.Config{Registerer: reg}); err != nil {
		t.Fatalf("New() = %v", err)
	}
	if _, err := scheduling.New(srv, classLister(t), scheduling.Config{Registerer: reg}); err == nil {
		t.Errorf("New() registering twice succeeded")
	}
}

// counterValue returns the value of counter name{operation=op}.
func counterValue(t *testing.T, g prometheus.Gatherer, name, op string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" && l.GetValue() == op {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// histogramCount returns the sample count of histogram name for operation
// op and checks that it has n buckets from first.
func histogramCount(t *testing.T, g prometheus.Gatherer, name, op string, n int, first float64) uint64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" && l.GetValue() == op {
					h := m.GetHistogram()
					if len(h.GetBucket()) != n || h.GetBucket()[0].GetUpperBound() != first {
						t.Errorf("%s buckets = %d from %v, want %d from %v", name, len(h.GetBucket()), h.GetBucket()[0].GetUpperBound(), n, first)
					}
					return h.GetSampleCount()
				}
			}
		}
	}
	return 0
}
