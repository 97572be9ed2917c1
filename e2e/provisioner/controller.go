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

// Controller is the library's controller (controller.NewProvisionController,
// with its finalizer option on and without leader election) for one
// Provisioner, with the informers it reads. NewController builds it; Run
// runs it.
type Controller struct {
	ctrl      *controller.ProvisionController
	factories []informers.SharedInformerFactory
	workers   sync.WaitGroup
}

// NewController builds the library's controller for p under p's driver name
// and, with Config.MigratedFrom, the in-tree plugin's name. It starts
// nothing but the library's event broadcaster, which stops when ctx is done:
// pass the context Run will get.
//
// The library's constructor registers core/v1 in client-go's global
// scheme.Scheme on every call, writing the scheme's maps, which every
// client of the process reads when it decodes a response. A client decoding
// meanwhile kills the process ("concurrent map read and map write", seen in
// CI while another case's watches ran). So a process that runs several
// controllers builds all of them before any client of it runs.
// NewController calls are serialized, so they never write at once.
func NewController(ctx context.Context, client kubernetes.Interface, p *Provisioner, cfg ControllerConfig) (*Controller, error) {
	if client == nil || p == nil {
		return nil, errors.New("provisioner: a controller needs a client and a Provisioner")
	}
	resync := cfg.ResyncPeriod
	if resync == 0 {
		resync = controller.DefaultResyncPeriod
	}
	claims := informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithNamespace(cfg.Namespace))
	volumes := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = cfg.VolumeSelector }))
	classes := informers.NewSharedInformerFactory(client, resync)
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
	c := &Controller{factories: []informers.SharedInformerFactory{claims, volumes, classes}}
	newControllerMu.Lock()
	c.ctrl = controller.NewProvisionController(ctx, client, p.cfg.Driver, p, opts...)
	newControllerMu.Unlock()
	c.ctrl.ControllerWaitGroup(&c.workers)
	return c, nil
}

// Run starts the controller's informers and runs it until ctx is done; it
// returns after the controller's workers and informers have stopped. Call
// it once.
func (c *Controller) Run(ctx context.Context) {
	for _, f := range c.factories {
		f.Start(ctx.Done())
	}
	c.ctrl.Run(ctx)
	c.workers.Wait()
	for _, f := range c.factories {
		f.Shutdown()
	}
}

// Run builds the controller of p (NewController) and runs it until ctx is
// done, for a process that runs one controller.
func Run(ctx context.Context, client kubernetes.Interface, p *Provisioner, cfg ControllerConfig) error {
	c, err := NewController(ctx, client, p, cfg)
	if err != nil {
		return err
	}
	c.Run(ctx)
	return nil
}

// newControllerMu serializes NewProvisionController's writes to client-go's
// global scheme.Scheme (see NewController): two at once would be
// "concurrent map writes". The library's global is the state guarded here.
var newControllerMu sync.Mutex
