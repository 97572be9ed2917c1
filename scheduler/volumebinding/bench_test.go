package volumebinding

import (
	"context"
	"fmt"
	"testing"

	"github.com/volbind/volbind/internal/schedgen"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"
)

// benchCluster is nodes nodes, a WaitForFirstConsumer class of a CSI
// driver that tracks capacity with one CSIStorageCapacity per node (as a
// local-storage driver publishes them), and a pod with one claim of it to
// provision.
func benchCluster(nodes int) *schedgen.Cluster {
	const key = "topology.cap.csi.example.com/node"
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	c := &schedgen.Cluster{Objects: []runtime.Object{
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "tracked", ResourceVersion: "1"}, Provisioner: schedgen.CapacityDriver, VolumeBindingMode: &wffc},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: schedgen.CapacityDriver, ResourceVersion: "1"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}},
	}}
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		c.Nodes = append(c.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1",
			Labels: map[string]string{v1.LabelHostname: name, key: name}}})
		c.Objects = append(c.Objects, &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Name: fmt.Sprintf("csisc-%05d", i), Namespace: "kube-system", ResourceVersion: "1"},
			StorageClassName: "tracked",
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{key: name}},
			Capacity:         ptr.To(resource.MustParse(fmt.Sprintf("%dGi", 10+i%90))),
		})
	}
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-web-0", Namespace: schedgen.Namespace, ResourceVersion: "1", UID: "claim-uid"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To("tracked"),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("5Gi")}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	c.Objects = append(c.Objects, claim)
	c.Pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: schedgen.Namespace, UID: "pod-uid", ResourceVersion: "1"},
		Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}}}}
	return c
}

// BenchmarkFilterScore is one scheduling cycle's PreFilter, then Filter
// and Score of every node on two workers (kube-scheduler's parallelizer
// wraps workqueue.ParallelizeUntil), of the
// in-tree plugin and ours on the same cluster; ns/op is per cycle.
func BenchmarkFilterScore(b *testing.B) {
	for _, n := range []int{100, 1_000} {
		c := benchCluster(n)
		for _, p := range []struct {
			name  string
			build func(context.Context, fwk.Handle) (fwk.Plugin, error)
		}{{"intree", buildInTree}, {"volbind", buildOurs}} {
			b.Run(fmt.Sprintf("nodes=%d/plugin=%s", n, p.name), func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				s := newSide(ctx, b, c, p.build)
				nodes := make([]fwk.NodeInfo, n)
				for i, nd := range c.Nodes {
					ni := framework.NewNodeInfo()
					ni.SetNode(nd)
					nodes[i] = ni
				}
				b.ReportAllocs()
				for b.Loop() {
					cs := framework.NewCycleState()
					if _, st := s.pl.PreFilter(ctx, cs, c.Pod, nodes); !st.IsSuccess() {
						b.Fatalf("PreFilter: %v", st)
					}
					workqueue.ParallelizeUntil(ctx, 2, n, func(i int) {
						if st := s.pl.Filter(ctx, cs, c.Pod, nodes[i]); !st.IsSuccess() {
							b.Errorf("Filter(%s): %v", nodes[i].Node().Name, st)
						}
					})
					if st := s.pl.PreScore(ctx, cs, c.Pod, nodes); !st.IsSuccess() {
						b.Fatalf("PreScore: %v", st)
					}
					workqueue.ParallelizeUntil(ctx, 2, n, func(i int) {
						if _, st := s.pl.Score(ctx, cs, c.Pod, nodes[i]); !st.IsSuccess() {
							b.Errorf("Score(%s): %v", nodes[i].Node().Name, st)
						}
					})
				}
			})
		}
	}
}
