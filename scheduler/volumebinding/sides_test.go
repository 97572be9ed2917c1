package volumebinding

import (
	"context"
	"errors"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumezone"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/internal/schedgen"
)

// plugin is every extension point both plugins implement.
type plugin interface {
	fwk.PreFilterPlugin
	fwk.FilterPlugin
	fwk.PreScorePlugin
	fwk.ScorePlugin
	fwk.ReservePlugin
	fwk.PreBindPlugin
}

// side is one plugin on its own fake API server holding the case's
// objects; zone is the in-tree VolumeZone plugin beside the in-tree
// VolumeBinding one (nil for ours).
type side struct {
	cs   *fake.Clientset
	pl   plugin
	zone *volumezone.VolumeZone
}

// newHandle returns a framework handle on a fake API server holding the
// case's objects, with its informers started and synced after ready
// (which builds what reads them).
func newHandle(ctx context.Context, t testing.TB, c *schedgen.Cluster, ready func(fwk.Handle)) *fake.Clientset {
	t.Helper()
	cs := fake.NewClientset(c.AllObjects()...)
	inf := informers.NewSharedInformerFactory(cs, 0)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil,
		frameworkruntime.WithClientSet(cs), frameworkruntime.WithInformerFactory(inf))
	if err != nil {
		t.Fatal(err)
	}
	ready(fh)
	inf.Start(ctx.Done())
	t.Cleanup(inf.Shutdown)
	inf.WaitForCacheSync(ctx.Done())
	return cs
}

func newSide(ctx context.Context, t testing.TB, c *schedgen.Cluster, build func(context.Context, fwk.Handle) (fwk.Plugin, error)) *side {
	t.Helper()
	s := &side{}
	s.cs = newHandle(ctx, t, c, func(fh fwk.Handle) {
		p, err := build(ctx, fh)
		if err != nil {
			t.Fatal(err)
		}
		s.pl = p.(plugin)
	})
	return s
}

// newInTreeSide is the in-tree VolumeBinding and VolumeZone plugins on one
// handle, as kube-scheduler's default profile runs them.
func newInTreeSide(ctx context.Context, t testing.TB, c *schedgen.Cluster) *side {
	t.Helper()
	s := &side{}
	s.cs = newHandle(ctx, t, c, func(fh fwk.Handle) {
		p, err := buildInTree(ctx, fh)
		if err != nil {
			t.Fatal(err)
		}
		s.pl = p.(plugin)
		z, err := volumezone.New(ctx, nil, fh, feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
		if err != nil {
			t.Fatal(err)
		}
		s.zone = z.(*volumezone.VolumeZone)
	})
	return s
}

func buildInTree(ctx context.Context, fh fwk.Handle) (fwk.Plugin, error) {
	args := &config.VolumeBindingArgs{BindTimeoutSeconds: 600, Shape: []config.UtilizationShapePoint{
		{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}}
	return intree.New(ctx, args, fh, feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
}

func buildOurs(ctx context.Context, fh fwk.Handle) (fwk.Plugin, error) {
	return NewFactory(Config{}).New(ctx, nil, fh)
}

// libSide is binder/scheduling itself, as an embedder wires it to
// informers: plain answers as VolumeBinding, zoned (Config.VolumeZone) as
// VolumeBinding followed by VolumeZone. Both follow one fake API server's
// informers, with kube-scheduler's capacity check and CSINodes.
type libSide struct {
	plain, zoned *scheduling.VolumeBinder
}

func newLibSide(ctx context.Context, t testing.TB, c *schedgen.Cluster) *libSide {
	t.Helper()
	l := &libSide{}
	var regs []toolscache.ResourceEventHandlerRegistration
	newHandle(ctx, t, c, func(fh fwk.Handle) {
		inf := fh.SharedInformerFactory()
		capInf := inf.Storage().V1().CSIStorageCapacities().Informer()
		if err := capInf.AddIndexers(scheduling.CapacityIndexers()); err != nil {
			t.Fatal(err)
		}
		capacity, err := scheduling.NewStorageCapacity(inf.Storage().V1().CSIDrivers().Lister(), capInf.GetIndexer())
		if err != nil {
			t.Fatal(err)
		}
		build := func(zone bool) *scheduling.VolumeBinder {
			vb, err := scheduling.New(binder.NewClientsetAPI(fh.ClientSet()), inf.Storage().V1().StorageClasses().Lister(),
				scheduling.Config{Capacity: capacity, CSINodes: inf.Storage().V1().CSINodes().Lister(), VolumeZone: zone})
			if err != nil {
				t.Fatal(err)
			}
			vreg, err1 := vb.FollowVolumes(inf.Core().V1().PersistentVolumes().Informer())
			creg, err2 := vb.FollowClaims(inf.Core().V1().PersistentVolumeClaims().Informer())
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			regs = append(regs, vreg, creg)
			return vb
		}
		l.plain, l.zoned = build(false), build(true)
	})
	for _, r := range regs {
		if !toolscache.WaitForCacheSync(ctx.Done(), r.HasSynced) {
			t.Fatal("binder handlers did not sync")
		}
	}
	return l
}
