package binder

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-helpers/storage/volume"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
)

const ns = "default"

// pvOpt and pvcOpt tweak test objects.
type (
	pvOpt  func(*v1.PersistentVolume)
	pvcOpt func(*v1.PersistentVolumeClaim)
)

// newPV returns an Available, unbound, RWO, Retain volume of the given size
// with class "" unless options say otherwise.
func newPV(name, size string, opts ...pvOpt) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			// A source makes the volume valid; CSI is one no recycler handles.
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	for _, o := range opts {
		o(pv)
	}
	return pv
}

func pvPhase(p v1.PersistentVolumePhase) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Status.Phase = p }
}

// boundTo sets the claimRef; uid "" pre-binds.
func boundTo(claim string, uid types.UID) pvOpt {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim, UID: uid}
	}
}

func pvAnn(key string) pvOpt {
	return func(pv *v1.PersistentVolume) { metav1.SetMetaDataAnnotation(&pv.ObjectMeta, key, "yes") }
}

func pvClass(c string) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.StorageClassName = c }
}

func pvModes(m ...v1.PersistentVolumeAccessMode) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.AccessModes = m }
}

func pvBlock(pv *v1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock) }

func pvLabels(kv ...string) pvOpt {
	return func(pv *v1.PersistentVolume) {
		pv.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			pv.Labels[kv[i]] = kv[i+1]
		}
	}
}

func pvPolicy(p v1.PersistentVolumeReclaimPolicy) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = p }
}

func pvNoCapacity(pv *v1.PersistentVolume) { pv.Spec.Capacity = nil }

// newPVC returns a Pending RWO claim with class "" (no default class) and
// UID "uid-<name>".
func newPVC(name, size string, opts ...pvcOpt) *v1.PersistentVolumeClaim {
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: ptr.To(""),
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	for _, o := range opts {
		o(pvc)
	}
	return pvc
}

func pvcPhase(p v1.PersistentVolumeClaimPhase) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Status.Phase = p }
}

// pvcStaleStatus leaves capacity and access modes in a Pending claim's
// status, which a Pending update clears.
func pvcStaleStatus(pvc *v1.PersistentVolumeClaim) {
	pvc.Status.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	pvc.Status.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
}

func pvcVolume(name string) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.VolumeName = name }
}

func pvcAnn(key string) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) { metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, key, "yes") }
}

func pvcClass(c *string) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = c }
}

func pvcModes(m ...v1.PersistentVolumeAccessMode) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.AccessModes = m }
}

func pvcBlock(pvc *v1.PersistentVolumeClaim) { pvc.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock) }

func pvcSelector(sel *metav1.LabelSelector) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.Selector = sel }
}

// pvcBound marks the claim as bound by the controller to the volume.
func pvcBound(volumeName string) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) {
		pvc.Spec.VolumeName = volumeName
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnBindCompleted, "yes")
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnBoundByController, "yes")
		pvc.Status.Phase = v1.ClaimBound
		pvc.Status.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		pvc.Status.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}
	}
}

func newClass(name string, mode storagev1.VolumeBindingMode, isDefault bool) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name},
		Provisioner:       "example.com/csi",
		VolumeBindingMode: &mode,
	}
	if isDefault {
		sc.Annotations = map[string]string{annDefaultClass: "true"}
	}
	return sc
}

// env is a Binder on an in-memory API server, with a fake clock and a fake
// event recorder.
type env struct {
	t   testing.TB
	ctx context.Context
	srv *bindertest.Server
	fc  *testingclock.FakeClock
	rec *record.FakeRecorder
	b   *Binder
}

func newEnv(t testing.TB, objs ...runtime.Object) *env {
	t.Helper()
	return newEnvSeeded(t, (*bindertest.Server).Seed, objs...)
}

// newEnvSeeded is newEnv with objs stored by seed (Seed or SeedInvalid).
func newEnvSeeded(t testing.TB, seed func(*bindertest.Server, context.Context, ...runtime.Object) error, objs ...runtime.Object) *env {
	t.Helper()
	e := &env{t: t, ctx: t.Context(), fc: testingclock.NewFakeClock(time.Unix(1_000_000, 0))}
	e.srv = bindertest.NewWithConfig(bindertest.Config{Clock: e.fc})
	if err := seed(e.srv, e.ctx, objs...); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	e.b = e.newBinder(Config{})
	e.srv.ResetStats()
	return e
}

// newBinder creates a Binder (with the env's clock and a fresh recorder)
// and registers its handlers.
func (e *env) newBinder(cfg Config) *Binder {
	e.t.Helper()
	e.rec = record.NewFakeRecorder(1000)
	cfg.Clock, cfg.Recorder = e.fc, e.rec
	b, err := New(newResultCheck(e.t, e.srv), cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	checkBindingAnnotations(e.t, b)
	e.register(b)
	return b
}

// register subscribes b's handlers to the env's server, synchronously,
// until the test ends.
func (e *env) register(b *Binder) {
	for _, r := range []struct {
		kind bindertest.Kind
		h    interface {
			OnAdd(any, bool)
			OnUpdate(any, any)
			OnDelete(any)
		}
	}{{bindertest.KindStorageClass, b.ClassHandler()}, {bindertest.KindVolume, b.VolumeHandler()}, {bindertest.KindClaim, b.ClaimHandler()}} {
		e.t.Cleanup(e.srv.AddEventHandler(r.kind, r.h))
	}
}

// run starts b.Run and stops it at cleanup.
func (e *env) run(b *Binder) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run: %v", err)
		}
	})
	// Run has queued the objects once running is set.
	if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return b.work.running(), nil }); err != nil {
		e.t.Fatalf("Run did not start: %v", err)
	}
}

// settle waits until b is quiescent. While it is not, and a timer is
// armed on the fake clock (a retry's delay, an injected latency), it steps
// the clock a second; it never steps a clock nothing waits on.
func (e *env) settle(b *Binder) {
	e.t.Helper()
	deadline := time.Now().Add(wait.ForeverTestTimeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(e.ctx, 20*time.Millisecond)
		err := b.WaitForQuiescence(ctx)
		cancel()
		if err == nil {
			return
		}
		if e.fc.HasWaiters() {
			e.fc.Step(time.Second)
		}
	}
	e.t.Fatalf("binder not quiescent after %v", wait.ForeverTestTimeout)
}

// quiesce waits until b is quiescent without stepping the clock.
func (e *env) quiesce(b *Binder) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, wait.ForeverTestTimeout)
	defer cancel()
	if err := b.WaitForQuiescence(ctx); err != nil {
		e.t.Fatalf("binder not quiescent: %v", err)
	}
}

// eventually steps the fake clock a second at a time, letting b settle
// in between, until cond holds.
func (e *env) eventually(b *Binder, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(wait.ForeverTestTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("condition not reached after %v", wait.ForeverTestTimeout)
		}
		e.fc.Step(time.Second)
		e.settle(b)
	}
}

// events drains the recorder: "Type Reason Message" strings.
func (e *env) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.rec.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// reasons returns the reasons of events.
func reasons(events []string) []string {
	out := []string{}
	for _, ev := range events {
		f := strings.Fields(ev)
		if len(f) > 1 {
			out = append(out, f[1])
		}
	}
	return out
}

func (e *env) volume(name string) *v1.PersistentVolume {
	e.t.Helper()
	pv, err := e.srv.GetVolume(e.ctx, name)
	if err != nil {
		e.t.Fatalf("GetVolume(%q): %v", name, err)
	}
	return pv
}

func (e *env) claim(name string) *v1.PersistentVolumeClaim {
	e.t.Helper()
	pvc, err := e.srv.GetClaim(e.ctx, ns, name)
	if err != nil {
		e.t.Fatalf("GetClaim(%q): %v", name, err)
	}
	return pvc
}

// writes returns the server's write count since the last ResetStats.
func (e *env) writes() int64 { return e.srv.Stats().TotalWrites() }

// bindingOf describes the binding state of the server's objects, sorted:
// "pv=<phase>:<claim>" and "pvc=<phase>:<volume>".
func (e *env) state() []string {
	var out []string
	for _, pv := range e.srv.Volumes() {
		ref := ""
		if pv.Spec.ClaimRef != nil {
			ref = pv.Spec.ClaimRef.Name
			if pv.Spec.ClaimRef.UID == "" {
				ref += "(prebound)"
			}
		}
		out = append(out, fmt.Sprintf("%s=%s:%s", pv.Name, pv.Status.Phase, ref))
	}
	for _, pvc := range e.srv.Claims() {
		out = append(out, fmt.Sprintf("%s=%s:%s", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName))
	}
	slices.Sort(out)
	return out
}
