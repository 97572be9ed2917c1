package binder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
)

// pairs returns n volumes of 1..n Gi and n claims of 1..n Gi.
func pairs(n int) []runtime.Object {
	var out []runtime.Object
	for i := 1; i <= n; i++ {
		out = append(out, newPV(fmt.Sprintf("pv%03d", i), fmt.Sprintf("%dGi", i)),
			newPVC(fmt.Sprintf("claim%03d", i), fmt.Sprintf("%dGi", i)))
	}
	return out
}

// checkAllBound checks that every claim is Bound to a distinct volume that
// is Bound to it, with UIDs matching.
func checkAllBound(t *testing.T, e *env, claims int) {
	t.Helper()
	volumes := map[string]*v1.PersistentVolume{}
	for _, pv := range e.srv.Volumes() {
		volumes[pv.Name] = pv
	}
	used := map[string]string{}
	n := 0
	for _, pvc := range e.srv.Claims() {
		n++
		pv := volumes[pvc.Spec.VolumeName]
		if pvc.Status.Phase != v1.ClaimBound || pv == nil || pv.Status.Phase != v1.VolumeBound ||
			pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
			t.Errorf("claim %s not bound: phase %s, volume %q", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName)
			continue
		}
		if other, dup := used[pv.Name]; dup {
			t.Errorf("volume %s bound to %s and %s", pv.Name, other, pvc.Name)
		}
		used[pv.Name] = pvc.Name
	}
	for name, pv := range volumes {
		if _, ok := used[name]; !ok && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID != "" {
			t.Errorf("volume %s bound to %s, which is not bound to it", name, pv.Spec.ClaimRef.Name)
		}
	}
	if n != claims {
		t.Errorf("%d claims, want %d", n, claims)
	}
}

func TestRunBindsEverything(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			t.Parallel()
			const n = 50
			e := newEnv(t, pairs(n)...)
			reg := prometheus.NewPedanticRegistry()
			b := e.newBinder(Config{Registerer: reg, ClaimWorkers: workers, VolumeWorkers: workers})
			bindPairs(t, e, b, n)
			var m dto.Metric
			if err := b.metrics.binds.Write(&m); err != nil || m.GetCounter().GetValue() != n {
				got := m.GetCounter().GetValue()
				t.Errorf("binds_total = %v (%v), want %d", got, err, n)
			}
			if _, err := reg.Gather(); err != nil {
				t.Errorf("Gather: %v", err)
			}
		})
	}
}

// bindPairs runs b on the n pairs of the env (volume pvNNN and claim
// claimNNN of NNN Gi) and checks that every claim got the volume of its own
// size (best fit) with four writes per binding and no conflict.
func bindPairs(t *testing.T, e *env, b *Binder, n int) {
	t.Helper()
	e.srv.ResetStats()
	e.run(b)
	e.settle(b)
	checkAllBound(t, e, n)
	st := e.srv.Stats()
	if st.TotalWrites() != int64(4*n) || st.Conflicts != 0 {
		t.Errorf("writes = %d, conflicts = %d, want %d and 0", st.TotalWrites(), st.Conflicts, 4*n)
	}
	for _, pvc := range e.srv.Claims() {
		if want := "pv" + strings.TrimPrefix(pvc.Name, "claim"); pvc.Spec.VolumeName != want {
			t.Errorf("claim %s bound to %s, want %s", pvc.Name, pvc.Spec.VolumeName, want)
		}
	}
}

// The four writes of a binding, in order.
var bindWrites = []struct {
	name string
	verb bindertest.Verb
	kind bindertest.Kind
	obj  string
}{
	{"volume claimRef", bindertest.VerbUpdate, bindertest.KindVolume, "pv1"},
	{"volume status", bindertest.VerbUpdateStatus, bindertest.KindVolume, "pv1"},
	{"claim volumeName", bindertest.VerbUpdate, bindertest.KindClaim, "claim1"},
	{"claim status", bindertest.VerbUpdateStatus, bindertest.KindClaim, "claim1"},
}

func TestConflictDuringEachWrite(t *testing.T) {
	t.Parallel()
	for _, w := range bindWrites {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, newPV("pv1", "1Gi"), newPV("pv2", "2Gi"), newPVC("claim1", "1Gi"))
			ns := ""
			if w.kind == bindertest.KindClaim {
				ns = "default"
			}
			e.srv.InjectFault(bindertest.Fault{Verb: w.verb, Kind: w.kind, Namespace: ns, Name: w.obj, Conflict: true, Times: 1})
			e.run(e.b)
			e.settle(e.b)
			checkAllBound(t, e, 1)
			st := e.srv.Stats()
			if st.Conflicts != 1 {
				t.Errorf("conflicts = %d, want 1", st.Conflicts)
			}
			if got := e.volume("pv2"); got.Spec.ClaimRef != nil || got.Status.Phase != v1.VolumeAvailable {
				t.Errorf("pv2 = %v/%v, want untouched", got.Spec.ClaimRef, got.Status.Phase)
			}
			// 4 successful writes plus the conflicting one.
			if st.TotalWrites() != 5 {
				t.Errorf("writes = %d, want 5 (%v)", st.TotalWrites(), st.Writes)
			}
		})
	}
}

func TestRestartBetweenWrites(t *testing.T) {
	t.Parallel()
	for done := 1; done < len(bindWrites); done++ {
		w := bindWrites[done]
		t.Run(fmt.Sprintf("after %d writes", done), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, newPV("pv1", "1Gi"), newPV("pv2", "2Gi"), newPVC("claim1", "1Gi"))
			ns := ""
			if w.kind == bindertest.KindClaim {
				ns = "default"
			}
			crash := errors.New("binder crashed")
			remove := e.srv.InjectFault(bindertest.Fault{Verb: w.verb, Kind: w.kind, Namespace: ns, Name: w.obj, Err: crash})
			if err := e.b.SyncClaim(e.ctx, "default/claim1"); !errors.Is(err, crash) {
				t.Fatalf("SyncClaim = %v, want the injected error", err)
			}
			remove()
			if got := e.writes(); got != int64(done+1) {
				t.Fatalf("writes before the crash = %d, want %d", got, done+1)
			}
			// A new Binder (the old one is gone) on the same server.
			e.srv.ResetStats()
			b := e.newBinder(Config{})
			e.run(b)
			e.settle(b)
			checkAllBound(t, e, 1)
			st := e.srv.Stats()
			if want := int64(len(bindWrites) - done); st.TotalWrites() != want || st.Conflicts != 0 {
				t.Errorf("writes after restart = %d, conflicts = %d, want %d and 0 (%v)", st.TotalWrites(), st.Conflicts, want, st.Writes)
			}
			if e.volume("pv2").Spec.ClaimRef != nil {
				t.Errorf("pv2 bound too")
			}
		})
	}
}

func TestConsistentObjectsCostNoWrite(t *testing.T) {
	t.Parallel()
	var seed []runtime.Object
	for i := range 20 {
		pv, pvc := fmt.Sprintf("pv%d", i), fmt.Sprintf("claim%d", i)
		seed = append(seed,
			newPV(pv, "10Gi", boundTo(pvc, types.UID("uid-"+pvc)), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)),
			newPVC(pvc, "1Gi", pvcBound(pv)))
	}
	seed = append(seed, newPV("free", "1Gi"), newPV("released", "1Gi", boundTo("gone", "uid-gone"), pvPhase(v1.VolumeReleased)))
	e := newEnv(t, seed...)
	b := e.newBinder(Config{Registerer: prometheus.NewRegistry()})
	e.srv.ResetStats()
	e.run(b)
	e.settle(b)
	// Wait for two more syncs of every claim: resyncs.
	e.eventually(b, func() bool {
		var m dto.Metric
		_ = b.metrics.syncs.WithLabelValues("claim", resultSuccess).Write(&m)
		return m.GetCounter().GetValue() >= 3*20
	})
	if st := e.srv.Stats(); st.TotalWrites() != 0 {
		t.Errorf("writes = %v, want none", st.Writes)
	}
	if ev := e.events(); len(ev) != 0 {
		t.Errorf("events = %v, want none", ev)
	}
}

func TestResyncBindsNewVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPVC("claim1", "1Gi"))
	e.run(e.b)
	e.settle(e.b)
	if _, err := e.srv.CreateVolume(e.ctx, newPV("pv1", "5Gi")); err != nil {
		t.Fatal(err)
	}
	e.settle(e.b)
	if got := e.claim("claim1"); got.Spec.VolumeName != "" {
		t.Fatalf("bound before the resync, as Kubernetes would not")
	}
	e.eventually(e.b, func() bool { return e.claim("claim1").Status.Phase == v1.ClaimBound })
	checkAllBound(t, e, 1)
}

func TestDeletions(t *testing.T) {
	t.Parallel()
	bound := func() []runtime.Object {
		return objs(newPV("pv1", "10Gi", boundTo("claim1", "uid-claim1"), pvAnn(volume.AnnBoundByController), pvPhase(v1.VolumeBound)),
			newPVC("claim1", "1Gi", pvcBound("pv1")))
	}
	t.Run("claim deleted: volume Released", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, bound()...)
		e.run(e.b)
		e.settle(e.b)
		if err := e.srv.DeleteClaim(e.ctx, ns, "claim1"); err != nil {
			t.Fatal(err)
		}
		e.settle(e.b)
		if got := e.volume("pv1").Status.Phase; got != v1.VolumeReleased {
			t.Errorf("phase = %s, want Released", got)
		}
	})
	t.Run("volume deleted: claim Lost", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, bound()...)
		e.run(e.b)
		e.settle(e.b)
		if err := e.srv.DeleteVolume(e.ctx, "pv1"); err != nil {
			t.Fatal(err)
		}
		e.settle(e.b)
		if got := e.claim("claim1").Status.Phase; got != v1.ClaimLost {
			t.Errorf("phase = %s, want Lost", got)
		}
		if got := reasons(e.events()); len(got) != 1 || got[0] != ReasonClaimLost {
			t.Errorf("events = %v, want [ClaimLost]", got)
		}
	})
}

// recordingAPI records the claims written with UpdateClaim.
type recordingAPI struct {
	API
	updates []*v1.PersistentVolumeClaim
}

func (r *recordingAPI) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	r.updates = append(r.updates, pvc.DeepCopy())
	return r.API.UpdateClaim(ctx, pvc)
}

// TestDefaultClassAssignedRetroactively: a claim without class that no
// volume of class "" matches gets the default class written (Kubernetes'
// retroactive default StorageClass assignment). Whether the server accepts
// the write is the server's business; the request is checked here.
func TestDefaultClassAssignedRetroactively(t *testing.T) {
	t.Parallel()
	older := newClass("older", storagev1.VolumeBindingImmediate, true)
	older.CreationTimestamp.Time = time.Unix(1, 0)
	e := newEnv(t, older, newClass("gold", storagev1.VolumeBindingImmediate, true), newClass("silver", storagev1.VolumeBindingImmediate, false),
		newPV("pv1", "5Gi", pvClass("gold")), newPVC("claim1", "1Gi", pvcClass(nil)), newPVC("claim2", "1Gi"))
	api := &recordingAPI{API: e.srv}
	b, err := New(api, Config{Clock: e.fc})
	if err != nil {
		t.Fatal(err)
	}
	for kind, h := range map[bindertest.Kind]interface {
		OnAdd(any, bool)
		OnUpdate(any, any)
		OnDelete(any)
	}{bindertest.KindStorageClass: b.ClassHandler(), bindertest.KindVolume: b.VolumeHandler(), bindertest.KindClaim: b.ClaimHandler()} {
		t.Cleanup(e.srv.AddEventHandler(kind, h))
	}
	_ = b.SyncClaim(e.ctx, "default/claim1")
	if len(api.updates) != 1 {
		t.Fatalf("%d claim updates, want 1", len(api.updates))
	}
	if got := api.updates[0].Spec.StorageClassName; got == nil || *got != "gold" {
		t.Errorf("class written = %v, want the newest default class, gold", got)
	}
	// A claim with class "" is never given the default class.
	if err := b.SyncClaim(e.ctx, "default/claim2"); err != nil || len(api.updates) != 1 {
		t.Errorf("SyncClaim(claim2) = %v with %d updates, want no update", err, len(api.updates))
	}
}

func TestRunTwiceAndConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.run(e.b)
	if err := e.b.Run(e.ctx); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run = %v, want ErrAlreadyRunning", err)
	}
	for _, cfg := range []Config{{ClaimWorkers: -1}, {VolumeWorkers: -1}, {ResyncJitter: 1}, {ResyncPeriod: 63}, {RetryBaseDelay: -1}} {
		if _, err := New(e.srv, cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
	if _, err := New(nil, Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New(nil) = %v, want ErrInvalidConfig", err)
	}
	reg := prometheus.NewRegistry()
	if _, err := New(e.srv, Config{Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(e.srv, Config{Registerer: reg}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New with metrics registered twice = %v, want ErrInvalidConfig", err)
	}
}

func TestWaitForQuiescenceHonoursContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "1Gi"), newPVC("claim1", "1Gi"))
	// A permanent error keeps the claim retrying: never quiescent.
	e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindVolume, Err: errors.New("down")})
	e.run(e.b)
	ctx, cancel := context.WithTimeout(e.ctx, 50*time.Millisecond)
	defer cancel()
	if err := e.b.WaitForQuiescence(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitForQuiescence = %v, want DeadlineExceeded", err)
	}
}

func TestNewForClientsetNil(t *testing.T) {
	t.Parallel()
	if _, err := NewForClientset(t.Context(), nil, nil, Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("NewForClientset(nil) = %v, want ErrInvalidConfig", err)
	}
}

// TestClassChangeRequeuesClaims: a class created after its claims queues
// the unbound ones, which then follow its binding mode.
func TestClassChangeRequeuesClaims(t *testing.T) {
	t.Parallel()
	// Without its class the claim is left to provisioning: no event.
	e := newEnv(t, newPVC("claim1", "1Gi", pvcClass(ptr.To("wffc"))))
	e.run(e.b)
	e.settle(e.b)
	if ev := e.events(); len(ev) != 0 {
		t.Fatalf("events before the class exists: %v", ev)
	}
	if err := e.srv.Seed(e.ctx, newClass("wffc", storagev1.VolumeBindingWaitForFirstConsumer, false)); err != nil {
		t.Fatal(err)
	}
	// No clock step: only the class event can queue the claim.
	e.settle(e.b)
	if got := reasons(e.events()); !slices.Equal(got, []string{ReasonWaitForFirstConsumer}) {
		t.Errorf("events after the class appeared = %v, want [WaitForFirstConsumer]", got)
	}
}

// TestRunStopsEverything: once Run has returned, no goroutine of the
// Binder (workers, resync, queues) is left. Not parallel, so that other
// tests' goroutines do not interfere.
func TestRunStopsEverything(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	srv := bindertest.New()
	if err := srv.Seed(t.Context(), pairs(10)...); err != nil {
		t.Fatal(err)
	}
	b, err := New(srv, Config{ClaimWorkers: 3, VolumeWorkers: 2, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	remove := srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler())
	defer remove()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	if err := b.WaitForQuiescence(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	goleak.VerifyNone(t, opt)
}
