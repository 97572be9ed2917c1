//go:build e2e && linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/volbind/volbind/binder"
)

// eventGate passes an informer's events to a handler, or, while held,
// keeps them in order until released: a watch that is slow but in order.
type eventGate struct {
	h toolscache.ResourceEventHandler
	// mu serializes the events and guards the fields below.
	mu    sync.Mutex
	held  bool
	queue []func()
}

func (g *eventGate) OnAdd(obj any, initial bool) { g.do(func() { g.h.OnAdd(obj, initial) }) }
func (g *eventGate) OnUpdate(old, obj any)       { g.do(func() { g.h.OnUpdate(old, obj) }) }
func (g *eventGate) OnDelete(obj any)            { g.do(func() { g.h.OnDelete(obj) }) }

func (g *eventGate) do(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held {
		g.queue = append(g.queue, f)
		return
	}
	f()
}

// hold keeps the next events back.
func (g *eventGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = true
}

// release delivers the events held back, in order, and lets the next ones
// through.
func (g *eventGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range g.queue {
		f()
	}
	g.queue, g.held = nil, false
}

// startBinderOn runs a Binder in-process like startBinder, but writing
// through wrap(the clientset's API) and with its claim events passing
// through claims (nil: straight). It returns the Binder and a func that
// stops it and waits for it (the cleanup calls it too).
func startBinderOn(t *testing.T, cfg binder.Config, wrap func(binder.API) binder.API, claims *eventGate) (*binder.Binder, func()) {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(1)))
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logger))
	cs := newClientAs(t, 1000, 2000, "volbind-e2e-binder")
	cfg.Recorder = record.NewFakeRecorder(1000)
	cfg.Registerer = prometheus.NewRegistry()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(binder.TrimManagedFields))
	pvs := factory.Core().V1().PersistentVolumes().Informer()
	pvcs := factory.Core().V1().PersistentVolumeClaims().Informer()
	classes := factory.Storage().V1().StorageClasses().Informer()
	var regs []toolscache.ResourceEventHandlerRegistration
	cfg.Synced = []toolscache.InformerSynced{func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return len(regs) == 3
	}}
	b, err := binder.New(wrap(binder.NewClientsetAPI(cs)), cfg)
	if err != nil {
		cancel()
		t.Fatalf("binder.New: %v", err)
	}
	claimHandler := b.ClaimHandler()
	if claims != nil {
		claims.h = claimHandler
		claimHandler = claims
	}
	for _, r := range []struct {
		inf toolscache.SharedIndexInformer
		h   toolscache.ResourceEventHandler
	}{{pvs, b.VolumeHandler()}, {pvcs, claimHandler}, {classes, b.ClassHandler()}} {
		reg, err := r.inf.AddEventHandler(r.h)
		if err != nil {
			cancel()
			t.Fatalf("AddEventHandler: %v", err)
		}
		regs = append(regs, reg)
	}
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Binder.Run: %v", err)
			}
			factory.Shutdown()
		})
	}
	t.Cleanup(stop)
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := b.WaitForQuiescence(wctx); err != nil {
		t.Fatalf("Binder did not start: %v", err)
	}
	return b, stop
}

// lostAnswerAPI carries out the first volume update that lose selects,
// answers it with kube-apiserver's timeout, as when the response is lost,
// and then fails every call, as a process that died there would.
type lostAnswerAPI struct {
	binder.API
	lose func(pv *v1.PersistentVolume) bool
	lost atomic.Bool
}

var errDead = errors.New("e2e: this Binder is gone")

func (a *lostAnswerAPI) UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if a.lost.Load() {
		return nil, errDead
	}
	out, err := a.API.UpdateVolume(ctx, pv)
	if err == nil && a.lose(pv) {
		a.lost.Store(true)
		return nil, apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
	}
	return out, err
}

func (a *lostAnswerAPI) UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if a.lost.Load() {
		return nil, errDead
	}
	return a.API.UpdateVolumeStatus(ctx, pv)
}

func (a *lostAnswerAPI) DeleteVolume(ctx context.Context, name string) error {
	if a.lost.Load() {
		return errDead
	}
	return a.API.DeleteVolume(ctx, name)
}

func (a *lostAnswerAPI) GetVolume(ctx context.Context, name string) (*v1.PersistentVolume, error) {
	if a.lost.Load() {
		return nil, errDead
	}
	return a.API.GetVolume(ctx, name)
}

// TestDeleterOnceAfterLostAnswerAndRestart: a released Delete volume's
// storage is deleted; the write that then removes kubernetes.io/pv-
// controller reaches kube-apiserver but its answer is lost, and the Binder
// dies there. The volume read back carries the finalizer no more and an
// operation mark that says the storage is deleted; a new Binder (another
// identity) deletes the volume without calling the Deleter again.
func TestDeleterOnceAfterLostAnswerAndRestart(t *testing.T) {
	f := newFixture(t)
	f.releaseFinalizers()
	d := &fakeDeleter{}
	cfg := binder.Config{Reclaim: &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{testProvisioner: d}}}
	api := &lostAnswerAPI{lose: func(pv *v1.PersistentVolume) bool {
		return pv.Annotations[binder.AnnOperation] != "" && !slices.Contains(pv.Finalizers, binder.FinalizerPVController)
	}}
	_, stop := startBinderOn(t, cfg, func(a binder.API) binder.API { api.API = a; return api }, nil)
	pv := f.volume("once", 1)
	pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
	pv.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": testProvisioner}
	f.createAvailable(pv)
	f.create(f.claim("once", 1))
	f.waitBound(1, time.Minute)
	f.eventually(time.Minute, "the finalizer on the volume", func(context.Context) (bool, error) {
		return slices.Contains(f.getVolume(pv.Name).Finalizers, binder.FinalizerPVController), nil
	})
	f.deleteClaim("once")
	f.eventually(time.Minute, "the lost answer", func(context.Context) (bool, error) { return api.lost.Load(), nil })
	stop()

	got := f.getVolume(pv.Name)
	var mark struct {
		Op   string `json:"op"`
		Done bool   `json:"done"`
	}
	if err := json.Unmarshal([]byte(got.Annotations[binder.AnnOperation]), &mark); err != nil || mark.Op != "delete" || !mark.Done {
		t.Errorf("operation mark after the lost answer = %q (%v), want op delete, done", got.Annotations[binder.AnnOperation], err)
	}
	if slices.Contains(got.Finalizers, binder.FinalizerPVController) {
		t.Errorf("finalizers after the lost answer = %v, want %s removed", got.Finalizers, binder.FinalizerPVController)
	}

	startBinder(t, cfg)
	f.waitGone(pv.Name)
	if names := d.names(); !slices.Equal(names, []string{pv.Name}) {
		t.Errorf("Deleter calls = %q, want one, for %s", names, pv.Name)
	}
}

// conflictWatchAPI reports, once, a claim update that conflicted and the
// successful read of that claim that followed it.
type conflictWatchAPI struct {
	binder.API
	conflicted atomic.Bool
	reread     chan *v1.PersistentVolumeClaim
}

func (a *conflictWatchAPI) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	out, err := a.API.UpdateClaim(ctx, pvc)
	if apierrors.IsConflict(err) {
		a.conflicted.Store(true)
	}
	return out, err
}

func (a *conflictWatchAPI) GetClaim(ctx context.Context, namespace, name string) (*v1.PersistentVolumeClaim, error) {
	out, err := a.API.GetClaim(ctx, namespace, name)
	if err == nil && a.conflicted.Load() {
		select {
		case a.reread <- out:
		default:
		}
	}
	return out, err
}

// TestRecreatedClaimWhileEventsAreLate: a claim is deleted and created
// again under its name while the Binder's claim events are late (in
// order). The Binder, resyncing the old claim, binds a volume to it; the
// write of the old claim conflicts on kube-apiserver and the Binder reads
// the new claim. Then the late events arrive: the old claim's delete, the
// new one's create. The new claim is bound to the other volume.
func TestRecreatedClaimWhileEventsAreLate(t *testing.T) {
	f := newFixture(t)
	gate := &eventGate{}
	api := &conflictWatchAPI{reread: make(chan *v1.PersistentVolumeClaim, 1)}
	b, _ := startBinderOn(t, binder.Config{ResyncPeriod: time.Second}, func(a binder.API) binder.API { api.API = a; return api }, gate)
	f.create(f.claim("again", 1))
	f.settle(b)
	gate.hold()
	if err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Delete(t.Context(), "again", deleteNow()); err != nil {
		t.Fatalf("delete claim: %v", err)
	}
	f.create(f.claim("again", 1))
	recreated := f.getClaim("again")
	f.create(f.volume("pv1", 1), f.volume("pv2", 1))
	var read *v1.PersistentVolumeClaim
	select {
	case read = <-api.reread:
	case <-time.After(time.Minute):
		t.Fatal("the Binder's write of the old claim never conflicted and read the new one")
	}
	if read.UID != recreated.UID {
		t.Fatalf("read after the conflict: claim %s, want the new claim %s", read.UID, recreated.UID)
	}
	gate.release()
	f.waitBound(1, time.Minute)
	got := f.getClaim("again")
	if got.UID != recreated.UID || got.Spec.VolumeName == "" {
		t.Fatalf("claim again = %s bound to %q, want the new claim %s bound", got.UID, got.Spec.VolumeName, recreated.UID)
	}
	if pv := f.getVolume(got.Spec.VolumeName); pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != recreated.UID {
		t.Errorf("volume %s bound to %v, want the new claim %s", pv.Name, pv.Spec.ClaimRef, recreated.UID)
	}
}

// TestControllerBindingThatNoLongerMatches: a volume bound by the
// controller (pv.kubernetes.io/bound-by-controller) to a claim of another
// class is rolled back, and the claim is bound to a volume of its class; a
// volume the user pre-bound to a claim of another class is bound to it, as
// Kubernetes does.
func TestControllerBindingThatNoLongerMatches(t *testing.T) {
	f := newFixture(t)
	f.create(f.claim("chosen", 1), f.claim("user", 1))
	chosen := f.getClaim("chosen")
	stale := f.volume("stale", 1)
	stale.Spec.StorageClassName = f.class + "-other"
	stale.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
	stale.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: f.ns, Name: "chosen", UID: chosen.UID}
	prebound := f.volume("prebound", 1)
	prebound.Spec.StorageClassName = f.class + "-other"
	prebound.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: f.ns, Name: "user"}
	f.create(stale, prebound, f.volume("right", 1))
	startBinder(t, binder.Config{})
	f.waitBound(2, time.Minute)
	for _, c := range []struct{ claim, volume string }{{"chosen", f.ns + "-right"}, {"user", prebound.Name}} {
		got := f.getClaim(c.claim)
		pv := f.getVolume(c.volume)
		if got.Status.Phase != v1.ClaimBound || got.Spec.VolumeName != c.volume || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != got.UID {
			t.Errorf("claim %s is %s with volume %q, volume %s bound to %v; want them bound to each other",
				c.claim, got.Status.Phase, got.Spec.VolumeName, c.volume, pv.Spec.ClaimRef)
		}
	}
	if pv := f.getVolume(stale.Name); pv.Spec.ClaimRef != nil || pv.Status.Phase != v1.VolumeAvailable || metav1.HasAnnotation(pv.ObjectMeta, "pv.kubernetes.io/bound-by-controller") {
		t.Errorf("volume stale = %s bound to %v (annotations %v), want Available, unbound", pv.Status.Phase, pv.Spec.ClaimRef, pv.Annotations)
	}
}
