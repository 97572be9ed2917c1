package volumebinding

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/scheduling"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// Name is the plugin's name in KubeSchedulerConfiguration profiles.
const Name = "VolbindVolumeBinding"

// Config tunes the plugins a Factory builds. The zero value is valid.
type Config struct {
	// Registerer receives binder/scheduling's scheduler_volume_* metrics.
	// Nil means no metrics. The scheduler binary passes
	// legacyregistry.Registerer(): the in-tree plugin's collectors of the
	// same names, which kube-scheduler registers at start, are unregistered
	// from it first so that ours take their place.
	Registerer prometheus.Registerer
	// FeatureGate gives the scheduler's feature gates
	// (InPlacePodVerticalScalingSchedulerPreemption, StorageCapacityScoring).
	// Nil means utilfeature.DefaultFeatureGate, the gate kube-scheduler's
	// --feature-gates flag sets.
	FeatureGate featuregate.FeatureGate
	// Clock times binder/scheduling's Bind wait. Nil means
	// clock.RealClock{}.
	Clock clock.WithTicker
}

// Factory builds the plugin for each profile of a scheduler. Profiles that
// share an informer factory (all profiles of one kube-scheduler) share one
// scheduling.VolumeBinder. Safe for concurrent use.
type Factory struct {
	cfg Config

	// mu guards binders.
	mu sync.Mutex
	// binders maps an informer factory to the binder fed by its informers.
	binders map[informers.SharedInformerFactory]*shared
}

// shared is what the plugins of one informer factory share.
type shared struct {
	binder   *scheduling.VolumeBinder
	capacity *scheduling.StorageCapacity
	// synced is closed once the binder's handlers have seen every object
	// the informers listed at start.
	synced *handlersSynced
}

// NewFactory returns a Factory; it starts nothing.
func NewFactory(cfg Config) *Factory {
	if cfg.FeatureGate == nil {
		cfg.FeatureGate = utilfeature.DefaultFeatureGate
	}
	return &Factory{cfg: cfg, binders: map[informers.SharedInformerFactory]*shared{}}
}

// Plugin is the VolbindVolumeBinding plugin; see the package comment.
type Plugin struct {
	binder   *scheduling.VolumeBinder
	capacity *scheduling.StorageCapacity
	classes  storagelisters.StorageClassLister
	// scorer is nil when StorageCapacityScoring is off: no scoring.
	scorer scorer
	// resizeSkip is the InPlacePodVerticalScalingSchedulerPreemption gate.
	resizeSkip bool
	// synced tells whether the binder's caches hold the informers' start.
	synced *handlersSynced
}

var (
	_ fwk.PreFilterPlugin   = (*Plugin)(nil)
	_ fwk.FilterPlugin      = (*Plugin)(nil)
	_ fwk.PreScorePlugin    = (*Plugin)(nil)
	_ fwk.ScorePlugin       = (*Plugin)(nil)
	_ fwk.ReservePlugin     = (*Plugin)(nil)
	_ fwk.PreBindPlugin     = (*Plugin)(nil)
	_ fwk.EnqueueExtensions = (*Plugin)(nil)
	_ fwk.SignPlugin        = (*Plugin)(nil)
)

// Name returns Name.
func (pl *Plugin) Name() string { return Name }

// New is the framework's plugin factory (app.WithPlugin(Name, f.New)):
// it decodes the profile's arguments (VolumeBindingArgs), and builds the
// plugin on h's informers and client. It starts no goroutines: the
// scheduler starts the informers.
func (f *Factory) New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	fts := feature.NewSchedulerFeaturesFromGates(f.cfg.FeatureGate)
	a, err := decodeArgs(obj, fts.EnableStorageCapacityScoring)
	if err != nil {
		return nil, err
	}
	s, err := f.sharedFor(ctx, h, a)
	if err != nil {
		return nil, err
	}
	inf := h.SharedInformerFactory()
	pl := &Plugin{
		binder:     s.binder,
		capacity:   s.capacity,
		classes:    inf.Storage().V1().StorageClasses().Lister(),
		resizeSkip: fts.EnableInPlacePodVerticalScalingSchedulerPreemption,
		synced:     s.synced,
	}
	if fts.EnableStorageCapacityScoring {
		pl.scorer = newScorer(a.shape)
	}
	return pl, nil
}

// sharedFor returns the binder of h's informer factory, building it and
// registering its handlers the first time.
func (f *Factory) sharedFor(ctx context.Context, h fwk.Handle, a args) (*shared, error) {
	inf := h.SharedInformerFactory()
	if inf == nil || h.ClientSet() == nil {
		return nil, fmt.Errorf("%s: the framework handle has no informer factory or client", Name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.binders[inf]; ok {
		return s, nil
	}
	capacities := inf.Storage().V1().CSIStorageCapacities().Informer()
	if err := capacities.AddIndexers(scheduling.CapacityIndexers()); err != nil {
		return nil, fmt.Errorf("%s: CSIStorageCapacity index: %w", Name, err)
	}
	capacity, err := scheduling.NewStorageCapacity(inf.Storage().V1().CSIDrivers().Lister(), capacities.GetIndexer())
	if err != nil {
		return nil, err
	}
	reg := f.cfg.Registerer
	if reg != nil && len(f.binders) > 0 {
		reg = nil // the first binder's metrics are registered; several factories are only seen in tests
	}
	if reg != nil {
		reg = newReplacingRegisterer(reg)
	}
	b, err := scheduling.New(binder.NewClientsetAPI(h.ClientSet()), inf.Storage().V1().StorageClasses().Lister(),
		scheduling.Config{
			Clock:       f.cfg.Clock,
			Registerer:  reg,
			BindTimeout: a.bindTimeout,
			Capacity:    capacity,
			CSINodes:    inf.Storage().V1().CSINodes().Lister(),
			Logger:      klog.FromContext(ctx).WithName(Name),
		})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	// The scheduling queue retries a pod when its own handlers on these
	// informers see a change: the binder must have the change by then,
	// so it follows the informers' stores rather than handler events.
	pvReg, err := b.FollowVolumes(inf.Core().V1().PersistentVolumes().Informer())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	pvcReg, err := b.FollowClaims(inf.Core().V1().PersistentVolumeClaims().Informer())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	// Informers the plugin reads through listers must exist before the
	// scheduler starts the factory.
	inf.Storage().V1().StorageClasses().Informer()
	inf.Storage().V1().CSIDrivers().Informer()
	inf.Storage().V1().CSINodes().Informer()
	s := &shared{binder: b, capacity: capacity, synced: &handlersSynced{regs: []toolscache.ResourceEventHandlerRegistration{pvReg, pvcReg}}}
	f.binders[inf] = s
	return s, nil
}

// SignPod signs the pod by its volumes, as the in-tree plugin does, so the
// scheduler may batch pods with equal volumes.
func (pl *Plugin) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{{Key: fwk.VolumesSignerName, Value: fwk.VolumesSigner(pod)}}, nil
}

// handlersSynced waits for the binder's informer handlers: the scheduler
// waits for its informers' caches and its own handlers, not for handlers
// plugins add, so the first pods could otherwise be judged on empty caches.
type handlersSynced struct {
	regs []toolscache.ResourceEventHandlerRegistration
	// done is set once every registration has synced.
	done atomic.Bool
}

// wait blocks until the handlers have synced or ctx ends.
func (h *handlersSynced) wait(ctx context.Context) error {
	if h.done.Load() {
		return nil
	}
	fns := make([]toolscache.InformerSynced, len(h.regs))
	for i, r := range h.regs {
		fns[i] = r.HasSynced
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), fns...) {
		return fmt.Errorf("%s: volume caches not synced: %w", Name, context.Cause(ctx))
	}
	h.done.Store(true)
	return nil
}
