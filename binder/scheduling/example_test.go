package scheduling_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/binder/scheduling"
)

// exampleWorld seeds an in-memory API with two nodes, a
// WaitForFirstConsumer class without provisioner, a local volume on
// node-b and a claim, and returns a VolumeBinder fed by it.
func exampleWorld(ctx context.Context) (*bindertest.Server, *scheduling.VolumeBinder, func()) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: "local"},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &wffc,
	}
	mkNode := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}}}
	}
	local := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "local-b"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              "local",
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk1"}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"node-b"}}},
			}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("5Gi")}},
			StorageClassName: ptr.To("local"),
		},
	}
	srv := bindertest.New()
	if err := srv.Seed(ctx, sc, mkNode("node-a"), mkNode("node-b"), local, claim); err != nil {
		panic(err)
	}
	// Any StorageClass lister works; informers give one.
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	_ = idx.Add(sc)
	vb, err := scheduling.New(srv, storagelisters.NewStorageClassLister(idx), scheduling.Config{})
	if err != nil {
		panic(err)
	}
	rmV := srv.AddEventHandler(bindertest.KindVolume, vb.VolumeHandler())
	rmC := srv.AddEventHandler(bindertest.KindClaim, vb.ClaimHandler())
	return srv, vb, func() { rmV(); rmC() }
}

func examplePod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", UID: "pod-uid"},
		Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"},
		}}}},
	}
}

// Find tells, node by node, whether a pod's claims can be satisfied, with
// reasons a scheduler can show.
func ExampleVolumeBinder_Find() {
	ctx := context.Background()
	srv, vb, stop := exampleWorld(ctx)
	defer stop()
	for _, name := range []string{"node-a", "node-b"} {
		node, _ := srv.GetNode(ctx, name)
		pv, reasons, err := vb.Find(ctx, examplePod(), node)
		switch {
		case err != nil:
			fmt.Println(name, "error:", err)
		case len(reasons) > 0:
			fmt.Println(name, "does not fit:", scheduling.Messages(reasons), reasons[0].Kind)
		default:
			fmt.Println(name, "fits: claim", pv.StaticBindings[0].PVC.Name, "-> volume", pv.StaticBindings[0].PV.Name)
		}
	}
	// Output:
	// node-a does not fit: [node(s) didn't find available persistent volumes to bind] NoMatchingVolume
	// node-b fits: claim data -> volume local-b
}

// A scheduling cycle: Find on the chosen node, Assume, then Bind, which
// pre-binds the volume and waits until the Binder has bound the claim.
func ExampleVolumeBinder_Bind() {
	ctx, cancel := context.WithCancel(context.Background())
	srv, vb, stop := exampleWorld(ctx)
	defer stop()

	b, err := binder.New(srv, binder.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.AddEventHandler(bindertest.KindStorageClass, b.ClassHandler())()
	defer srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler())()
	defer srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler())()
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			panic(err)
		}
	}()

	pod := examplePod()
	node, _ := srv.GetNode(ctx, "node-b")
	pv, reasons, err := vb.Find(ctx, pod, node)
	if err != nil || len(reasons) > 0 {
		panic(fmt.Sprint(reasons, err))
	}
	allBound, err := vb.Assume(ctx, pod, node.Name, pv)
	fmt.Println("all bound before Bind:", allBound, err)
	if err := vb.Bind(ctx, pod, pv); err != nil {
		panic(err)
	}
	// Bind returns once the claim names its volume; the Binder writes the
	// claim's Bound status right after.
	if err := b.WaitForQuiescence(ctx); err != nil {
		panic(err)
	}
	claim, _ := srv.GetClaim(ctx, "default", "data")
	fmt.Println("claim", claim.Name, claim.Status.Phase, "to", claim.Spec.VolumeName)
	// Output:
	// all bound before Bind: false <nil>
	// claim data Bound to local-b
}
