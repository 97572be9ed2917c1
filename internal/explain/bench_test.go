package explain_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/explain"
)

var (
	benchSizes   = []int{1_000, 10_000, 100_000}
	benchClasses = []string{"gold", "silver", "bronze"}
	benchZones   = []string{"zone-a", "zone-b", "zone-c"}
)

// benchCluster is a cluster of n volumes as a big cluster has them: 3
// classes, 1-1024 Gi, each pinned to a zone, 80% bound to a claim (each
// bound claim is there too), the rest Available; plus 100 pending claims,
// the first of which is explained, and 3 nodes.
func benchCluster(n int) explain.Objects {
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	imm := storagev1.VolumeBindingImmediate
	objs := explain.Objects{}
	for _, c := range benchClasses {
		objs.Classes = append(objs.Classes, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: c},
			Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &imm})
	}
	for i, z := range benchZones {
		objs.Nodes = append(objs.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i),
			Labels: map[string]string{v1.LabelTopologyZone: z, v1.LabelHostname: fmt.Sprintf("node-%d", i)}}})
	}
	for i := range n {
		zone := benchZones[rng.IntN(len(benchZones))]
		pv := &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%06d", i), Labels: map[string]string{v1.LabelTopologyZone: zone}},
			Spec: v1.PersistentVolumeSpec{
				Capacity:         v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(int64(1+rng.IntN(1024))<<30, resource.BinarySI)},
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName: benchClasses[rng.IntN(len(benchClasses))],
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}}},
				}}}},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		}
		if rng.IntN(5) > 0 {
			pvc := benchClaim(fmt.Sprintf("bound-%06d", i), pv.Spec.StorageClassName, pv.Spec.Capacity[v1.ResourceStorage])
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID}
			pv.Status.Phase = v1.VolumeBound
			pvc.Spec.VolumeName = pv.Name
			metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnBindCompleted, "yes")
			pvc.Status.Phase = v1.ClaimBound
			objs.Claims = append(objs.Claims, pvc)
		}
		objs.Volumes = append(objs.Volumes, pv)
	}
	for i := range 100 {
		objs.Claims = append(objs.Claims, benchClaim(fmt.Sprintf("pending-%03d", i), benchClasses[i%len(benchClasses)],
			*resource.NewQuantity(int64(1+rng.IntN(512))<<30, resource.BinarySI)))
	}
	return objs
}

func benchClaim(name, class string, size resource.Quantity) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// BenchmarkClaim explains one pending claim among n volumes (the goal is
// under 50 ms at 100,000): its verdict, the 10 closest volumes, the rest
// counted by rule and the other pending claims the chosen volume fits.
func BenchmarkClaim(b *testing.B) {
	for _, n := range benchSizes {
		e, err := explain.New(benchCluster(n), explain.Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("pvs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Claim("bench", "pending-000", explain.ClaimOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkClaimParallel explains claims from every core at once: an
// Explainer is read-only once built.
func BenchmarkClaimParallel(b *testing.B) {
	n := benchSizes[len(benchSizes)-1]
	e, err := explain.New(benchCluster(n), explain.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("pvs=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, err := e.Claim("bench", fmt.Sprintf("pending-%03d", i%100), explain.ClaimOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkNew indexes n volumes and their claims, the once-per-command
// cost before the first explanation.
func BenchmarkNew(b *testing.B) {
	for _, n := range benchSizes {
		objs := benchCluster(n)
		b.Run(fmt.Sprintf("pvs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := explain.New(objs, explain.Config{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
