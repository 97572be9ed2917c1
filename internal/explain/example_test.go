package explain_test

import (
	"context"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/explain"
)

func exampleVolume(name, size, class string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:      modes,
			StorageClassName: class,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

func exampleClaim(name, size, class string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// A claim among a few volumes: the verdict, then every volume with the
// first rule that rejects it.
func Example() {
	immediate := storagev1.VolumeBindingImmediate
	objs := explain.Objects{
		Classes: []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "fast"},
			Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &immediate}},
		Volumes: []*v1.PersistentVolume{
			exampleVolume("pv-small", "5Gi", "fast", v1.ReadWriteOnce),
			exampleVolume("pv-shared", "10Gi", "fast", v1.ReadWriteOnce, v1.ReadWriteMany),
			exampleVolume("pv-large", "20Gi", "fast", v1.ReadWriteOnce),
			exampleVolume("pv-slow", "10Gi", "slow", v1.ReadWriteOnce),
		},
		Claims: []*v1.PersistentVolumeClaim{exampleClaim("data", "8Gi", "fast")},
	}
	e, err := explain.New(objs, explain.Config{})
	if err != nil {
		panic(err)
	}
	x, err := e.Claim("shop", "data", explain.ClaimOptions{})
	if err != nil {
		panic(err)
	}
	if err := explain.WriteClaimText(os.Stdout, x); err != nil {
		panic(err)
	}
	// Output:
	// PersistentVolumeClaim shop/data (Pending, request 8Gi, RWO, Filesystem, class "fast", Immediate)
	// Verdict: would bind to pv-large now
	//   Why: the smallest volume that fits among those with the fewest access modes (RWO); pv-shared is smaller but offers RWO,RWX
	//
	// Volumes of class "fast", closest first (as the PV controller matches them):
	//   VOLUME     CAPACITY  MODES    CLASS  RULE      DETAIL
	//   pv-large   20Gi      RWO      fast   fits      chosen
	//   pv-shared  10Gi      RWO,RWX  fast   fits      fits, but offers more access modes (RWO,RWX) than pv-large (RWO): the controller tries volumes with the fewest modes first
	//   pv-small   5Gi       RWO      fast   capacity  capacity 5Gi < request 8Gi
	//   1 more: 1 of another class
}

// A pod whose claim waits for its first consumer, explained node by node:
// the node where a local volume fits, and why the others do not.
func ExampleExplainer_Pod() {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	node := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}}}
	}
	local := func(name, size, host string) *v1.PersistentVolume {
		pv := exampleVolume(name, size, "local", v1.ReadWriteOnce)
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}},
		}}}}
		return pv
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-0"},
		Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-db-0"}}}}},
	}
	e, err := explain.New(explain.Objects{
		Classes: []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "local"},
			Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc}},
		Nodes:   []*v1.Node{node("node-a"), node("node-b"), node("node-c")},
		Volumes: []*v1.PersistentVolume{local("local-a", "50Gi", "node-a"), local("local-b", "100Gi", "node-b")},
		Claims:  []*v1.PersistentVolumeClaim{exampleClaim("data-db-0", "80Gi", "local")},
		Pods:    []*v1.Pod{pod},
	}, explain.Config{})
	if err != nil {
		panic(err)
	}
	x, err := e.Pod(context.Background(), "shop", "db-0", explain.PodOptions{})
	if err != nil {
		panic(err)
	}
	if err := explain.WritePodText(os.Stdout, x); err != nil {
		panic(err)
	}
	fmt.Println("fits on:", x.FitNodes)
	// Output:
	// Pod shop/db-0: fits on 1 of 3 node(s): node-b
	// (volumes only: kube-scheduler's other filters, such as resources and taints, are not consulted)
	//
	// Claims:
	//   shop/data-db-0: waits for pod shop/db-0 to be scheduled
	//     Why: its class binds WaitForFirstConsumer: kube-scheduler picks its volume on the node of the first pod that uses it; only an existing volume can serve it (storage class "local" does not provision volumes: its provisioner is kubernetes.io/no-provisioner)
	//
	// Nodes:
	//   node-a, node-c: node(s) didn't find available persistent volumes to bind
	//     NoMatchingVolume, claim shop/data-db-0: no available volume matches the claim and the node, and storage class "local" does not provision volumes
	//       closest volumes on node node-a:
	//       VOLUME   CAPACITY  MODES  CLASS  RULE           DETAIL
	//       local-b  100Gi     RWO    local  node affinity  node affinity (kubernetes.io/hostname in [node-b]) excludes node node-a (kubernetes.io/hostname=node-a)
	//       local-a  50Gi      RWO    local  capacity       capacity 50Gi < request 80Gi
	//   node-b: fits
	//     shop/data-db-0: binds to local-b
	// fits on: [node-b]
}
