package pvindex

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

var (
	benchSizes   = []int{1_000, 10_000, 100_000}
	benchClasses = []string{"gold", "silver", "bronze"}
	benchZones   = []string{"zone-a", "zone-b", "zone-c"}
)

// benchCluster is n Available volumes: 3 classes, 1–1024 Gi, mostly RWO
// (some RWO+ROX and RWX), each pinned to one of 3 zones by node affinity.
func benchCluster(n int) []*v1.PersistentVolume {
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	vols := make([]*v1.PersistentVolume, n)
	for i := range vols {
		modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		switch rng.IntN(10) {
		case 0:
			modes = append(modes, v1.ReadOnlyMany)
		case 1:
			modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
		}
		zone := benchZones[rng.IntN(len(benchZones))]
		vols[i] = &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{
				Name:   fmt.Sprintf("pv-%06d", i),
				Labels: map[string]string{"topology.kubernetes.io/zone": zone},
			},
			Spec: v1.PersistentVolumeSpec{
				Capacity:         v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(int64(1+rng.IntN(1024))<<30, resource.BinarySI)},
				AccessModes:      modes,
				StorageClassName: benchClasses[rng.IntN(len(benchClasses))],
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{
						Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{zone},
					}},
				}}}},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		}
	}
	return vols
}

// benchClaims are 64 RWO claims of random class and size (1–512 Gi, so
// that most find a volume).
func benchClaims() []*v1.PersistentVolumeClaim {
	rng := rand.New(rand.NewPCG(7, 7))
	claims := make([]*v1.PersistentVolumeClaim, 64)
	for i := range claims {
		claims[i] = &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("claim-%d", i), UID: "uid"},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName: ptr.To(benchClasses[rng.IntN(len(benchClasses))]),
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceStorage: *resource.NewQuantity(int64(1+rng.IntN(512))<<30, resource.BinarySI),
				}},
			},
		}
	}
	return claims
}

func benchNode() *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{
		"topology.kubernetes.io/zone": "zone-b", "kubernetes.io/hostname": "node-1",
	}}}
}

// benchSearches are the searches benchmarked: the PV controller's (no
// node), the PV controller's rules with a node, and kube-scheduler's.
var benchSearches = []struct {
	name string
	opts FindOptions
}{
	{"search=controller/node=false", FindOptions{}},
	{"search=controller/node=true", FindOptions{Node: benchNode()}},
	{"search=scheduler/node=true", FindOptions{Node: benchNode(), SchedulerSearch: true}},
}

// BenchmarkFindBestMatch matches one claim among n available volumes, with
// and without a node (which skips off-zone volumes).
func BenchmarkFindBestMatch(b *testing.B) {
	claims := benchClaims()
	for _, n := range benchSizes {
		ix := New()
		for _, pv := range benchCluster(n) {
			ix.Upsert(pv)
		}
		for _, s := range benchSearches {
			b.Run(fmt.Sprintf("%s/pvs=%d", s.name, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := ix.FindBestMatch(claims[i%len(claims)], s.opts); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkFindBestMatchParallel runs finds from every core at once: they
// share the Index's read lock.
func BenchmarkFindBestMatchParallel(b *testing.B) {
	claims := benchClaims()
	n := benchSizes[len(benchSizes)-1]
	ix := New()
	for _, pv := range benchCluster(n) {
		ix.Upsert(pv)
	}
	for _, s := range benchSearches {
		b.Run(fmt.Sprintf("%s/pvs=%d", s.name, n), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					if _, err := ix.FindBestMatch(claims[i%len(claims)], s.opts); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkFindMatchingVolume is the anchor: Kubernetes' way on the same
// inputs. For the PV controller, component-helpers' FindMatchingVolume over
// the access-mode sets that contain the claim's modes, fewest modes first
// (grouped once, as its informer index keeps them); for the scheduler, one
// FindMatchingVolume over the volumes of the claim's class (also grouped
// once, as its PV cache index keeps them).
func BenchmarkFindMatchingVolume(b *testing.B) {
	claims := benchClaims()
	for _, n := range benchSizes {
		vols := benchCluster(n)
		for _, s := range benchSearches {
			lists := map[string][][]*v1.PersistentVolume{}
			for _, c := range claims {
				class := *c.Spec.StorageClassName
				if lists[class] == nil {
					lists[class] = refLists(c, vols, s.opts)
				}
			}
			b.Run(fmt.Sprintf("%s/pvs=%d", s.name, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					claim := claims[i%len(claims)]
					for _, list := range lists[*claim.Spec.StorageClassName] {
						pv, err := volume.FindMatchingVolume(claim, list, s.opts.Node, nil, false, true)
						if err != nil {
							b.Fatal(err)
						}
						if pv != nil {
							break
						}
					}
					i++
				}
			})
		}
	}
}

// BenchmarkUpsert replaces one volume of an index of n with a new version of
// another size (the informer update path), (change=phase) a bound volume
// with a version of another phase, which keeps its place, and
// (change=bound-size) a bound volume with a version of another size, which
// takes a new record under the same claim.
func BenchmarkUpsert(b *testing.B) {
	for _, n := range benchSizes {
		vols := benchCluster(n)
		ix := New()
		for _, pv := range vols {
			ix.Upsert(pv)
		}
		// Versions resized by one GiB, built outside the timed loop.
		next := make([]*v1.PersistentVolume, len(vols))
		for i, pv := range vols {
			pv = pv.DeepCopy()
			q := pv.Spec.Capacity[v1.ResourceStorage]
			q.Add(resource.MustParse("1Gi"))
			pv.Spec.Capacity[v1.ResourceStorage] = q
			next[i] = pv
		}
		b.Run(fmt.Sprintf("pvs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				j := i % n
				if (i/n)%2 == 0 {
					ix.Upsert(next[j])
				} else {
					ix.Upsert(vols[j])
				}
				i++
			}
		})
		bound := make([][2]*v1.PersistentVolume, len(vols))
		for i, pv := range vols {
			pv = pv.DeepCopy()
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: pv.Name, UID: "uid"}
			released := pv.DeepCopy()
			pv.Status.Phase, released.Status.Phase = v1.VolumeBound, v1.VolumeReleased
			bound[i] = [2]*v1.PersistentVolume{pv, released}
			ix.Upsert(pv)
		}
		b.Run(fmt.Sprintf("pvs=%d/change=phase", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ix.Upsert(bound[i%n][(i/n)%2])
				i++
			}
		})
		// Bound volumes resized: a new record under the same claim.
		resized := make([][2]*v1.PersistentVolume, len(vols))
		for i, pv := range bound {
			big := pv[0].DeepCopy()
			big.Spec.Capacity = next[i].Spec.Capacity
			resized[i] = [2]*v1.PersistentVolume{pv[0], big}
			ix.Upsert(pv[0])
		}
		b.Run(fmt.Sprintf("pvs=%d/change=bound-size", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ix.Upsert(resized[i%n][(i/n+1)%2])
				i++
			}
		})
	}
}
