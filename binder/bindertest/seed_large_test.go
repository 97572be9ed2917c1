package bindertest_test

import (
	"context"
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/volbind/volbind/binder/bindertest"
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

// TestGrowKeepsStored makes room for more volumes than are stored, then
// seeds them in small chunks: Grow stores nothing and loses nothing, and
// every volume seeded before or after it is readable.
func TestGrowKeepsStored(t *testing.T) {
	s, _ := newServer(t)
	ctx := context.Background()
	if err := s.Seed(ctx, newVolume("pv-first", "1Gi")); err != nil {
		t.Fatal(err)
	}
	s.Grow(bindertest.KindVolume, 3000)
	s.Grow(bindertest.KindVolume, 10) // below the smallest reservation: nothing
	if n := len(s.Volumes()); n != 1 {
		t.Fatalf("%d volumes after Grow, want 1", n)
	}
	for chunk := range 3 {
		var objs []runtime.Object
		for i := range 1000 {
			objs = append(objs, newVolume("pv-"+strconv.Itoa(chunk*1000+i), "1Gi"))
		}
		if err := s.Seed(ctx, objs...); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.Volumes()); n != 3001 {
		t.Fatalf("%d volumes stored, want 3001", n)
	}
	for _, name := range []string{"pv-first", "pv-0", "pv-2999"} {
		if _, err := s.GetVolume(ctx, name); err != nil {
			t.Errorf("get %s: %v", name, err)
		}
	}
}
