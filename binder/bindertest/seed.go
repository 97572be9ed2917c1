package bindertest

import (
	"context"
	goruntime "runtime"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// Seed stores objs as they are, as if they had been written earlier, and
// changes them only as follows:
//
//   - each gets the next resourceVersion, in the order of objs;
//   - one without a uid gets the next UID of the Server's sequence (the
//     sequence creates and generated names use, so UIDs depend only on
//     the order of seeds and creates); a uid that is set is kept;
//   - one without a creationTimestamp gets the clock's time;
//   - defaults are applied as on create: a volume's empty phase becomes
//     Pending, its empty reclaim policy Retain and its volume mode
//     Filesystem; a claim's empty phase becomes Pending and its volume
//     mode Filesystem; a class's reclaim policy Delete and binding mode
//     Immediate; a pod's empty phase becomes Pending.
//
// Unlike Create, Seed keeps status, uid, deletionTimestamp and finalizers.
// Seed is all or nothing: an unsupported or invalid object (one
// kube-apiserver's validation rejects, see SeedInvalid), or a name that is
// taken (in the Server or earlier in objs), fails it with nothing
// stored. Seeding is not counted in Stats and ignores faults (but not
// watch faults); handlers and watches see the objects as Added events.
// objs are not retained (unless Config.AdoptSeeds is set).
func (s *Server) Seed(ctx context.Context, objs ...runtime.Object) error {
	return s.seedObjects(ctx, true, objs)
}

// SeedInvalid is Seed without the validation of the objects' contents
// (names and namespaces are still required): it stores objects that
// kube-apiserver would reject, to test how a client copes with them, as
// it must with objects from a fake clientset or from an older API server.
// Updates of such an object are validated as usual.
func (s *Server) SeedInvalid(ctx context.Context, objs ...runtime.Object) error {
	return s.seedObjects(ctx, false, objs)
}

func (s *Server) seedObjects(ctx context.Context, check bool, objs []runtime.Object) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	items, err := s.prepareSeeds(objs, check)
	if err != nil {
		return err
	}

	repeat := firstRepeat(items)
	counts := seedCounts(items)
	s.mu.Lock()
	if err := s.takenLocked(items[:repeat]); err != nil {
		s.mu.Unlock()
		return err
	}
	if repeat < len(items) {
		s.mu.Unlock()
		return alreadyExists(items[repeat])
	}
	for kind, perNS := range counts {
		s.objs[kind].reserveSeed(perNS)
	}
	var queued bool
	for _, it := range items {
		if it.obj.GetUID() == "" {
			s.seq++
			it.obj.SetUID(s.uids.uid(s.seq))
		}
		if !check {
			if s.unvalidated == nil {
				s.unvalidated = make(map[object]struct{})
			}
			s.unvalidated[it.obj] = struct{}{}
		}
		if s.insertLocked(it.kind, it.obj) {
			queued = true
		}
	}
	s.mu.Unlock()
	if queued {
		s.deliver()
	}
	return nil
}

// Grow makes room in the store of kind for n more objects, as a map's size
// hint does, so that a cluster seeded in chunks (volbind simulate seeds
// 10,000 objects per Seed) is not stored by regrowing the store's maps: at
// a million volumes and a million claims that regrowth took 2.1 s of CPU
// (2 cores), mostly hashing stored keys no longer in the caches again.
// For a namespaced kind, whose objects are stored by namespace, the room
// is spread over the namespaces of the next Seed of that kind, in that
// seed's proportions. It stores nothing; n below minReserve or below the
// objects of kind stored already does nothing.
func (s *Server) Grow(kind Kind, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.objs[kind]
	switch {
	case n < minReserve || n < st.n:
	case st.namespaced:
		st.room = n
	default:
		st.reserve("", n)
	}
}

// seedItem is an object prepared for a seed: its kind and the version to
// store.
type seedItem struct {
	kind Kind
	obj  object
}

// seedKey names an object of a seed (namespace empty for a cluster-scoped
// kind, as prepareNew leaves it).
type seedKey struct {
	kind            Kind
	namespace, name string
}

// firstRepeat returns the index of the first item whose object items
// named before it, or len(items). It needs no lock: seedObjects calls it
// before taking s.mu, which the Binder's writes wait for while a seed
// holds it (10,000 claims at a time in simulate, as the claims bind).
func firstRepeat(items []seedItem) int {
	if len(items) < 2 {
		return len(items)
	}
	seen := make(map[seedKey]struct{}, len(items))
	for i, it := range items {
		k := seedKey{kind: it.kind, namespace: it.obj.GetNamespace(), name: it.obj.GetName()}
		if _, dup := seen[k]; dup {
			return i
		}
		seen[k] = struct{}{}
	}
	return len(items)
}

// takenLocked returns kube-apiserver's AlreadyExists error for the first
// object of items that is stored already.
func (s *Server) takenLocked(items []seedItem) error {
	for _, it := range items {
		if _, taken := s.objs[it.kind].get(it.obj.GetNamespace(), it.obj.GetName()); taken {
			return alreadyExists(it)
		}
	}
	return nil
}

// alreadyExists is kube-apiserver's error for creating the item's object again.
func alreadyExists(it seedItem) error {
	return apierrors.NewAlreadyExists(it.kind.groupResource(), it.obj.GetName())
}

// seedCounts counts the objects of items by kind and namespace (prepareNew
// has cleared the namespace of a cluster-scoped object).
func seedCounts(items []seedItem) map[Kind]map[string]int {
	counts := make(map[Kind]map[string]int)
	for _, it := range items {
		if counts[it.kind] == nil {
			counts[it.kind] = make(map[string]int)
		}
		counts[it.kind][it.obj.GetNamespace()]++
	}
	return counts
}

// minParallelSeed is the smallest seed whose objects are prepared on
// several goroutines.
const minParallelSeed = 512

// prepareSeeds prepares every object of a seed (prepareNew: copy,
// defaults, validation) and returns them in order, or the error of the
// first object, in order, that fails. A large seed is prepared on
// GOMAXPROCS goroutines, each on its own part of objs: preparing
// (validation above all) is most of a seed's work, and objects are
// prepared independently of each other.
func (s *Server) prepareSeeds(objs []runtime.Object, check bool) ([]seedItem, error) {
	items := make([]seedItem, len(objs))
	errs := make([]error, len(objs))
	prepare := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if items[i], errs[i] = s.prepareSeed(objs[i], check); errs[i] != nil {
				return
			}
		}
	}
	parts := 1
	if len(objs) >= minParallelSeed {
		parts = goruntime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(objs)/parts, (p+1)*len(objs)/parts
		wg.Go(func() { prepare(lo, hi) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}

// prepareSeed prepares one object of a seed.
func (s *Server) prepareSeed(in runtime.Object, check bool) (seedItem, error) {
	o, k, err := generic(in)
	if err != nil {
		return seedItem{}, err
	}
	obj, err := s.prepareNew(k, o, true, check)
	if err != nil {
		return seedItem{}, err
	}
	if obj.GetName() == "" || k.namespaced() && obj.GetNamespace() == "" {
		return seedItem{}, badRequest("seed %s %q with generateName %q: a seeded object needs a name (and a namespace if namespaced)", k, obj.GetName(), obj.GetGenerateName())
	}
	return seedItem{kind: k, obj: obj}, nil
}

// List returns deep copies of every object of kind, sorted by key
// ("name" or "namespace/name"). The caller owns them. An invalid kind
// lists nothing.
func (s *Server) List(kind Kind) []runtime.Object {
	if !kind.valid() {
		return nil
	}
	s.mu.RLock()
	objs := s.sortedLocked(kind)
	s.mu.RUnlock()
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = deepCopy(o)
	}
	return out
}

// Objects returns deep copies of every object, kind by kind
// (StorageClasses, Nodes, PersistentVolumes, PersistentVolumeClaims, Pods),
// each kind sorted by key. The caller owns them.
func (s *Server) Objects() []runtime.Object {
	var out []runtime.Object
	for _, k := range allKinds() {
		out = append(out, s.List(k)...)
	}
	return out
}

// Volumes returns deep copies of every PersistentVolume, sorted by name.
// The caller owns them.
func (s *Server) Volumes() []*v1.PersistentVolume {
	return listTyped[*v1.PersistentVolume](s, KindVolume)
}

// Claims returns deep copies of every PersistentVolumeClaim, sorted by
// namespace/name. The caller owns them.
func (s *Server) Claims() []*v1.PersistentVolumeClaim {
	return listTyped[*v1.PersistentVolumeClaim](s, KindClaim)
}

// Pods returns deep copies of every Pod, sorted by namespace/name. The
// caller owns them.
func (s *Server) Pods() []*v1.Pod {
	return listTyped[*v1.Pod](s, KindPod)
}

// listTyped is listShared with each stored version replaced by a deep copy.
func listTyped[T object](s *Server, kind Kind) []T {
	out := listShared[T](s, kind)
	for i, o := range out {
		out[i] = deepCopy(o).(T)
	}
	return out
}
