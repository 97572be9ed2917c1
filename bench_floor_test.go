package volbind_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"
)

// BenchmarkBindingFloor is the memory floor of BenchmarkBinderBindAll: on
// the same objects, the least work that any binder on an in-memory API
// does per binding when it knows the pairs in advance, as
// hack/bench-real.sh's floor binder does against kube-apiserver. Each
// binding reads the claim from a binder's cache and makes the four writes
// of a binding, each of which looks the stored version up in the API's map,
// copies its top-level struct (sharing the rest, as bindertest's updates
// do), sets the fields the write changes and a new resourceVersion, and
// stores the new version in the API's map and in the binder's cache. It
// validates nothing, queues nothing, sends no events and keeps no index.
// The claims come in a random order, as from the Binder's cache, and each
// takes the first free volume of its class and size by name, as best
// fit does.
//
// What it measures is how much of BinderBindAll's growth from 1,000 to
// 100,000 pairs any binder pays on the machine it runs on: allocation,
// the collector's marking, and the first touches of objects and map slots
// that no longer fit in the processor's caches.
func BenchmarkBindingFloor(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		objs := bindObjects(n)
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				f := newFloorAPI(objs)
				b.StartTimer()
				f.bindAll()
				b.StopTimer()
				f.check(b)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*float64(n)), "ns/binding")
		})
	}
}

// floorAPI is an in-memory API's store and a binder's cache of it, both
// maps by key holding the same (shared, immutable) versions, and the
// pairs to bind in the order to bind them.
type floorAPI struct {
	apiVolumes, cacheVolumes map[string]*v1.PersistentVolume
	apiClaims, cacheClaims   map[string]*v1.PersistentVolumeClaim
	pairs                    []floorPair
	version                  uint64
}

// floorPair is a claim's key and its volume's name.
type floorPair struct{ claim, volume string }

// newFloorAPI stores copies of objs (as Seed does) and pairs every claim,
// in a random order, with the first free volume of its class and size by
// name.
func newFloorAPI(objs []runtime.Object) *floorAPI {
	f := &floorAPI{
		apiVolumes: map[string]*v1.PersistentVolume{}, cacheVolumes: map[string]*v1.PersistentVolume{},
		apiClaims: map[string]*v1.PersistentVolumeClaim{}, cacheClaims: map[string]*v1.PersistentVolumeClaim{},
	}
	free := map[string][]string{} // volume names by class and size
	var claims []string
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.PersistentVolume:
			pv := o.DeepCopy()
			pv.ResourceVersion = f.nextVersion()
			f.apiVolumes[pv.Name], f.cacheVolumes[pv.Name] = pv, pv
			fit := pv.Spec.StorageClassName + "/" + pv.Spec.Capacity.Storage().String()
			free[fit] = append(free[fit], pv.Name)
		case *v1.PersistentVolumeClaim:
			pvc := o.DeepCopy()
			pvc.ResourceVersion = f.nextVersion()
			key := pvc.Namespace + "/" + pvc.Name
			f.apiClaims[key], f.cacheClaims[key] = pvc, pvc
			claims = append(claims, key)
		}
	}
	for _, names := range free {
		slices.Sort(names)
	}
	rand.New(rand.NewPCG(2, uint64(len(claims)))).Shuffle(len(claims), func(i, j int) {
		claims[i], claims[j] = claims[j], claims[i]
	})
	for _, key := range claims {
		pvc := f.apiClaims[key]
		fit := *pvc.Spec.StorageClassName + "/" + pvc.Spec.Resources.Requests.Storage().String()
		f.pairs = append(f.pairs, floorPair{claim: key, volume: free[fit][0]})
		free[fit] = free[fit][1:]
	}
	return f
}

func (f *floorAPI) nextVersion() string {
	f.version++
	return strconv.FormatUint(f.version, 10)
}

// bindAll makes the four writes of every pair.
func (f *floorAPI) bindAll() {
	for _, p := range f.pairs {
		claim := f.cacheClaims[p.claim]
		f.updateVolume(p.volume, func(pv *v1.PersistentVolume) {
			pv.Spec.ClaimRef = &v1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion,
			}
		})
		f.updateVolume(p.volume, func(pv *v1.PersistentVolume) { pv.Status.Phase = v1.VolumeBound })
		f.updateClaim(p.claim, func(pvc *v1.PersistentVolumeClaim) {
			pvc.Spec.VolumeName = p.volume
			pvc.Annotations = map[string]string{volume.AnnBindCompleted: "yes", volume.AnnBoundByController: "yes"}
		})
		pv := f.cacheVolumes[p.volume]
		f.updateClaim(p.claim, func(pvc *v1.PersistentVolumeClaim) {
			pvc.Status.Phase = v1.ClaimBound
			pvc.Status.AccessModes = pv.Spec.AccessModes
			pvc.Status.Capacity = pv.Spec.Capacity
		})
	}
}

// updateVolume stores a new version of the named volume made by set.
func (f *floorAPI) updateVolume(name string, set func(*v1.PersistentVolume)) {
	pv := *f.apiVolumes[name]
	set(&pv)
	pv.ResourceVersion = f.nextVersion()
	f.apiVolumes[name], f.cacheVolumes[name] = &pv, &pv
}

// updateClaim stores a new version of the claim with key made by set.
func (f *floorAPI) updateClaim(key string, set func(*v1.PersistentVolumeClaim)) {
	pvc := *f.apiClaims[key]
	set(&pvc)
	pvc.ResourceVersion = f.nextVersion()
	f.apiClaims[key], f.cacheClaims[key] = &pvc, &pvc
}

// check fails b unless every claim is bound to its pair's volume and back.
func (f *floorAPI) check(b *testing.B) {
	b.Helper()
	for _, p := range f.pairs {
		pvc, pv := f.apiClaims[p.claim], f.apiVolumes[p.volume]
		if pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName != pv.Name ||
			pv.Status.Phase != v1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
			b.Fatalf("claim %s and volume %s are not bound to each other", p.claim, p.volume)
		}
	}
	if got, want := len(f.pairs), len(f.apiClaims); got != want {
		b.Fatalf("%d pairs for %d claims", got, want)
	}
}

// BenchmarkDependentLoad measures the machine under both benchmarks above:
// its ns/op is the time of one load whose address depends on the load
// before it, in a random cycle through memory of the given size, one load
// per 64-byte line. A binding's first touches of its claim, its volume and their map
// slots are such loads. The sizes are those of the live heap of
// BinderBindAll at 1,000, 10,000 and 100,000 pairs (about 10, 70 and
// 700 MB, GODEBUG=gctrace=1): the difference between the first and the
// last is what each cold load of a binding adds from 1,000 to 100,000
// pairs.
func BenchmarkDependentLoad(b *testing.B) {
	for _, mb := range []int{10, 70, 700} {
		b.Run(fmt.Sprintf("MB=%d", mb), func(b *testing.B) {
			const words = 8 // uint64s in a 64-byte line
			lines := mb << 20 / 64
			next := make([]uint64, lines*words)
			// The lines in a random order, visited as one cycle.
			order := make([]uint32, lines)
			for i := range order {
				order[i] = uint32(i)
			}
			rand.New(rand.NewPCG(1, uint64(mb))).Shuffle(lines, func(i, j int) { order[i], order[j] = order[j], order[i] })
			for i, line := range order {
				next[int(line)*words] = uint64(order[(i+1)%lines]) * words
			}
			p := uint64(order[0]) * words
			for b.Loop() {
				p = next[p]
			}
			if p%words != 0 {
				b.Fatalf("the chase left the starts of lines: index %d", p)
			}
		})
	}
}
