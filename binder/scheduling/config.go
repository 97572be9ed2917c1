package scheduling

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DefaultBindTimeout is how long Bind waits for the Binder by default, as
// kube-scheduler's default bindTimeoutSeconds (600).
const DefaultBindTimeout = 10 * time.Minute

// API is the pair of writes Bind makes. binder.API, binder.ClientsetAPI and
// bindertest.Server implement it. Errors are
// k8s.io/apimachinery/pkg/api/errors values.
type API interface {
	// UpdateVolume writes pv's metadata and spec; a stale resourceVersion
	// fails with a Conflict error.
	UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error)
	// UpdateClaim writes pvc's metadata and spec; a stale resourceVersion
	// fails with a Conflict error.
	UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error)
}

// CapacityChecker decides whether a new volume for claim, of class, can be
// provisioned where node can reach it (kube-scheduler uses
// CSIStorageCapacity objects). It is called by Find, possibly in parallel.
type CapacityChecker interface {
	// HasCapacity reports whether there is room for the claim's request.
	HasCapacity(ctx context.Context, class *storagev1.StorageClass, claim *v1.PersistentVolumeClaim, node *v1.Node) (bool, error)
}

// Config tunes a VolumeBinder. The zero value is valid.
type Config struct {
	// Clock times Bind's wait and the metrics. Nil means clock.RealClock{}.
	Clock clock.WithTicker
	// Registerer receives the metrics (see the package comment). Nil means
	// no metrics, as in binder.Config; nothing is ever registered globally.
	// Registering names that are already registered is an error.
	Registerer prometheus.Registerer
	// BindTimeout bounds Bind's wait for the Binder. Zero means
	// DefaultBindTimeout; negative is an error.
	BindTimeout time.Duration
	// Capacity, when set, is asked whether a claim to provision fits the
	// node's storage (reason NotEnoughSpace when not). Nil means no check.
	Capacity CapacityChecker
	// CSINodes reads the CSINode of a node (a client-go lister; only Get
	// is called). A bound claim's volume of an in-tree plugin that the
	// node's CSINode lists as migrated
	// (storage.alpha.kubernetes.io/migrated-plugins) is translated to its
	// CSI driver with k8s.io/csi-translation-lib before its node affinity
	// is checked, as kube-scheduler does. Nil means no node has a CSINode:
	// volumes are checked as they are.
	CSINodes storagelisters.CSINodeLister
	// VolumeZone also answers as kube-scheduler's VolumeZone plugin, which
	// runs after VolumeBinding in the default profile: a node whose zone
	// and region labels are not among those of a bound claim's volume
	// (its topology.kubernetes.io/zone, .../region and the beta
	// failure-domain labels) gets a VolumeZoneConflict reason when no
	// other reason rejects it, and a claim bound to a volume that does not
	// exist fails the pod with VolumeMissing. False (the default) checks
	// only what VolumeBinding checks: node affinity.
	VolumeZone bool
	// ClassZoneParameters also refuses to provision a claim for a node
	// outside the zone or zones parameter of the claim's StorageClass
	// (keys in any case, as the in-tree provisioners read them), with
	// reason ClassZoneConflict. Kubernetes' scheduler does not look at
	// class parameters; the check spares a provisioning that a zonal
	// provisioner honouring them would refuse. False by default.
	ClassZoneParameters bool
	// Logger receives the errors of informer events, which have no caller
	// to return them to. The zero value means klog.Background().
	Logger klog.Logger
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.BindTimeout < 0 {
		return cfg, fmt.Errorf("scheduling: negative bind timeout %v: %w", cfg.BindTimeout, ErrInvalidArgument)
	}
	if cfg.BindTimeout == 0 {
		cfg.BindTimeout = DefaultBindTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = klog.Background()
	}
	return cfg, nil
}
