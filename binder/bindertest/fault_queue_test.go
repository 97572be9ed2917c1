package bindertest_test

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestAppliedFault: an Applied fault carries the write out and still
// answers with its error; the client cannot tell.
func TestAppliedFault(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	s.InjectFault(bindertest.Fault{Verb: bindertest.VerbCreate, Kind: bindertest.KindVolume, Timeout: true, Applied: true, Times: 1})
	if _, err := s.CreateVolume(ctx, newVolume("pv1", "1Gi")); !apierrors.IsTimeout(err) {
		t.Fatalf("CreateVolume = %v, want a Timeout error", err)
	}
	if _, err := s.GetVolume(ctx, "pv1"); err != nil {
		t.Fatalf("GetVolume after an applied create = %v, want the volume", err)
	}
	// A write that fails on its own answers with its own error.
	s.InjectFault(bindertest.Fault{Verb: bindertest.VerbCreate, Err: errors.New("lost"), Applied: true, Times: 1})
	if _, err := s.CreateVolume(ctx, newVolume("pv1", "1Gi")); !apierrors.IsAlreadyExists(err) {
		t.Errorf("CreateVolume of a taken name with an applied fault = %v, want AlreadyExists", err)
	}
	// Update and delete are applied too; a get just fails.
	pv, _ := s.GetVolume(ctx, "pv1")
	s.InjectFault(bindertest.Fault{Name: "pv1", Err: apierrors.NewInternalError(errors.New("lost")), Applied: true})
	pv.Labels = map[string]string{"a": "b"}
	if _, err := s.UpdateVolume(ctx, pv); !apierrors.IsInternalError(err) {
		t.Errorf("UpdateVolume = %v, want the injected error", err)
	}
	if got := s.Volumes()[0].Labels["a"]; got != "b" {
		t.Errorf("label after an applied update = %q, want b", got)
	}
	if _, err := s.GetVolume(ctx, "pv1"); !apierrors.IsInternalError(err) {
		t.Errorf("GetVolume = %v, want the injected error", err)
	}
	if err := s.DeleteVolume(ctx, "pv1"); !apierrors.IsInternalError(err) {
		t.Errorf("DeleteVolume = %v, want the injected error", err)
	}
	if n := len(s.Volumes()); n != 0 {
		t.Errorf("%d volumes after an applied delete, want 0", n)
	}
}

// TestNthFault: "the 3rd update of pv1" fails, and only it.
func TestNthFault(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	mustCreateVolume(t, s, newVolume("pv2", "1Gi"))
	s.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Name: "pv1", Nth: 3, Conflict: true})
	var failed []int
	for i := 1; i <= 5; i++ {
		for _, name := range []string{"pv2", "pv1"} {
			pv, err := s.GetVolume(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			pv.Labels = map[string]string{"i": string(rune('0' + i))}
			if _, err := s.UpdateVolume(ctx, pv); err != nil {
				if name != "pv1" || !apierrors.IsConflict(err) {
					t.Errorf("update %d of %s = %v", i, name, err)
				}
				failed = append(failed, i)
			}
		}
	}
	if len(failed) != 1 || failed[0] != 3 {
		t.Errorf("failed updates of pv1 = %v, want [3]", failed)
	}
}

// TestArmFaults: faults armed on one request kind fire one per request, in
// order, where injected faults would all fire on the first.
func TestArmFaults(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	get := bindertest.Fault{Verb: bindertest.VerbGet, Name: "pv1"}
	conflict, timeout, internal, later := get, get, get, get
	conflict.Conflict = true
	timeout.Timeout = true
	later.Nth = 6 // due from the 6th get on
	disarm := s.ArmFaults(conflict, timeout, internal, later)
	want := []func(error) bool{apierrors.IsConflict, apierrors.IsTimeout, apierrors.IsInternalError,
		isNil, isNil, apierrors.IsInternalError, isNil}
	for i, ok := range want {
		if _, err := s.GetVolume(ctx, "pv1"); !ok(err) {
			t.Errorf("get %d = %v, want the %d-th armed outcome", i+1, err, i+1)
		}
	}
	if n := s.ArmedFaults(); n != 0 {
		t.Errorf("ArmedFaults = %d, want 0", n)
	}
	s.ArmFaults(conflict)
	disarm()
	if n := s.ArmedFaults(); n != 1 {
		t.Errorf("ArmedFaults after disarming used-up faults = %d, want 1", n)
	}
}

func isNil(err error) bool { return err == nil }

// TestFaultStreamsFromServerSeed: with Config.Seed, faults without a Seed of
// their own replay from the Server's seed and each has its own stream.
func TestFaultStreamsFromServerSeed(t *testing.T) {
	ctx := context.Background()
	pattern := func(seed int64) (a, b string) {
		s, _ := newServerWith(t, bindertest.Config{Seed: &seed})
		mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
		mustCreateVolume(t, s, newVolume("pv2", "1Gi"))
		s.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Name: "pv1", Fraction: 0.5})
		s.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Name: "pv2", Fraction: 0.5})
		for range 64 {
			_, err1 := s.GetVolume(ctx, "pv1")
			_, err2 := s.GetVolume(ctx, "pv2")
			a += map[bool]string{true: "x", false: "."}[err1 != nil]
			b += map[bool]string{true: "x", false: "."}[err2 != nil]
		}
		return a, b
	}
	a1, b1 := pattern(1)
	a2, b2 := pattern(1)
	if a1 != a2 || b1 != b2 {
		t.Errorf("seed 1 gave %s/%s then %s/%s, want equal", a1, b1, a2, b2)
	}
	if a1 == b1 {
		t.Errorf("two faults drew the same stream %s", a1)
	}
	if a3, _ := pattern(2); a3 == a1 {
		t.Errorf("seeds 1 and 2 gave the same stream %s", a1)
	}
}
