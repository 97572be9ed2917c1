package scheduling

import (
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	csitrans "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/cache"
)

// PodVolumes is what Find decided for one pod on one node: the claims to
// bind to existing volumes and the claims to provision. Assume replaces the
// objects by their assumed versions and Bind by the API server's answers;
// the objects are shared: do not mutate them.
type PodVolumes struct {
	// Node is the node Find was called for.
	Node *v1.Node
	// StaticBindings are the claims to bind to pre-provisioned volumes.
	StaticBindings []*BindingInfo
	// DynamicProvisions are the claims to provision on Node.
	DynamicProvisions []*v1.PersistentVolumeClaim
}

// VolumeBinder finds, assumes and binds the volumes of pods for a
// scheduler. Create it with New, then register VolumeHandler and
// ClaimHandler on informers (or any watch) of PersistentVolumes and
// PersistentVolumeClaims. All methods are safe for concurrent use; Assume is
// meant to be called serially, as a scheduler's reserve step is.
type VolumeBinder struct {
	api     API
	classes storagelisters.StorageClassLister
	cfg     Config
	clock   clock.WithTicker
	metrics *metrics
	logger  klog.Logger

	// pvMu serialises every change of pvs with the matching change of
	// index, so that the index always holds the latest (possibly assumed)
	// version of each volume. Readers take no lock.
	pvMu   sync.Mutex
	pvs    *cache.Assume[*v1.PersistentVolume]
	vindex *volumeIndex

	pvcs *cache.Assume[*v1.PersistentVolumeClaim]
	// affinity and csiAffinity hold the parsed node affinity of volumes
	// as they are and as translated to CSI.
	affinity, csiAffinity affinityCache
	translator            translator
	// decisions holds what Assume recorded per pod and node.
	decisions *decisions

	// followMu serialises FollowVolumes and FollowClaims; the followers
	// are read without it.
	followMu                      sync.Mutex
	volumeFollower, claimFollower atomic.Pointer[follower]

	// changes wakes the Binds waiting for the Binder.
	changes notifier
}

// New returns a VolumeBinder that writes through api and reads
// StorageClasses from classes (a client-go lister; any implementation
// works). It starts no goroutines. It fails for nil arguments, an invalid
// Config or metrics that cannot be registered.
func New(api API, classes storagelisters.StorageClassLister, cfg Config) (*VolumeBinder, error) {
	if api == nil || classes == nil {
		return nil, fmt.Errorf("scheduling: New needs an API and a StorageClass lister: %w", ErrInvalidArgument)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &VolumeBinder{
		api:     api,
		classes: classes,
		cfg:     cfg,
		clock:   cfg.Clock,
		metrics: m,
		logger:  cfg.Logger,
		pvs: cache.NewAssume(cache.AssumeConfig[*v1.PersistentVolume]{
			Description: "PersistentVolume", Logger: cfg.Logger,
		}),
		vindex: newVolumeIndex(),
		pvcs: cache.NewAssume(cache.AssumeConfig[*v1.PersistentVolumeClaim]{
			Description: "PersistentVolumeClaim", Logger: cfg.Logger,
		}),
		translator: csitrans.New(),
		decisions:  newDecisions(),
	}, nil
}

// VolumeHandler returns the handler to register on a PersistentVolume
// informer. Events update the volume cache and index and wake waiting Binds.
// It does not block beyond short locks and never calls the API.
func (b *VolumeBinder) VolumeHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			pv, ok := obj.(*v1.PersistentVolume)
			if !ok || pv == nil {
				b.pvs.OnAdd(obj, false) // logs the wrong type
				return
			}
			b.volumeEvent(pv.Name, func() { b.pvs.OnAdd(pv, false) })
		},
		UpdateFunc: func(oldObj, newObj any) {
			pv, ok := newObj.(*v1.PersistentVolume)
			if !ok || pv == nil {
				b.pvs.OnUpdate(oldObj, newObj)
				return
			}
			b.volumeEvent(pv.Name, func() { b.pvs.OnUpdate(oldObj, pv) })
		},
		DeleteFunc: func(obj any) {
			name := ""
			switch o := obj.(type) {
			case *v1.PersistentVolume:
				if o != nil {
					name = o.Name
				}
			case toolscache.DeletedFinalStateUnknown:
				name = o.Key
			case *toolscache.DeletedFinalStateUnknown:
				if o != nil {
					name = o.Key
				}
			}
			if name == "" {
				b.pvs.OnDelete(obj)
				return
			}
			b.volumeEvent(name, func() { b.pvs.OnDelete(obj) })
			b.affinity.forget(name)
			b.csiAffinity.forget(name)
		},
	}
}

// ClaimHandler returns the handler to register on a PersistentVolumeClaim
// informer. Events update the claim cache and wake waiting Binds.
func (b *VolumeBinder) ClaimHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			b.pvcs.OnAdd(obj, false)
			b.changes.notify()
		},
		UpdateFunc: func(oldObj, newObj any) {
			b.pvcs.OnUpdate(oldObj, newObj)
			b.changes.notify()
		},
		DeleteFunc: func(obj any) {
			b.pvcs.OnDelete(obj)
			b.changes.notify()
		},
	}
}

// volumeEvent applies change to the volume cache and brings the index in
// line with the volume's new latest version.
func (b *VolumeBinder) volumeEvent(name string, change func()) {
	b.pvMu.Lock()
	_ = b.changeVolumeLocked(name, func() error { change(); return nil })
	b.pvMu.Unlock()
	b.changes.notify()
}

// changeVolumeLocked applies change to the volume cache and, unless it
// fails, makes the index hold the latest version of volume name instead of
// the one before. Called with pvMu held.
func (b *VolumeBinder) changeVolumeLocked(name string, change func() error) error {
	old, _ := b.pvs.Get(name) // the version the index holds; nil when none
	if err := change(); err != nil {
		return err
	}
	pv, _ := b.pvs.Get(name)
	b.vindex.set(name, old, pv)
	return nil
}

// assumeVolume assumes pv in the cache and the index.
func (b *VolumeBinder) assumeVolume(pv *v1.PersistentVolume) error {
	b.pvMu.Lock()
	defer b.pvMu.Unlock()
	return b.changeVolumeLocked(pv.Name, func() error { return b.pvs.Assume(pv) })
}

// restoreVolume drops the assumed version of volume name.
func (b *VolumeBinder) restoreVolume(name string) {
	b.pvMu.Lock()
	defer b.pvMu.Unlock()
	_ = b.changeVolumeLocked(name, func() error { b.pvs.Restore(name); return nil })
}

// notifier wakes every goroutine waiting for the next change.
type notifier struct {
	// mu guards ch.
	mu sync.Mutex
	// ch is closed on the next change; nil when nobody waits.
	ch chan struct{}
}

// wait returns a channel closed by the next notify.
func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}
