package provisioner

import (
	"context"
	"errors"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// ControllerConfig configures the library's controller around a Provisioner.
type ControllerConfig struct {
	// Namespace limits the claims the controller sees to one namespace.
	// Empty: every namespace.
	Namespace string
	// VolumeSelector limits the volumes the controller sees to those with
	// these labels (a label selector). Empty: every volume.
	VolumeSelector string
	// Threadiness is the number of claim workers and of volume workers.
	// Zero: the library's default (4).
	Threadiness int
	// RetryBase is the first delay before a failed claim or volume is
	// retried; it doubles up to RetryMax. Zero: the library's 15 s.
	RetryBase time.Duration
	// RetryMax caps the retry delay. Zero: the library's 1000 s.
	RetryMax time.Duration
	// ResyncPeriod is the period of the informers' resyncs. Zero: the
	// library's 15 min.
	ResyncPeriod time.Duration
}

// Run runs the library's controller (controller.NewProvisionController,
// with its finalizer option on and without leader election) for p under
// p's driver name and, with Config.MigratedFrom, the in-tree plugin's
// name, until ctx is done; it returns after the controller's workers and
// informers have stopped.
func Run(ctx context.Context, client kubernetes.Interface, p *Provisioner, cfg ControllerConfig) error {
	if client == nil || p == nil {
		return errors.New("provisioner: Run needs a client and a Provisioner")
	}
	resync := cfg.ResyncPeriod
	if resync == 0 {
		resync = controller.DefaultResyncPeriod
	}
	claims := informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithNamespace(cfg.Namespace))
	volumes := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = cfg.VolumeSelector }))
	classes := informers.NewSharedInformerFactory(client, resync)
	var workers sync.WaitGroup
	opts := []func(*controller.ProvisionController) error{
		controller.AddFinalizer(true),
		controller.LeaderElection(false),
		controller.ResyncPeriod(resync),
		controller.ClaimsInformer(claims.Core().V1().PersistentVolumeClaims().Informer()),
		controller.VolumesInformer(volumes.Core().V1().PersistentVolumes().Informer()),
		controller.ClassesInformer(classes.Storage().V1().StorageClasses().Informer()),
	}
	if p.cfg.MigratedFrom != "" {
		opts = append(opts, controller.AdditionalProvisionerNames([]string{p.cfg.MigratedFrom}))
	}
	if cfg.Threadiness > 0 {
		opts = append(opts, controller.Threadiness(cfg.Threadiness))
	}
	if cfg.RetryBase > 0 {
		limit := cfg.RetryMax
		if limit == 0 {
			limit = 1000 * time.Second
		}
		opts = append(opts, controller.RateLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[string](cfg.RetryBase, limit)))
	}
	newControllerMu.Lock()
	ctrl := controller.NewProvisionController(ctx, client, p.cfg.Driver, p, opts...)
	newControllerMu.Unlock()
	ctrl.ControllerWaitGroup(&workers)
	claims.Start(ctx.Done())
	volumes.Start(ctx.Done())
	classes.Start(ctx.Done())
	ctrl.Run(ctx)
	workers.Wait()
	for _, f := range []informers.SharedInformerFactory{claims, volumes, classes} {
		f.Shutdown()
	}
	return nil
}

// newControllerMu serializes NewProvisionController, which registers
// core/v1 in client-go's global scheme.Scheme on every call: two
// provisioners started at once in one process (the suite runs one per
// binder) would write the scheme's maps concurrently ("concurrent map
// writes", seen in CI). The library's global is the state guarded here.
var newControllerMu sync.Mutex
