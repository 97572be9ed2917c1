package binder

import (
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/uuid"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Defaults of the Config fields.
const (
	// DefaultResyncPeriod is Kubernetes' default --pvclaimbinder-sync-period.
	DefaultResyncPeriod = 15 * time.Second
	// DefaultRetryBaseDelay is the first delay of a failed sync's requeue.
	DefaultRetryBaseDelay = 5 * time.Millisecond
	// DefaultRetryMaxDelay caps the exponential requeue delay.
	DefaultRetryMaxDelay = 30 * time.Second
)

// Config tunes a Binder. The zero value is valid: one worker per queue, the
// real clock, no events, no metrics and a 15 s resync.
type Config struct {
	// Clock drives the workqueues' delays and the resync. Nil means
	// clock.RealClock{}.
	Clock clock.WithTicker
	// Logger receives what the Binder logs outside a call: its event
	// handlers' logs. Run, SyncClaim and SyncVolume log to the logger of
	// their ctx (klog.FromContext), and to Logger when ctx carries none.
	// The zero value means klog.Background().
	Logger klog.Logger
	// Recorder receives the Binder's events (FailedBinding, ClaimLost, ...).
	// Nil drops them. client-go's broadcasters write events on their own
	// goroutine, after the write an event reports: a program that exits
	// when Run returns drops those still queued unless it waits for them
	// ("volbind controller" does, in internal/controller/events.go).
	Recorder record.EventRecorder
	// Registerer receives the Binder's Prometheus metrics (syncs, binds,
	// conflicts, workqueue depth and latency). Nil means no metrics; nothing
	// is ever registered globally. Registering fails (and New with it) when
	// the names are already registered, so give each Binder its own
	// registry or wrap it with prometheus.WrapRegistererWith.
	Registerer prometheus.Registerer
	// KubeMetrics turns on the metrics of kube-controller-manager's
	// PersistentVolume controller, under its names (pv_collector_*,
	// volume_operation_*, storage_operation_duration_seconds, ...); see
	// KubeMetricsConfig. Nil (the default) means none, so that a binary
	// that exports them already has no clash.
	KubeMetrics *KubeMetricsConfig
	// ClaimWorkers and VolumeWorkers are the numbers of goroutines that
	// sync claims and volumes. Zero means 1 (as in Kubernetes); negative
	// values are an error. A key is never synced by two workers at once and
	// two claim workers never bind the same volume.
	ClaimWorkers, VolumeWorkers int
	// ResyncPeriod is how often every object is synced again even without
	// events; zero means DefaultResyncPeriod and a negative value disables
	// the resync. The resync walks the Binder's caches a shard at a time
	// (jitter.Sweep), a 64th of the objects at each 64th of the period
	// (each object in the same shard while the process runs), so
	// resyncs are spread evenly over time and cost no memory per object.
	// A positive period must be at least 64ns.
	// The resync also runs the repeated verification read of an object
	// whose delete event may have been lost (see VolumeHandler); without
	// resync that read waits for the object's next sync.
	ResyncPeriod time.Duration
	// ResyncJitter adds a random delay in [0, ResyncJitter*ResyncPeriod) to
	// each shard's resync, drawn anew every period, to keep replicas out of
	// step. It must be in [0, 1); zero means none.
	ResyncJitter float64
	// RetryBaseDelay and RetryMaxDelay bound the exponential delay before a
	// failed sync of a key is retried; zero means DefaultRetryBaseDelay and
	// DefaultRetryMaxDelay.
	RetryBaseDelay, RetryMaxDelay time.Duration
	// Synced are called by Run, which starts no worker until all of them
	// return true (informers' HasSynced), so that no claim is found Lost
	// just because its volume has not been listed yet. NewForClientset adds
	// its informers' here.
	Synced []toolscache.InformerSynced

	// Provisioning turns dynamic provisioning on (kube-controller-manager's
	// --enable-dynamic-provisioning); see ProvisioningConfig. Nil means
	// off: a claim of a storage class that no volume matches is left
	// Pending without a write or an event. New copies it.
	Provisioning *ProvisioningConfig
	// Reclaim turns the Delete and Recycle reclaim policies on; see
	// ReclaimConfig. Nil means off: released volumes stay Released
	// whatever their policy, for another controller to reclaim. Retain
	// volumes are never touched either way. New copies it.
	Reclaim *ReclaimConfig
	// OperationInitialDelay and OperationMaxDelay bound the exponential
	// backoff of a failed provisioning, deletion or recycling of one claim
	// or volume; zero means operations.DefaultInitialDelay (500 ms) and
	// operations.DefaultMaxDelay (2 min 2 s), as in Kubernetes.
	OperationInitialDelay, OperationMaxDelay time.Duration

	// AvailableDelay, when positive, saves the Available write of new
	// statically provisioned volumes that a claim takes: claims may then be
	// bound to unbound volumes whose phase is still empty or Pending, and the
	// volume sync marks such a volume Available only once AvailableDelay has
	// passed since the Binder first saw it and no claim waiting in the claim
	// queue (queued by an event, a resync or a write, or waiting for the retry
	// of a failed sync) might take it (one of its class, VolumeAttributesClass
	// and volume mode requesting no more than its capacity, the claim it is
	// pre-bound to, or a claim naming it). A binding then costs 4 writes
	// instead of Kubernetes' 5, and a volume no claim takes is marked
	// Available at most one AvailableDelay after the claim queue has no claim
	// for it. Zero (the default) is Kubernetes' behaviour: every new volume is
	// marked Available at its first sync and only Available volumes are bound
	// to claims that do not name them. A volume held back is queued again for
	// later; WaitForQuiescence does not wait for that (see its doc), and
	// SyncVolume of a held volume returns nil without a write. Negative values
	// are an error.
	AvailableDelay time.Duration

	// CSIMigration says which in-tree plugins are migrated to CSI drivers
	// (see CSIMigration): their claims are handed to the CSI driver's
	// external provisioner, their volumes and claims are annotated
	// pv.kubernetes.io/migrated-to and their volumes are left to that
	// provisioner to delete. Nil means TranslationLibMigration{} (every
	// plugin csi-translation-lib knows is migrated, as in Kubernetes
	// v1.37); NoCSIMigration{} turns migration off.
	CSIMigration CSIMigration
	// Pods finds the pods that use a claim: a Recycle volume is not
	// scrubbed while pods still use its claim, and a claim waiting for its
	// first consumer names the pods that wait to be scheduled. Nil means
	// no pod is known (neither check is made); NewForClientset sets it
	// from a pod informer.
	Pods ClaimPods
	// Fence, when set, is consulted right before every Provision, Delete
	// and Recycle call and every API write; a refusal fails the call with
	// an error wrapping ErrFenced (the sync or operation is retried). Nil
	// means always allowed. See Fence.
	Fence Fence
	// Identity names this Binder in the AnnOperation marks it writes on
	// volumes before deleting or recycling them; give each replica its own
	// (a leader-election identity). Empty means the host name followed by
	// a random UUID.
	Identity string
	// Observer, when set, is told of every version of a volume or claim
	// the Binder acted on (see SyncObserver). Nil means none.
	Observer SyncObserver
	// OperationMarkTTL is how long another Binder's AnnOperation mark keeps
	// this one from deleting or recycling the volume (after a crash of the
	// other, the volume is reclaimed once the mark is older). Zero means
	// DefaultOperationMarkTTL. A negative value turns the marks off: one
	// write less per deletion or recycling, as in Kubernetes, which relies
	// on leader election alone.
	OperationMarkTTL time.Duration
}

// minResyncPeriod is the shortest positive ResyncPeriod: the resync
// sweeps each of the caches' 64 shards at its own nanosecond at least.
const minResyncPeriod = 64

// withDefaults checks cfg and fills in the defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.ClaimWorkers < 0 || cfg.VolumeWorkers < 0 {
		return cfg, fmt.Errorf("binder: negative worker count (claims %d, volumes %d): %w", cfg.ClaimWorkers, cfg.VolumeWorkers, ErrInvalidConfig)
	}
	if !(cfg.ResyncJitter >= 0 && cfg.ResyncJitter < 1) {
		return cfg, fmt.Errorf("binder: resync jitter %v is not in [0, 1): %w", cfg.ResyncJitter, ErrInvalidConfig)
	}
	if cfg.ResyncPeriod > 0 && cfg.ResyncPeriod < minResyncPeriod {
		return cfg, fmt.Errorf("binder: resync period %v is shorter than %v, a nanosecond per cache shard: %w", cfg.ResyncPeriod, time.Duration(minResyncPeriod), ErrInvalidConfig)
	}
	if cfg.RetryBaseDelay < 0 || cfg.RetryMaxDelay < 0 {
		return cfg, fmt.Errorf("binder: negative retry delay (base %v, max %v): %w", cfg.RetryBaseDelay, cfg.RetryMaxDelay, ErrInvalidConfig)
	}
	if cfg.AvailableDelay < 0 {
		return cfg, fmt.Errorf("binder: negative AvailableDelay %v: %w", cfg.AvailableDelay, ErrInvalidConfig)
	}
	if cfg.OperationMarkTTL == 0 {
		cfg.OperationMarkTTL = DefaultOperationMarkTTL
	}
	if cfg.Identity == "" {
		host, _ := os.Hostname()
		cfg.Identity = host + "_" + string(uuid.NewUUID())
	}
	if cfg.OperationInitialDelay < 0 || cfg.OperationMaxDelay < 0 {
		return cfg, fmt.Errorf("binder: negative operation backoff (initial %v, max %v): %w", cfg.OperationInitialDelay, cfg.OperationMaxDelay, ErrInvalidConfig)
	}
	if p := cfg.Provisioning; p != nil {
		if p.CreateVolumeRetries < 0 || p.CreateVolumeInterval < 0 || p.AllocationUnit < 0 {
			return cfg, fmt.Errorf("binder: negative provisioning setting (retries %d, interval %v, unit %d): %w",
				p.CreateVolumeRetries, p.CreateVolumeInterval, int64(p.AllocationUnit), ErrInvalidConfig)
		}
		pc := *p
		if pc.CreateVolumeRetries == 0 {
			pc.CreateVolumeRetries = DefaultCreateVolumeRetries
		}
		if pc.CreateVolumeInterval == 0 {
			pc.CreateVolumeInterval = DefaultCreateVolumeInterval
		}
		cfg.Provisioning = &pc
	}
	if r := cfg.Reclaim; r != nil {
		rc := *r
		cfg.Reclaim = &rc
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = klog.Background()
	}
	if cfg.CSIMigration == nil {
		cfg.CSIMigration = TranslationLibMigration{}
	}
	if cfg.ClaimWorkers == 0 {
		cfg.ClaimWorkers = 1
	}
	if cfg.VolumeWorkers == 0 {
		cfg.VolumeWorkers = 1
	}
	if cfg.ResyncPeriod == 0 {
		cfg.ResyncPeriod = DefaultResyncPeriod
	}
	if cfg.RetryBaseDelay == 0 {
		cfg.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if cfg.RetryMaxDelay == 0 {
		cfg.RetryMaxDelay = DefaultRetryMaxDelay
	}
	if cfg.RetryMaxDelay < cfg.RetryBaseDelay {
		cfg.RetryMaxDelay = cfg.RetryBaseDelay
	}
	cfg.Synced = append([]toolscache.InformerSynced(nil), cfg.Synced...)
	return cfg, nil
}
