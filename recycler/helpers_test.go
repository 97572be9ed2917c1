package recycler_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/volbind/volbind/recycler"
	"github.com/volbind/volbind/recycler/recyclertest"
)

// nfsPV returns a Recycle volume on NFS with the given capacity.
func nfsPV(name, capacity string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("pv-uid-" + name)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(capacity)},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRecycle,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				NFS: &v1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/" + name, ReadOnly: true},
			},
		},
	}
}

// hostPathPV returns a Recycle volume on a host path.
func hostPathPV(name, capacity string) *v1.PersistentVolume {
	pv := nfsPV(name, capacity)
	pv.Spec.NFS = nil
	pv.Spec.HostPath = &v1.HostPathVolumeSource{Path: "/data/" + name}
	return pv
}

// podKey is the key of pv's recycler pod with the default template.
func podKey(pv *v1.PersistentVolume) types.NamespacedName {
	return types.NamespacedName{Namespace: metav1.NamespaceDefault, Name: recycler.PodName(pv.Name)}
}

// timerClock is a fake clock that records the duration of every timer, so
// tests know which timers the recycler armed before they step the clock.
type timerClock struct {
	*testingclock.FakeClock
	// mu guards timers.
	mu     sync.Mutex
	timers []time.Duration
}

func newTimerClock() *timerClock {
	return &timerClock{FakeClock: testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))}
}

// NewTimer records d after the fake clock has registered the timer.
func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	c.mu.Lock()
	c.timers = append(c.timers, d)
	c.mu.Unlock()
	return t
}

// Timers returns the durations of the timers created so far, in order.
func (c *timerClock) Timers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.timers)
}

var _ clock.Clock = (*timerClock)(nil)

// harness is one Recycler over a fake PodAPI and a fake clock.
type harness struct {
	t     *testing.T
	pods  *recyclertest.Pods
	clock *timerClock
	r     *recycler.Recycler
}

func newHarness(t *testing.T, cfg recycler.Config) *harness {
	t.Helper()
	h := &harness{t: t, pods: recyclertest.New(), clock: newTimerClock()}
	cfg.Clock = h.clock
	r, err := recycler.New(h.pods, cfg)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	h.r = r
	return h
}

// start runs Recycle in a goroutine; the test must receive its result with
// result, which waits for the goroutine.
func (h *harness) start(ctx context.Context, pv *v1.PersistentVolume) <-chan error {
	// Logs go to t.Log, shown for failed tests only.
	ctx = klog.NewContext(ctx, ktesting.NewLogger(h.t, ktesting.NewConfig()))
	ch := make(chan error, 1)
	go func() { ch <- h.r.Recycle(ctx, pv) }()
	return ch
}

// recycle runs Recycle and fails the test if it does not return in time
// (instead of hanging when it waits for a pod nobody finishes).
func (h *harness) recycle(ctx context.Context, pv *v1.PersistentVolume) error {
	h.t.Helper()
	return result(h.t, h.start(ctx, pv))
}

// waitTimers waits until the recycler armed n timers: the first is the
// pod's timeout, armed once the pod was created or adopted.
func (h *harness) waitTimers(n int) {
	h.t.Helper()
	waitFor(h.t, "recycler to arm its timers", func() bool { return len(h.clock.Timers()) >= n })
}

// waitWatching waits until the recycler waits for pod key on an open watch
// after watchCalls WatchPod calls.
func (h *harness) waitWatching(key types.NamespacedName, watchCalls int) {
	h.t.Helper()
	h.waitTimers(1)
	waitFor(h.t, "recycler to watch the pod", func() bool {
		return h.pods.Calls(recyclertest.Watch) == watchCalls && h.pods.Watches(key.Namespace, key.Name) == 1
	})
}

// waitFor polls cond until it holds or the test times out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// result returns the outcome of a Recycle started with start.
func result(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("Recycle did not return")
		return nil
	}
}

// noResult fails the test if Recycle already returned.
func noResult(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("Recycle returned %v early", err)
	default:
	}
}

// calls returns the PodAPI calls made, by verb.
func calls(p *recyclertest.Pods) map[recyclertest.Verb]int {
	return map[recyclertest.Verb]int{
		recyclertest.Create: p.Calls(recyclertest.Create),
		recyclertest.Get:    p.Calls(recyclertest.Get),
		recyclertest.Delete: p.Calls(recyclertest.Delete),
		recyclertest.Watch:  p.Calls(recyclertest.Watch),
	}
}

// ownPod returns the pod r would create for pv, in phase, as a pod left by
// an earlier run.
func ownPod(t *testing.T, r *recycler.Recycler, pv *v1.PersistentVolume, phase v1.PodPhase) *v1.Pod {
	t.Helper()
	pod, err := r.PodFor(pv)
	if err != nil {
		t.Fatalf("PodFor(%s) = %v", pv.Name, err)
	}
	pod.Status.Phase = phase
	return pod
}
