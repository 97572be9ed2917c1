package scheduling

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// BenchmarkStorageCapacityLookup is the capacity check of one claim on one
// node, as Filter runs it for every node in parallel, for a local-storage
// CSI driver that publishes one CSIStorageCapacity per node (nodeTopology
// matchLabels on the driver's node label, as external-provisioner writes
// it), capacities of all nodes in the one class; without and with
// CapacityIndex.
func BenchmarkStorageCapacityLookup(b *testing.B) {
	const driver, key = "local.csi.example.com", "topology.local.csi.example.com/node"
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: driver}
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data"}}
	claim.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}
	for _, n := range []int{100, 1_000, 5_000} {
		objs := []any{&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}}}
		nodes := make([]*v1.Node, n)
		for i := range n {
			name := fmt.Sprintf("node-%05d", i)
			nodes[i] = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				v1.LabelHostname: name, v1.LabelTopologyZone: fmt.Sprintf("z%d", i%3), key: name}}}
			objs = append(objs, &storagev1.CSIStorageCapacity{
				ObjectMeta:       metav1.ObjectMeta{Namespace: "kube-system", Name: fmt.Sprintf("csisc-%05d", i)},
				StorageClassName: class.Name,
				NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{key: name}},
				Capacity:         ptr.To(resource.MustParse("100Gi")),
			})
		}
		for _, indexed := range []bool{false, true} {
			s := newStorageCapacity(b, indexed, objs...)
			b.Run(fmt.Sprintf("capacities=%d/indexed=%v", n, indexed), func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					for i := 0; pb.Next(); i++ {
						if ok, _, err := s.Lookup(ctx, class, claim, nodes[(i*7919)%n]); err != nil || !ok {
							b.Fatalf("Lookup = %v, %v; want a fit", ok, err)
						}
					}
				})
			})
		}
	}
}
