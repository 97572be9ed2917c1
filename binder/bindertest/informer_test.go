package bindertest_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// recordingLW records whether a reflector listed or streamed.
type recordingLW struct {
	lw                toolscache.ListerWatcherWithContext
	mu                sync.Mutex
	lists, streamings int
}

func (r *recordingLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	r.mu.Lock()
	r.lists++
	r.mu.Unlock()
	return r.lw.ListWithContext(ctx, opts)
}

func (r *recordingLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		r.mu.Lock()
		r.streamings++
		r.mu.Unlock()
	}
	return r.lw.WatchWithContext(ctx, opts)
}

func (r *recordingLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return r.ListWithContext(context.Background(), opts)
}

func (r *recordingLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return r.WatchWithContext(context.Background(), opts)
}

func (r *recordingLW) counts() (lists, streamings int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lists, r.streamings
}

// listWatchOnly hides a ListerWatcher's support for streaming lists, so a
// reflector lists and then watches.
type listWatchOnly struct{ *recordingLW }

func (listWatchOnly) IsWatchListSemanticsUnSupported() bool { return true }

// versions renders volumes as sorted "name@resourceVersion".
func versions(objs []any) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		pv := o.(*v1.PersistentVolume)
		out = append(out, pv.Name+"@"+pv.ResourceVersion)
	}
	sort.Strings(out)
	return out
}

func TestInformerOnListWatch(t *testing.T) {
	tests := []struct {
		name      string
		streaming bool
	}{
		{"streaming list", true},
		{"list and watch", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			s, _ := newServerWith(t, bindertest.Config{History: 1})
			if err := s.Seed(ctx, newVolume("pv-a", "1Gi"), newVolume("pv-b", "1Gi"), newClaim("ns", "c", "1Gi")); err != nil {
				t.Fatalf("Seed = %v", err)
			}
			rec := &recordingLW{lw: toolscache.ToListerWatcherWithContext(s.ListWatch(bindertest.KindVolume))}
			var lw toolscache.ListerWatcher = rec
			if !tc.streaming {
				lw = listWatchOnly{rec}
			}
			inf := toolscache.NewSharedIndexInformer(lw, &v1.PersistentVolume{}, 0, toolscache.Indexers{})
			var (
				mu     sync.Mutex
				events []string
			)
			if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc: func(obj any) {
					mu.Lock()
					events = append(events, "add "+obj.(*v1.PersistentVolume).Name)
					mu.Unlock()
				},
				UpdateFunc: func(_, obj any) {
					mu.Lock()
					events = append(events, "update "+obj.(*v1.PersistentVolume).Name)
					mu.Unlock()
				},
				DeleteFunc: func(obj any) {
					mu.Lock()
					events = append(events, fmt.Sprintf("delete %s", obj.(*v1.PersistentVolume).Name))
					mu.Unlock()
				},
			}); err != nil {
				t.Fatalf("AddEventHandler = %v", err)
			}
			var wg sync.WaitGroup
			wg.Go(func() { inf.RunWithContext(ctx) })
			defer func() {
				cancel()
				wg.Wait()
			}()
			if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				t.Fatalf("informer did not sync")
			}
			pv := mustCreateVolume(t, s, newVolume("pv-c", "1Gi"))
			pv.Status.Phase = v1.VolumeAvailable
			if _, err := s.UpdateVolumeStatus(ctx, pv); err != nil {
				t.Fatalf("UpdateVolumeStatus = %v", err)
			}
			if err := s.DeleteVolume(ctx, "pv-a"); err != nil {
				t.Fatalf("DeleteVolume = %v", err)
			}
			var want []string
			for _, v := range s.Volumes() {
				want = append(want, v.Name+"@"+v.ResourceVersion)
			}
			wantEvents := []string{"add pv-a", "add pv-b", "add pv-c", "update pv-c", "delete pv-a"}
			// The store is updated before the handlers are told: wait for
			// both.
			seen := func() []string {
				mu.Lock()
				defer mu.Unlock()
				return append([]string(nil), events...)
			}
			err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true,
				func(context.Context) (bool, error) {
					return cmp.Equal(want, versions(inf.GetStore().List())) && len(seen()) >= len(wantEvents), nil
				})
			if err != nil {
				t.Fatalf("informer store = %v, want %v; events %v", versions(inf.GetStore().List()), want, seen())
			}
			got := seen()
			// The informer's initial adds come in no particular order.
			sort.Strings(got[:min(2, len(got))])
			if diff := cmp.Diff(wantEvents, got); diff != "" {
				t.Errorf("informer events (-want +got):\n%s", diff)
			}
			// The server ends every watch; with a history of one event the
			// reflectors' resume fails as Expired and they relist. The
			// store converges either way.
			s.CloseWatches()
			for i := range 3 {
				mustCreateVolume(t, s, newVolume(fmt.Sprintf("pv-after-%d", i), "1Gi"))
			}
			want = want[:0]
			for _, v := range s.Volumes() {
				want = append(want, v.Name+"@"+v.ResourceVersion)
			}
			err = wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true,
				func(context.Context) (bool, error) { return cmp.Equal(want, versions(inf.GetStore().List())), nil })
			if err != nil {
				t.Fatalf("informer store after CloseWatches = %v, want %v", versions(inf.GetStore().List()), want)
			}
			if lists, streamings := rec.counts(); (streamings > 0) != tc.streaming || (lists > 0) == tc.streaming {
				t.Errorf("reflector made %d lists and %d streaming lists, want streaming=%v", lists, streamings, tc.streaming)
			}
		})
	}
}
