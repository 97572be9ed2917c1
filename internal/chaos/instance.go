package chaos

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
)

// instance is one Binder with its own API client, plugins and event
// sources. It crashes when it makes the call its crash plan picks: that
// call is carried out or not, and every later call fails.
type instance struct {
	id  int
	srv *bindertest.Server
	st  *storage
	vs  *violations
	// crash is the run's crash plan; nil for an instance that never
	// crashes.
	crash *crashPlan
	// fence is the instance's Config.Fence; nil in unfenced runs.
	fence binder.Fence

	dead atomic.Bool
	// retired is set when the run stopped the instance while the others
	// went on (the end of an overlap): like a crash, that may cut one of
	// its operations short.
	retired atomic.Bool

	// synced records what the instance's Binder synced.
	synced syncedVersions

	b         *binder.Binder
	informers []toolscache.SharedIndexInformer
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	removes   []func()
}

// crashPlan crashes the instance that makes the at-th write or storage
// call of a run, counted over every instance that shares the plan (the
// first, its restarts and the one overlapping with it), so that a
// Binder the run replaces early does not take the crash point with it.
// The call is carried out when applied is set.
type crashPlan struct {
	at      int64
	applied bool
	calls   atomic.Int64
}

// call runs one write or storage call of the instance, crashing it when
// its turn has come.
func (in *instance) call(do func() error) error {
	if in.dead.Load() {
		return errCrashed
	}
	if p := in.crash; p != nil && p.at > 0 && p.calls.Add(1) == p.at {
		if p.applied {
			_ = do()
		}
		in.dead.Store(true)
		return errCrashed
	}
	return do()
}

func (in *instance) isDead() bool { return in.dead.Load() }

// gone reports whether the instance crashed or was retired.
func (in *instance) gone() bool { return in.dead.Load() || in.retired.Load() }

// retire stops the instance while the run goes on.
func (in *instance) retire() {
	in.retired.Store(true)
	in.stop()
}

// syncedVersions records the versions of volumes and claims a Binder
// synced or wrote (binder.SyncObserver).
type syncedVersions struct {
	// mu guards seen.
	mu   sync.Mutex
	seen map[objectVersion]struct{}
}

// objectVersion is one version of a volume (namespace "") or a claim.
type objectVersion struct {
	volume                   bool
	namespace, name, uid, rv string
}

func versionOf(obj metav1.Object) objectVersion {
	_, isVolume := obj.(*v1.PersistentVolume)
	return objectVersion{volume: isVolume, namespace: obj.GetNamespace(), name: obj.GetName(),
		uid: string(obj.GetUID()), rv: obj.GetResourceVersion()}
}

var _ binder.SyncObserver = (*syncedVersions)(nil)

func (s *syncedVersions) ObjectSynced(obj metav1.Object) {
	v := versionOf(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = make(map[objectVersion]struct{})
	}
	s.seen[v] = struct{}{}
}

// has reports whether the version of obj was synced.
func (s *syncedVersions) has(obj metav1.Object) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seen[versionOf(obj)]
	return ok
}

// The binder.API of the instance.

// write runs do(ctx, obj), a create or update, as one of the instance's
// write points (call) and returns its answer.
func write[T any](ctx context.Context, in *instance, obj T, do func(context.Context, T) (T, error)) (T, error) {
	var out T
	err := in.call(func() (err error) { out, err = do(ctx, obj); return err })
	return out, err
}

func (in *instance) CreateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	out, err := write(ctx, in, pv, in.srv.CreateVolume)
	if ref := pv.Spec.ClaimRef; ref != nil && ref.UID != "" {
		in.st.chose(pv.Name, ref.UID) // provisioned for the claim
	}
	return out, err
}

func (in *instance) UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	claim := in.st.choosing(pv)
	out, err := write(ctx, in, pv, in.srv.UpdateVolume)
	if claim != "" {
		in.st.chose(pv.Name, claim)
	}
	return out, err
}

func (in *instance) UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	return write(ctx, in, pv, in.srv.UpdateVolumeStatus)
}

func (in *instance) DeleteVolume(ctx context.Context, name string) error {
	return in.call(func() error {
		if cur, ok := in.st.peekVolume(name); ok {
			if cur.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimRetain {
				in.vs.add(RetainDeleted, "Retain volume %s deleted by the Binder", name)
			}
			if in.st.claimUses(cur.Spec.ClaimRef, name) {
				in.vs.add(ReclaimWhileClaimed, "volume %s deleted while its claim %s/%s exists", name,
					cur.Spec.ClaimRef.Namespace, cur.Spec.ClaimRef.Name)
			}
		}
		return in.srv.DeleteVolume(ctx, name)
	})
}

func (in *instance) GetVolume(ctx context.Context, name string) (*v1.PersistentVolume, error) {
	if in.dead.Load() {
		return nil, errCrashed
	}
	return in.srv.GetVolume(ctx, name)
}

func (in *instance) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	return write(ctx, in, pvc, in.srv.UpdateClaim)
}

func (in *instance) UpdateClaimStatus(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	return write(ctx, in, pvc, in.srv.UpdateClaimStatus)
}

func (in *instance) GetClaim(ctx context.Context, namespace, name string) (*v1.PersistentVolumeClaim, error) {
	if in.dead.Load() {
		return nil, errCrashed
	}
	return in.srv.GetClaim(ctx, namespace, name)
}

var _ binder.API = (*instance)(nil)

// Binder settings of every run: short delays on the fake clock, so that a
// run settles in few clock steps.
const (
	resyncPeriod   = 10 * time.Second
	retryMaxDelay  = 2 * time.Second
	opMaxDelay     = 4 * time.Second
	availableDelay = 2 * time.Second
	// operationMarkTTL is well below settleRounds*settleStep.
	operationMarkTTL = time.Minute
)

// start creates the instance's Binder, wires its event sources and runs
// them and the Binder until stop.
func (in *instance) start(ctx context.Context, c Case, fc *testingclock.FakeClock) error {
	p := plugins{inst: in, st: in.st}
	cfg := binder.Config{
		Clock: fc, ClaimWorkers: c.Workers, VolumeWorkers: c.Workers,
		ResyncPeriod: resyncPeriod, RetryMaxDelay: retryMaxDelay,
		OperationInitialDelay: 100 * time.Millisecond, OperationMaxDelay: opMaxDelay,
		Provisioning: &binder.ProvisioningConfig{Provisioners: map[string]binder.Provisioner{driver: p},
			CreateVolumeInterval: time.Second},
		Reclaim:  &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{driver: p}, Recycler: p},
		Fence:    in.fence,
		Observer: &in.synced,
		// A Binder that crashes right after it marked a volume for
		// deletion (AnnOperation) keeps the others off it for the TTL;
		// the default 5 minutes outlast what is left of the settling
		// phase (600 s) when the crash comes late in it (seed 1003814:
		// the volume stayed Failed on deleted storage).
		OperationMarkTTL: operationMarkTTL,
	}
	if c.AvailableDelay {
		cfg.AvailableDelay = availableDelay
	}
	type source struct {
		kind bindertest.Kind
		obj  runtime.Object
	}
	sources := []source{{bindertest.KindStorageClass, &storagev1.StorageClass{}},
		{bindertest.KindVolume, &v1.PersistentVolume{}}, {bindertest.KindClaim, &v1.PersistentVolumeClaim{}}}
	if c.Informers {
		for _, s := range sources {
			inf := toolscache.NewSharedIndexInformer(in.srv.ListWatch(s.kind), s.obj, 0, toolscache.Indexers{})
			in.informers = append(in.informers, inf)
			cfg.Synced = append(cfg.Synced, inf.HasSynced)
		}
	}
	b, err := binder.New(in, cfg)
	if err != nil {
		return err
	}
	in.b = b
	handlers := []toolscache.ResourceEventHandler{b.ClassHandler(), b.VolumeHandler(), b.ClaimHandler()}
	ctx, in.cancel = context.WithCancel(ctx)
	for i, s := range sources {
		if !c.Informers {
			in.removes = append(in.removes, in.srv.AddEventHandler(s.kind, handlers[i]))
			continue
		}
		if _, err := in.informers[i].AddEventHandler(handlers[i]); err != nil {
			in.cancel()
			return err
		}
		inf := in.informers[i]
		in.wg.Go(func() { inf.Run(ctx.Done()) })
	}
	in.wg.Go(func() { _ = b.Run(ctx) })
	return nil
}

// stop stops the instance and waits for its goroutines.
func (in *instance) stop() {
	for _, r := range in.removes {
		r()
	}
	in.removes = nil
	if in.cancel != nil {
		in.cancel()
	}
	in.wg.Wait()
}

// caughtUp reports whether the instance's informers hold what the Server
// holds (always true with handlers).
func (in *instance) caughtUp() bool { return in.lag() == "" }

// lag names the first object the instance's informers hold in another
// version than the Server, or "" when they hold what it holds.
func (in *instance) lag() string {
	for i, kind := range []bindertest.Kind{bindertest.KindStorageClass, bindertest.KindVolume, bindertest.KindClaim} {
		if i >= len(in.informers) {
			return ""
		}
		want := in.srv.List(kind)
		store := in.informers[i].GetStore()
		if n := len(store.ListKeys()); n != len(want) {
			return fmt.Sprintf("Binder %d holds %d objects of %s, the Server %d", in.id, n, kind, len(want))
		}
		for _, o := range want {
			m := o.(metav1.Object)
			key := m.GetName()
			if m.GetNamespace() != "" {
				key = m.GetNamespace() + "/" + key
			}
			got, ok, _ := store.GetByKey(key)
			if !ok {
				return fmt.Sprintf("Binder %d lacks %s %s", in.id, kind, key)
			}
			if rv := got.(metav1.Object).GetResourceVersion(); rv != m.GetResourceVersion() {
				return fmt.Sprintf("Binder %d holds %s %s at resourceVersion %s, the Server at %s", in.id, kind, key, rv, m.GetResourceVersion())
			}
		}
	}
	return ""
}
