package volumebinding

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

var memHeapProfile = flag.String("memory.heapprofile", "", "BenchmarkMemoryPerVolume writes the heap profile with volbind's plugin to this file")

// localVolumes is hack/bench-scheduler.sh's cluster: nodes nodes and
// volumes Available volumes of a WaitForFirstConsumer class without
// provisioner, each pinned to one node's hostname.
func localVolumes(nodes, volumes int) []kruntime.Object {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	objs := []kruntime.Object{&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local", ResourceVersion: "1"},
		Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc}}
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		objs = append(objs, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1",
			Labels: map[string]string{v1.LabelHostname: name}}})
	}
	for i := range volumes {
		host := fmt.Sprintf("node-%05d", i%nodes)
		objs = append(objs, &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("local-%05d", i), ResourceVersion: "1", UID: types.UID(fmt.Sprint("uid-", i))},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
				StorageClassName:              "local",
				PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: fmt.Sprintf("/mnt/disk-%05d", i)}},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}}}}}},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		})
	}
	return objs
}

// BenchmarkMemoryPerVolume is what a plugin keeps per volume on
// hack/bench-scheduler.sh's cluster (100 nodes, 10,000 local volumes) once
// its caches hold the informers' start: the live heap with the plugin,
// minus the live heap of the same informers without it, per volume
// (B/volume). The in-tree plugin reads the scheduler's informer caches;
// what ours holds beyond them is its index and caches.
func BenchmarkMemoryPerVolume(b *testing.B) {
	const nodes, volumes = 100, 10_000
	for _, p := range []struct {
		name  string
		build func(context.Context, fwk.Handle) (fwk.Plugin, error)
	}{{"intree", buildInTree}, {"volbind", buildOurs}} {
		b.Run("plugin="+p.name, func(b *testing.B) {
			var perVolume float64
			for b.Loop() {
				base := pluginHeap(b, nodes, volumes, nil, "")
				profile := ""
				if p.name == "volbind" {
					profile = *memHeapProfile
				}
				with := pluginHeap(b, nodes, volumes, p.build, profile)
				perVolume += (float64(with) - float64(base)) / volumes
			}
			b.ReportMetric(perVolume/float64(b.N), "B/volume")
		})
	}
}

// pluginHeap returns the live heap after a full GC with the informers of
// the cluster synced and, when build is set, its plugin built and its
// handlers synced; profile, when set, receives the heap profile.
func pluginHeap(b *testing.B, nodes, volumes int, build func(context.Context, fwk.Handle) (fwk.Plugin, error), profile string) uint64 {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := fake.NewClientset(localVolumes(nodes, volumes)...)
	inf := informers.NewSharedInformerFactory(cs, 0)
	defer inf.Shutdown()
	defer cancel()
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithClientSet(cs), frameworkruntime.WithInformerFactory(inf))
	if err != nil {
		b.Fatal(err)
	}
	// The informers either plugin reads.
	inf.Core().V1().PersistentVolumes().Informer()
	inf.Core().V1().PersistentVolumeClaims().Informer()
	inf.Core().V1().Nodes().Informer()
	inf.Storage().V1().StorageClasses().Informer()
	inf.Storage().V1().CSINodes().Informer()
	inf.Storage().V1().CSIDrivers().Informer()
	inf.Storage().V1().CSIStorageCapacities().Informer()
	var pl fwk.Plugin
	if build != nil {
		if pl, err = build(ctx, fh); err != nil {
			b.Fatal(err)
		}
	}
	inf.Start(ctx.Done())
	inf.WaitForCacheSync(ctx.Done())
	if ours, ok := pl.(*Plugin); ok {
		if err := ours.synced.wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	runtime.KeepAlive(pl)
	runtime.KeepAlive(cs)
	return ms.HeapAlloc
}
