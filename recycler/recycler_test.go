package recycler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/recycler"
	"github.com/volbind/volbind/recycler/recyclertest"
)

func TestRecycleSucceeds(t *testing.T) {
	tests := []struct {
		name string
		pv   *v1.PersistentVolume
		// kubelet finishes the pod; nil means FinishOnCreate.
		kubelet      func(p *recyclertest.Pods, key types.NamespacedName) error
		wantSource   v1.VolumeSource
		wantDeadline int64
	}{
		{
			name: "nfs, pod runs then succeeds",
			pv:   nfsPV("pv-nfs", "10Gi"),
			kubelet: func(p *recyclertest.Pods, key types.NamespacedName) error {
				if err := p.SetStatus(key.Namespace, key.Name, v1.PodStatus{Phase: v1.PodPending}); err != nil {
					return err
				}
				if err := p.SetStatus(key.Namespace, key.Name, v1.PodStatus{Phase: v1.PodRunning}); err != nil {
					return err
				}
				return p.Finish(key.Namespace, key.Name, v1.PodSucceeded, "", "")
			},
			wantSource:   v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/pv-nfs"}},
			wantDeadline: 300 + 10*30,
		},
		{
			name:         "hostPath, pod succeeds at once",
			pv:           hostPathPV("pv-host", "1500Mi"),
			wantSource:   v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data/pv-host"}},
			wantDeadline: 60 + 1*30,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, recycler.Config{})
			key := podKey(tc.pv)
			var created []*v1.Pod
			h.pods.OnCreate(func(pod *v1.Pod) { created = append(created, pod) })
			if tc.kubelet == nil {
				h.pods.FinishOnCreate(&v1.PodStatus{Phase: v1.PodSucceeded})
			}

			ch := h.start(context.Background(), tc.pv)
			if tc.kubelet != nil {
				h.waitWatching(key, 1)
				if err := tc.kubelet(h.pods, key); err != nil {
					t.Fatal(err)
				}
			}
			if err := result(t, ch); err != nil {
				t.Fatalf("Recycle(%s) = %v, want nil", tc.pv.Name, err)
			}

			if len(created) != 1 {
				t.Fatalf("created %d pods, want 1", len(created))
			}
			pod := created[0]
			if pod.Namespace != key.Namespace || pod.Name != key.Name {
				t.Errorf("pod = %s/%s, want %s", pod.Namespace, pod.Name, key)
			}
			wantAnn := map[string]string{recycler.AnnVolume: tc.pv.Name, recycler.AnnVolumeUID: string(tc.pv.UID)}
			if diff := cmp.Diff(wantAnn, pod.Annotations); diff != "" {
				t.Errorf("pod annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSource, pod.Spec.Volumes[0].VolumeSource); diff != "" {
				t.Errorf("pod volume source (-want +got):\n%s", diff)
			}
			if got := ptr.Deref(pod.Spec.ActiveDeadlineSeconds, 0); got != tc.wantDeadline {
				t.Errorf("activeDeadlineSeconds = %d, want %d", got, tc.wantDeadline)
			}
			if got := h.pods.Len(); got != 0 {
				t.Errorf("%d pods left, want 0 (the recycler pod deleted)", got)
			}
			if got := h.pods.Calls(recyclertest.Delete); got != 1 {
				t.Errorf("DeletePod calls = %d, want 1", got)
			}
			if got := h.pods.Watches(key.Namespace, key.Name); got != 0 {
				t.Errorf("%d watches left open, want 0", got)
			}
		})
	}
}

func TestRecyclePodFailed(t *testing.T) {
	tests := []struct {
		name         string
		status       v1.PodStatus
		wantReason   string
		wantMessage  string
		wantExitCode *int32
		wantInError  []string
	}{
		{
			name:        "deadline exceeded",
			status:      v1.PodStatus{Phase: v1.PodFailed, Reason: "DeadlineExceeded", Message: "Pod was active on the node longer than the specified deadline"},
			wantReason:  "DeadlineExceeded",
			wantMessage: "Pod was active on the node longer than the specified deadline",
			wantInError: []string{"DeadlineExceeded", "longer than the specified deadline", "recycler-for-pv1", "pv1"},
		},
		{
			name: "scrub script exits non-zero",
			status: v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{{
				Name:  "pv-recycler",
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "find: /scrub/x: Permission denied"}},
			}}},
			wantReason:   "Error",
			wantMessage:  "find: /scrub/x: Permission denied",
			wantExitCode: ptr.To[int32](1),
			wantInError:  []string{"Error", "Permission denied", "exit code 1"},
		},
		{
			name: "pod reason wins over the container's",
			status: v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", Message: "node low on disk", ContainerStatuses: []v1.ContainerStatus{{
				State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}},
			}}},
			wantReason:   "Evicted",
			wantMessage:  "node low on disk",
			wantExitCode: ptr.To[int32](137),
			wantInError:  []string{"Evicted", "node low on disk", "exit code 137"},
		},
		{
			name:        "no reason at all",
			status:      v1.PodStatus{Phase: v1.PodFailed},
			wantInError: []string{"without a reason"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, recycler.Config{})
			pv := nfsPV("pv1", "1Gi")
			key := podKey(pv)
			ch := h.start(context.Background(), pv)
			h.waitWatching(key, 1)
			if err := h.pods.SetStatus(key.Namespace, key.Name, tc.status); err != nil {
				t.Fatal(err)
			}
			err := result(t, ch)

			var pf *recycler.PodFailedError
			if !errors.As(err, &pf) {
				t.Fatalf("Recycle() = %v, want a *PodFailedError", err)
			}
			if !errors.Is(err, recycler.ErrPodFailed) || !recycler.IsPodFailed(err) {
				t.Errorf("errors.Is(%v, ErrPodFailed) = false, want true", err)
			}
			want := &recycler.PodFailedError{Volume: pv.Name, Pod: key, Reason: tc.wantReason, Message: tc.wantMessage, ExitCode: tc.wantExitCode}
			if diff := cmp.Diff(want, pf); diff != "" {
				t.Errorf("PodFailedError (-want +got):\n%s", diff)
			}
			for _, s := range tc.wantInError {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if got := h.pods.Len(); got != 0 {
				t.Errorf("%d pods left, want the failed pod deleted", got)
			}
		})
	}
}

func TestRecycleTimeout(t *testing.T) {
	tests := []struct {
		name        string
		cfg         recycler.Config
		pv          *v1.PersistentVolume
		wantTimeout time.Duration
	}{
		{name: "nfs default, no capacity", pv: nfsPV("pv1", "0"), wantTimeout: 300 * time.Second},
		{name: "nfs default, 10Gi", pv: nfsPV("pv1", "10Gi"), wantTimeout: 300*time.Second + 10*30*time.Second},
		{name: "nfs default, 2.5Gi rounds down", pv: nfsPV("pv1", "2560Mi"), wantTimeout: 300*time.Second + 2*30*time.Second},
		{name: "hostPath default, 4Gi", pv: hostPathPV("pv1", "4Gi"), wantTimeout: 60*time.Second + 4*30*time.Second},
		{
			name:        "configured",
			cfg:         recycler.Config{NFSTimeout: recycler.Timeout{Minimum: 10 * time.Second, PerGiB: time.Second}},
			pv:          nfsPV("pv1", "100Gi"),
			wantTimeout: 110 * time.Second,
		},
		{
			name:        "configured minimum only keeps the default increment",
			cfg:         recycler.Config{HostPathTimeout: recycler.Timeout{Minimum: 5 * time.Second}},
			pv:          hostPathPV("pv1", "3Gi"),
			wantTimeout: 5*time.Second + 3*30*time.Second,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg)
			key := podKey(tc.pv)
			if got, err := h.r.Timeout(tc.pv); err != nil || got != tc.wantTimeout {
				t.Errorf("Timeout() = %v, %v, want %v", got, err, tc.wantTimeout)
			}
			ch := h.start(context.Background(), tc.pv)
			h.waitWatching(key, 1)
			if err := h.pods.SetStatus(key.Namespace, key.Name, v1.PodStatus{Phase: v1.PodRunning}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "pod phase Running", func() bool {
				pod, ok := h.pods.Pod(key.Namespace, key.Name)
				return ok && pod.Status.Phase == v1.PodRunning
			})

			h.clock.Step(tc.wantTimeout - time.Nanosecond)
			if !h.clock.HasWaiters() {
				t.Fatalf("timer fired before %v", tc.wantTimeout)
			}
			noResult(t, ch)
			h.clock.Step(time.Nanosecond)
			err := result(t, ch)

			var te *recycler.TimeoutError
			if !errors.As(err, &te) {
				t.Fatalf("Recycle() = %v, want a *TimeoutError", err)
			}
			if !errors.Is(err, recycler.ErrTimeout) || !recycler.IsTimeout(err) {
				t.Errorf("errors.Is(%v, ErrTimeout) = false, want true", err)
			}
			if te.Timeout != tc.wantTimeout || te.Volume != tc.pv.Name || te.Pod != key {
				t.Errorf("TimeoutError = %+v, want timeout %v for volume %s, pod %s", te, tc.wantTimeout, tc.pv.Name, key)
			}
			if got := h.pods.Len(); got != 0 {
				t.Errorf("%d pods left, want the timed-out pod deleted", got)
			}
			if diff := cmp.Diff([]time.Duration{tc.wantTimeout}, h.clock.Timers()); diff != "" {
				t.Errorf("timers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecyclePodGone covers the pod disappearing while Recycle waits.
func TestRecyclePodGone(t *testing.T) {
	tests := []struct {
		name string
		// act is what another client does while Recycle waits.
		act         func(h *harness, pv *v1.PersistentVolume, key types.NamespacedName)
		wantDeletes int
		wantPodLeft bool
	}{
		{
			name: "deleted by another client",
			act: func(h *harness, _ *v1.PersistentVolume, key types.NamespacedName) {
				if err := h.pods.Remove(key.Namespace, key.Name); err != nil {
					h.t.Fatal(err)
				}
			},
			wantDeletes: 1, // NotFound, not an error
		},
		{
			// The watch is down (two failed re-watches, the recycler pauses)
			// while the pod is deleted and another recycler's pod replaces it:
			// the new pod is not ours and must not be deleted.
			name: "replaced by a pod with another UID while no watch is open",
			act: func(h *harness, pv *v1.PersistentVolume, key types.NamespacedName) {
				h.pods.FailNext(recyclertest.Watch, apierrors.NewServiceUnavailable("watch cache not ready"))
				h.pods.FailNext(recyclertest.Watch, apierrors.NewServiceUnavailable("watch cache not ready"))
				h.pods.EndWatches(key.Namespace, key.Name)
				h.waitTimers(2)
				if err := h.pods.Remove(key.Namespace, key.Name); err != nil {
					h.t.Fatal(err)
				}
				if err := h.pods.Add(ownPod(h.t, h.r, pv, v1.PodRunning)); err != nil {
					h.t.Fatal(err)
				}
				h.clock.Step(time.Second)
			},
			wantDeletes: 0,
			wantPodLeft: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, recycler.Config{})
			pv := nfsPV("pv1", "1Gi")
			key := podKey(pv)
			ch := h.start(context.Background(), pv)
			h.waitWatching(key, 1)
			tc.act(h, pv, key)
			err := result(t, ch)
			if !errors.Is(err, recycler.ErrPodDeleted) {
				t.Fatalf("Recycle() = %v, want ErrPodDeleted", err)
			}
			if got := h.pods.Calls(recyclertest.Delete); got != tc.wantDeletes {
				t.Errorf("DeletePod calls = %d, want %d", got, tc.wantDeletes)
			}
			if got := h.pods.Len() == 1; got != tc.wantPodLeft {
				t.Errorf("pod left = %v, want %v", got, tc.wantPodLeft)
			}
		})
	}
}

// cancelOnCreate creates the pod, then cancels the caller's context and
// reports its error, as a client whose request was cut off after the API
// server stored the pod.
type cancelOnCreate struct {
	*recyclertest.Pods
	cancel context.CancelFunc
}

func (c *cancelOnCreate) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	if _, err := c.Pods.CreatePod(context.WithoutCancel(ctx), pod); err != nil {
		return nil, err
	}
	c.cancel()
	return nil, ctx.Err()
}

func TestRecycleCancelled(t *testing.T) {
	pv := nfsPV("pv1", "1Gi")
	key := podKey(pv)

	t.Run("while waiting", func(t *testing.T) {
		h := newHarness(t, recycler.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		ch := h.start(ctx, pv)
		h.waitWatching(key, 1)
		cancel()
		err := result(t, ch)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Recycle() = %v, want context.Canceled", err)
		}
		if got := h.pods.Len(); got != 0 {
			t.Errorf("%d pods left, want the pod deleted despite the cancellation", got)
		}
		if got := h.pods.Calls(recyclertest.Delete); got != 1 {
			t.Errorf("DeletePod calls = %d, want 1", got)
		}
		waitFor(t, "watches to close", func() bool { return h.pods.Watches(key.Namespace, key.Name) == 0 })
		goleak.VerifyNone(t)
	})

	t.Run("before the call", func(t *testing.T) {
		h := newHarness(t, recycler.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := h.recycle(ctx, pv); !errors.Is(err, context.Canceled) {
			t.Fatalf("Recycle() = %v, want context.Canceled", err)
		}
		want := map[recyclertest.Verb]int{recyclertest.Create: 0, recyclertest.Get: 0, recyclertest.Delete: 0, recyclertest.Watch: 0}
		if diff := cmp.Diff(want, calls(h.pods)); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})

	t.Run("during a create the API server completed", func(t *testing.T) {
		pods := recyclertest.New()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r, err := recycler.New(&cancelOnCreate{Pods: pods, cancel: cancel}, recycler.Config{Clock: newTimerClock()})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Recycle(ctx, pv); !errors.Is(err, context.Canceled) {
			t.Fatalf("Recycle() = %v, want context.Canceled", err)
		}
		if got := pods.Len(); got != 0 {
			t.Errorf("%d pods left, want the pod created by the cut-off call deleted", got)
		}
		if got := pods.Calls(recyclertest.Delete); got != 1 {
			t.Errorf("DeletePod calls = %d, want 1", got)
		}
	})
}

func TestRecycleAPIErrors(t *testing.T) {
	internal := apierrors.NewInternalError(errors.New("etcd unavailable"))
	tests := []struct {
		name string
		// setup injects faults before Recycle.
		setup func(p *recyclertest.Pods)
		// finish ends the pod when Recycle waits for it; false when
		// Recycle returns without waiting.
		finish      bool
		wantErr     func(error) bool
		wantCalls   map[recyclertest.Verb]int
		wantPodLeft bool
	}{
		{
			name:      "watch cannot start",
			setup:     func(p *recyclertest.Pods) { p.FailNext(recyclertest.Watch, internal) },
			wantErr:   apierrors.IsInternalError,
			wantCalls: map[recyclertest.Verb]int{recyclertest.Watch: 1},
		},
		{
			name:      "create fails",
			setup:     func(p *recyclertest.Pods) { p.FailNext(recyclertest.Create, internal) },
			wantErr:   apierrors.IsInternalError,
			wantCalls: map[recyclertest.Verb]int{recyclertest.Watch: 1, recyclertest.Create: 1},
		},
		{
			name: "existing pod cannot be read",
			setup: func(p *recyclertest.Pods) {
				p.FailNext(recyclertest.Create, apierrors.NewAlreadyExists(v1.Resource("pods"), "recycler-for-pv1"))
				p.FailNext(recyclertest.Get, internal)
			},
			wantErr:   apierrors.IsInternalError,
			wantCalls: map[recyclertest.Verb]int{recyclertest.Watch: 1, recyclertest.Create: 1, recyclertest.Get: 1},
		},
		{
			name: "existing pod gone before it is read: created again",
			setup: func(p *recyclertest.Pods) {
				p.FailNext(recyclertest.Create, apierrors.NewAlreadyExists(v1.Resource("pods"), "recycler-for-pv1"))
			},
			finish:    true,
			wantErr:   func(err error) bool { return err == nil },
			wantCalls: map[recyclertest.Verb]int{recyclertest.Watch: 1, recyclertest.Create: 2, recyclertest.Get: 1, recyclertest.Delete: 1},
		},
		{
			name:        "delete fails after success",
			setup:       func(p *recyclertest.Pods) { p.FailNext(recyclertest.Delete, internal) },
			finish:      true,
			wantErr:     apierrors.IsInternalError,
			wantCalls:   map[recyclertest.Verb]int{recyclertest.Watch: 1, recyclertest.Create: 1, recyclertest.Delete: 1},
			wantPodLeft: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, recycler.Config{})
			pv := nfsPV("pv1", "1Gi")
			key := podKey(pv)
			tc.setup(h.pods)
			ch := h.start(context.Background(), pv)
			if tc.finish {
				h.waitWatching(key, 1)
				if err := h.pods.Finish(key.Namespace, key.Name, v1.PodSucceeded, "", ""); err != nil {
					t.Fatal(err)
				}
			}
			err := result(t, ch)
			if !tc.wantErr(err) {
				t.Fatalf("Recycle() = %v, not the wanted error", err)
			}
			if err != nil && !strings.Contains(err.Error(), key.String()) {
				t.Errorf("error %q does not name the pod %s", err, key)
			}
			want := map[recyclertest.Verb]int{recyclertest.Create: 0, recyclertest.Get: 0, recyclertest.Delete: 0, recyclertest.Watch: 0}
			for v, n := range tc.wantCalls {
				want[v] = n
			}
			if diff := cmp.Diff(want, calls(h.pods)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if got := h.pods.Len() == 1; got != tc.wantPodLeft {
				t.Errorf("pod left = %v, want %v", got, tc.wantPodLeft)
			}
			if got := h.pods.Watches(key.Namespace, key.Name); got != 0 {
				t.Errorf("%d watches left open, want 0", got)
			}
		})
	}
}

// TestRecycleFailureAndDeleteFailure checks that both errors are reported.
func TestRecycleFailureAndDeleteFailure(t *testing.T) {
	h := newHarness(t, recycler.Config{})
	pv := nfsPV("pv1", "1Gi")
	h.pods.FinishOnCreate(&v1.PodStatus{Phase: v1.PodFailed, Reason: "Error", Message: "scrub failed"})
	h.pods.FailNext(recyclertest.Delete, apierrors.NewTimeoutError("delete timed out", 1))
	err := h.recycle(context.Background(), pv)
	if !recycler.IsPodFailed(err) || !apierrors.IsTimeout(err) {
		t.Fatalf("Recycle() = %v, want the pod failure joined with the delete timeout", err)
	}
	if got := h.pods.Len(); got != 1 {
		t.Errorf("%d pods left, want the pod whose deletion failed", got)
	}
}
