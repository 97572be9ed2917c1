package bindertest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestConcurrentUpdates checks updates of one object from many goroutines
// at once, which the Server builds and validates in parallel and commits
// one at a time: every unconditional update is stored (a write that lost
// the race is rebuilt on the winner's version), each as one Modified event
// whose old version is the new version of the event before; of updates
// that all carry the same resourceVersion exactly one succeeds and the
// others conflict.
func TestConcurrentUpdates(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	pv := mustCreateVolume(t, s, newVolume("pv-1", "1Gi"))
	var (
		mu     sync.Mutex
		chain  []*v1.PersistentVolume
		broken []string
	)
	defer s.AddEventHandler(bindertest.KindVolume, toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			mu.Lock()
			defer mu.Unlock()
			if n := len(chain); n > 0 && oldObj != chain[n-1] {
				broken = append(broken, fmt.Sprintf("event %d: old is not the new version of the event before", n))
			}
			chain = append(chain, newObj.(*v1.PersistentVolume))
		},
	})()

	const writers = 16
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			in := pv.DeepCopy()
			in.ResourceVersion = "" // unconditional
			in.Labels = map[string]string{"writer": fmt.Sprint(i)}
			if _, err := s.UpdateVolume(ctx, in); err != nil {
				t.Errorf("unconditional UpdateVolume of writer %d = %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(chain) != writers || len(broken) > 0 {
		t.Fatalf("%d Modified events for %d unconditional updates, broken chain: %v", len(chain), writers, broken)
	}
	if got, want := rvOf(t, chain[writers-1]), rvOf(t, pv)+writers; got != want {
		t.Errorf("resourceVersion after %d updates = %d, want %d", writers, got, want)
	}

	latest := s.SharedVolumes()[0]
	results := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			in := latest.DeepCopy()
			in.Labels = map[string]string{"conditional": fmt.Sprint(i)}
			_, err := s.UpdateVolume(ctx, in)
			results <- err
		})
	}
	wg.Wait()
	close(results)
	var ok, conflicts int
	for err := range results {
		switch {
		case err == nil:
			ok++
		case apierrors.IsConflict(err):
			conflicts++
		default:
			t.Errorf("conditional UpdateVolume = %v, want success or Conflict", err)
		}
	}
	if ok != 1 || conflicts != writers-1 {
		t.Errorf("%d of %d updates with the same resourceVersion succeeded and %d conflicted, want 1 and %d", ok, writers, conflicts, writers-1)
	}
}

// TestLargeSeedFailsOnFirstInvalid checks a seed large enough to be
// prepared on several goroutines: with invalid objects in two parts of it,
// it fails with the error of the first in order and stores nothing; valid,
// it stores every object in order.
func TestLargeSeedFailsOnFirstInvalid(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	const n = 2000
	objs := make([]runtime.Object, n)
	for i := range objs {
		objs[i] = newVolume(fmt.Sprintf("pv-%04d", i), "1Gi")
	}
	for _, i := range []int{n - 10, n / 3} {
		objs[i].(*v1.PersistentVolume).Spec.AccessModes = nil
	}
	err := s.Seed(ctx, objs...)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), fmt.Sprintf(`"pv-%04d"`, n/3)) {
		t.Fatalf("Seed = %v, want Invalid naming pv-%04d, the first invalid volume", err, n/3)
	}
	if got := len(s.SharedVolumes()); got != 0 {
		t.Fatalf("a failed seed stored %d volumes", got)
	}
	for _, i := range []int{n - 10, n / 3} {
		objs[i].(*v1.PersistentVolume).Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	if err := s.Seed(ctx, objs...); err != nil {
		t.Fatalf("Seed = %v", err)
	}
	vols := s.SharedVolumes()
	for i, pv := range vols {
		if want := fmt.Sprintf("pv-%04d", i); pv.Name != want || rvOf(t, pv) != rvOf(t, vols[0])+uint64(i) {
			t.Fatalf("volume %d = %s at resourceVersion %s, want %s at %d: not stored in order", i, pv.Name, pv.ResourceVersion, want, rvOf(t, vols[0])+uint64(i))
		}
	}
}
