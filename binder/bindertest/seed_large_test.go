package bindertest_test

import (
	"context"
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSeedLarge seeds more volumes than the store holds, twice (the store
// makes room for them beforehand, copying what it holds), and then a seed
// that repeats a stored name: every volume stored once seeded, readable
// and updatable, and the failed seed storing nothing.
func TestSeedLarge(t *testing.T) {
	s, _ := newServer(t)
	ctx := context.Background()
	volumes := func(from, to int) []runtime.Object {
		var objs []runtime.Object
		for i := from; i < to; i++ {
			objs = append(objs, newVolume("pv-"+strconv.Itoa(i), "1Gi"))
		}
		return objs
	}
	if err := s.Seed(ctx, volumes(0, 1500)...); err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(ctx, volumes(1500, 5000)...); err != nil {
		t.Fatal(err)
	}
	err := s.Seed(ctx, volumes(4999, 7000)...)
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("seed repeating pv-4999: %v, want AlreadyExists", err)
	}
	if n := len(s.Volumes()); n != 5000 {
		t.Fatalf("%d volumes stored, want 5000", n)
	}
	for _, i := range []int{0, 1499, 1500, 4999} {
		pv, err := s.GetVolume(ctx, "pv-"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		next := pv.DeepCopy()
		next.Labels = map[string]string{"touched": "yes"}
		if _, err := s.UpdateVolume(ctx, next); err != nil {
			t.Fatalf("update %s: %v", pv.Name, err)
		}
	}
	if _, err := s.GetVolume(ctx, "pv-5000"); !apierrors.IsNotFound(err) {
		t.Errorf("pv-5000 of the failed seed: %v, want NotFound", err)
	}
	var touched int
	for _, pv := range s.Volumes() {
		if pv.Labels["touched"] == "yes" {
			touched++
		}
	}
	if touched != 4 {
		t.Errorf("%d volumes updated, want 4", touched)
	}
}
