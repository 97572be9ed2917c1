package controller

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
)

// httpGet fetches url with a token allowed to read /metrics.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	return httpsGetAs(t, url, scraperToken)
}

// hostPathVolume returns a 1Gi ReadWriteOnce volume in phase.
func hostPathVolume(name string, policy v1.PersistentVolumeReclaimPolicy, phase v1.PersistentVolumePhase) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: policy,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: phase},
	}
}

func fakeCluster() *fake.Clientset {
	class := ""
	return newFakeClientset(
		hostPathVolume("pv-1", v1.PersistentVolumeReclaimRetain, v1.VolumeAvailable),
		&v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "claim-1", UID: "uid-1", ResourceVersion: "1"},
			Spec: v1.PersistentVolumeClaimSpec{
				StorageClassName: &class,
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
		},
	)
}

func testControllerOptions(leaderElect bool) controllerOptions {
	return controllerOptions{
		ClaimWorkers: 1, VolumeWorkers: 1, ResyncPeriod: time.Minute,
		LeaderElect: leaderElect, LeaseName: "volbind", LeaseNS: "kube-system", Identity: "replica-a",
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond,
	}
}

// startController runs controllerMain on a local listener and returns the
// listener's base URL, a cancel func and the channel of its result.
func startController(t *testing.T, cs *fake.Clientset, o controllerOptions) (base string, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	srv, base := testServing(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch := make(chan error, 1)
	go func() { ch <- controllerMain(ctx, cs, o, prometheus.NewRegistry(), srv) }()
	return base, cancel, ch
}

// waitDone waits for the controller's result.
func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("controllerMain did not return")
		return nil
	}
}

func claimBound(cs *fake.Clientset) func(ctx context.Context) bool {
	return func(ctx context.Context) bool {
		c, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "claim-1", metav1.GetOptions{})
		return err == nil && c.Status.Phase == v1.ClaimBound && c.Spec.VolumeName == "pv-1"
	}
}

func holder(t *testing.T, cs *fake.Clientset) string {
	t.Helper()
	lease, err := cs.CoordinationV1().Leases("kube-system").Get(t.Context(), "volbind", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Lease: %v", err)
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// TestControllerBindsOnFakeClientset wires the controller to client-go's
// fake clientset with leader election on: it takes the Lease, binds a
// claim, serves health and metrics, and on cancellation releases the Lease
// and returns with no goroutine left.
func TestControllerBindsOnFakeClientset(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	cs := fakeCluster()
	base, cancel, done := startController(t, cs, testControllerOptions(true))
	defer cancel()

	poll(t, "claim-1 bound to pv-1", claimBound(cs))
	if got := holder(t, cs); got != "replica-a" {
		t.Errorf("Lease holder = %q, want replica-a", got)
	}
	if code, body := httpGet(t, base+"/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := httpGet(t, base+"/readyz?verbose"); code != http.StatusOK || !strings.Contains(body, "[+]binder ok") {
		t.Errorf("/readyz = %d %q, want 200 with the binder check ok", code, body)
	}
	if code, body := httpGet(t, base+"/livez?verbose"); code != http.StatusOK || !strings.Contains(body, "[+]leaderElection ok") {
		t.Errorf("/livez = %d %q, want 200 with the leader-election check ok", code, body)
	}
	code, body := httpGet(t, base+"/metrics")
	for _, want := range []string{"volbind_controller_leader 1", "volbind_binder_binds_total 1", "volbind_binder_syncs_total", "volbind_binder_workqueue_adds_total"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/metrics = %d, want it to contain %q", code, want)
		}
	}

	cancel()
	if err := waitDone(t, done); err != nil {
		t.Errorf("controllerMain = %v, want nil after cancellation", err)
	}
	if got := holder(t, cs); got != "" {
		t.Errorf("Lease holder after shutdown = %q, want it released", got)
	}
}

func TestControllerWithoutLeaderElection(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	cs := fakeCluster()
	base, cancel, done := startController(t, cs, testControllerOptions(false))
	defer cancel()

	poll(t, "claim-1 bound to pv-1", claimBound(cs))
	if _, body := httpGet(t, base+"/metrics"); !strings.Contains(body, "volbind_controller_leader 1") {
		t.Errorf("/metrics does not say the replica leads")
	}
	cancel()
	if err := waitDone(t, done); err != nil {
		t.Errorf("controllerMain = %v, want nil", err)
	}
	for _, a := range cs.Actions() {
		if a.GetResource().Resource == "leases" {
			t.Errorf("Lease action %s with leader election off", a.GetVerb())
		}
	}
}

// TestControllerStandby checks that a replica that does not get the Lease
// does not run the Binder but reports ready, and stops cleanly.
func TestControllerStandby(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	cs := fakeCluster()
	now := metav1.NewMicroTime(time.Now())
	if _, err := cs.CoordinationV1().Leases("kube-system").Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "volbind"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("replica-b"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	base, cancel, done := startController(t, cs, testControllerOptions(true))
	defer cancel()

	// Wait until the elector has looked at the Lease twice: it has tried
	// and failed to acquire it.
	poll(t, "two Lease reads", func(context.Context) bool {
		n := 0
		for _, a := range cs.Actions() {
			if a.GetResource().Resource == "leases" && a.GetVerb() == "get" {
				n++
			}
		}
		return n >= 2
	})
	if code, body := httpGet(t, base+"/readyz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz = %d %q, want 200 ok (standing by)", code, body)
	}
	if _, body := httpGet(t, base+"/metrics"); !strings.Contains(body, "volbind_controller_leader 0") {
		t.Errorf("/metrics does not say the replica is not leading")
	}
	cancel()
	if err := waitDone(t, done); err != nil {
		t.Errorf("controllerMain = %v, want nil", err)
	}
	for _, a := range cs.Actions() {
		if r := a.GetResource().Resource; r == "persistentvolumes" || r == "persistentvolumeclaims" {
			t.Errorf("standby replica did %s %s", a.GetVerb(), r)
		}
	}
	if got := holder(t, cs); got != "replica-b" {
		t.Errorf("Lease holder = %q, want replica-b unchanged", got)
	}
}

// TestControllerLosesLease checks that a leader that cannot renew its
// Lease stops the Binder and fails with errLeadershipLost.
func TestControllerLosesLease(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	cs := fakeCluster()
	o := testControllerOptions(true)
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 600*time.Millisecond, 300*time.Millisecond, 20*time.Millisecond
	// Reactors must be in place before the clientset is used.
	var unreachable atomic.Bool
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if unreachable.Load() {
			return true, nil, errors.New("injected: the API server is unreachable")
		}
		return false, nil, nil
	})
	_, cancel, done := startController(t, cs, o)
	defer cancel()

	poll(t, "claim-1 bound to pv-1", claimBound(cs))
	unreachable.Store(true)
	if err := waitDone(t, done); !errors.Is(err, errLeadershipLost) {
		t.Errorf("controllerMain = %v, want errLeadershipLost", err)
	}
}

func TestLeaderElectionConfig(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	o := testControllerOptions(true)
	c := &controller{cs: cs, o: o}
	cfg := c.leaderElectionConfig(leaderelection.LeaderCallbacks{
		OnStartedLeading: func(context.Context) {},
		OnStoppedLeading: func() {},
	})
	lock, ok := cfg.Lock.(*resourcelock.LeaseLock)
	if !ok {
		t.Fatalf("Lock is a %T, want a *resourcelock.LeaseLock", cfg.Lock)
	}
	if lock.LeaseMeta.Namespace != "kube-system" || lock.LeaseMeta.Name != "volbind" || lock.Identity() != "replica-a" ||
		lock.Describe() != "kube-system/volbind" {
		t.Errorf("Lease lock = %s held as %q", lock.Describe(), lock.Identity())
	}
	if cfg.LeaseDuration != o.LeaseDuration || cfg.RenewDeadline != o.RenewDeadline || cfg.RetryPeriod != o.RetryPeriod || !cfg.ReleaseOnCancel {
		t.Errorf("config = %+v, want the options' durations and ReleaseOnCancel", cfg)
	}
	if _, err := leaderelection.NewLeaderElector(cfg); err != nil {
		t.Errorf("NewLeaderElector: %v", err)
	}
}

func TestControllerBadLeaderElectionConfig(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	o := testControllerOptions(true)
	o.RenewDeadline = o.LeaseDuration // parseControllerFlags refuses this; controllerMain must too
	err := controllerMain(t.Context(), newFakeClientset(), o, prometheus.NewRegistry(), nil)
	if err == nil || !strings.Contains(err.Error(), "leader election") {
		t.Errorf("controllerMain = %v, want a leader election error", err)
	}
}

// TestControllerWithoutRecycler checks --recycler=false: a released
// Recycle volume becomes Failed with a VolumeFailedRecycle event and no
// pod is touched (the no-recycler RBAC grants none).
func TestControllerWithoutRecycler(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	pv := hostPathVolume("pv-released", v1.PersistentVolumeReclaimRecycle, v1.VolumeBound)
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: "gone", UID: "uid-gone"}
	cs := newFakeClientset(pv)
	o := testControllerOptions(false)
	o.Recycler = false
	_, cancel, done := startController(t, cs, o)
	defer cancel()

	poll(t, "pv-released Failed", func(ctx context.Context) bool {
		got, err := cs.CoreV1().PersistentVolumes().Get(ctx, "pv-released", metav1.GetOptions{})
		return err == nil && got.Status.Phase == v1.VolumeFailed
	})
	poll(t, "a VolumeFailedRecycle event", func(ctx context.Context) bool {
		evs, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, ev := range evs.Items {
			if ev.Reason == binder.ReasonVolumeFailedRecycle && ev.InvolvedObject.Name == "pv-released" {
				return true
			}
		}
		return false
	})
	cancel()
	if err := waitDone(t, done); err != nil {
		t.Errorf("controllerMain = %v, want nil", err)
	}
	for _, a := range cs.Actions() {
		// The Binder's pod informer lists and watches pods; nothing else
		// touches them without the recycler.
		if v := a.GetVerb(); a.GetResource().Resource == "pods" && v != "list" && v != "watch" {
			t.Errorf("pod action %s with --recycler=false", v)
		}
	}
}
