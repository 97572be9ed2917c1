package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/internal/dedup"
	"github.com/volbind/volbind/recycler"
)

// errLeadershipLost is returned when the replica lost its Lease while it
// ran the Binder: the process exits so that it restarts from fresh state,
// as kube-controller-manager does.
var errLeadershipLost = errors.New("controller: leader election lost")

// controllerState is what /readyz reports.
type controllerState int32

const (
	stateStarting controllerState = iota // not ready
	stateStandby                         // ready: waiting for the Lease
	stateSyncing                         // not ready: leading, informers not synced yet
	stateRunning                         // ready: the Binder runs
	stateStopping                        // not ready
)

var stateNames = [...]string{"starting", "standby (waiting for the Lease)", "syncing informers", "running", "stopping"}

func (s controllerState) String() string { return stateNames[s] }

func (s controllerState) ready() bool { return s == stateStandby || s == stateRunning }

// controller is one run of "volbind controller".
type controller struct {
	cs       kubernetes.Interface
	o        controllerOptions
	reg      *prometheus.Registry
	recorder record.EventRecorder
	state    atomic.Int32
	leader   prometheus.Gauge
	// fence guards the Binder's writes and plugin calls with the Lease
	// (fence.go); nil without leader election.
	fence binder.Fence
	// watchdog is the leader-election health check of /healthz and
	// /livez; nil without leader election.
	watchdog *leaderelection.HealthzAdaptor
}

func (c *controller) setState(s controllerState) { c.state.Store(int32(s)) }

// leaderHealthGrace is how long past the lease duration the leader may go
// without renewing before /healthz and /livez fail, as in
// kube-controller-manager.
const leaderHealthGrace = 20 * time.Second

// controllerMain runs the Binder on cs until ctx is done or the Lease is
// lost, with its metrics on reg. It serves metrics (reg's and client-go's,
// see metricsGatherer) and health on srv when srv is not nil, and returns after every goroutine it started has exited.
func controllerMain(ctx context.Context, cs kubernetes.Interface, o controllerOptions, reg *prometheus.Registry, srv *serving) error {
	c := &controller{cs: cs, o: o, reg: reg}
	c.leader = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "volbind", Subsystem: "controller", Name: "leader",
		Help: "1 while this replica holds the leader-election Lease (or runs without leader election), else 0.",
	})
	if err := c.reg.Register(c.leader); err != nil {
		return fmt.Errorf("controller: register metrics: %w", err)
	}
	if o.LeaderElect {
		c.watchdog = leaderelection.NewLeaderHealthzAdaptor(leaderHealthGrace)
	}

	// Deferred in this order so that the goroutines are told to stop
	// (cancel) before they are waited for.
	ctx, cancel := context.WithCancel(ctx)
	if srv != nil {
		stopped, err := srv.serve(ctx, srv.handler(metricsGatherer(c.reg), healthChecks{election: c.watchdog, ready: healthz.NamedCheck("binder", c.readyCheck)}))
		if err != nil {
			cancel()
			return err
		}
		defer func() { <-stopped }()
	}
	defer cancel()

	events := startEventRecording(ctx, &typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	c.recorder = events.recorder
	defer func() {
		// The Binder has returned: write what it recorded before the stop.
		if !events.stop(clock.RealClock{}, eventDrainTimeout) {
			klog.FromContext(ctx).Info("Stopped before the recorded events were written", "timeout", eventDrainTimeout)
		}
	}()

	defer c.setState(stateStopping)
	if !o.LeaderElect {
		c.leader.Set(1)
		return c.lead(ctx)
	}
	return c.elect(ctx)
}

// leaderElectionConfig is the configuration of the Lease election; the
// callbacks are the caller's.
func (c *controller) leaderElectionConfig(cb leaderelection.LeaderCallbacks) leaderelection.LeaderElectionConfig {
	return leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: c.o.LeaseNS, Name: c.o.LeaseName},
			Client:     c.cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: c.o.Identity, EventRecorder: c.recorder},
		},
		LeaseDuration:   c.o.LeaseDuration,
		RenewDeadline:   c.o.RenewDeadline,
		RetryPeriod:     c.o.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            c.o.LeaseName,
		WatchDog:        c.watchdog,
		Callbacks:       cb,
	}
}

// elect runs the Binder while this replica holds the Lease. It returns
// nil when ctx is done and errLeadershipLost when the Lease was lost.
func (c *controller) elect(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	electCtx, stopElection := context.WithCancel(ctx)
	defer stopElection()
	// The elector calls OnStartedLeading on a goroutine it does not wait
	// for; hand its context over and run the Binder here instead.
	leading := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(c.leaderElectionConfig(leaderelection.LeaderCallbacks{
		OnStartedLeading: func(ctx context.Context) { leading <- ctx },
		OnStoppedLeading: func() {
			c.leader.Set(0)
			logger.Info("Stopped leading", "identity", c.o.Identity)
		},
		OnNewLeader: func(identity string) {
			if identity != c.o.Identity {
				logger.Info("Another replica leads", "leader", identity)
			}
		},
	}))
	if err != nil {
		return fmt.Errorf("controller: leader election: %w", err)
	}
	c.fence = newLeaseFence(le, c.o.LeaseDuration, c.o.RenewDeadline, c.o.RetryPeriod)
	elected := make(chan struct{})
	go func() {
		defer close(elected)
		le.Run(electCtx)
	}()
	c.setState(stateStandby)
	logger.Info("Waiting for the leader-election Lease", "lease", klog.KRef(c.o.LeaseNS, c.o.LeaseName), "identity", c.o.Identity)

	select {
	case leadCtx := <-leading:
		c.leader.Set(1)
		logger.Info("Started leading", "identity", c.o.Identity)
		err = c.lead(leadCtx)
		if err == nil && ctx.Err() == nil {
			err = errLeadershipLost
		}
	case <-elected:
		// The elector returns before ctx is done only after it led and
		// lost the Lease: it may do so before the Binder's handover above
		// was read.
		if ctx.Err() == nil {
			err = errLeadershipLost
		}
	}
	stopElection() // releases the Lease
	<-elected
	return err
}

// lead runs the Binder on informers until ctx is done. It returns nil
// then, and an error when the Binder cannot be built or run.
func (c *controller) lead(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	c.setState(stateSyncing)
	factory := informers.NewSharedInformerFactoryWithOptions(c.cs, 0, informers.WithTransform(cacheTransform(&dedup.Table{})))
	// Released Recycle volumes are scrubbed by a recycler pod, as
	// kube-controller-manager does; Delete volumes of external provisioners
	// are left to them, host-path ones are deleted as its in-tree plugin
	// does, other Delete volumes become Failed (no other deleter plugin is
	// built into the program).
	// Without --recycler they become Failed (event VolumeFailedRecycle),
	// as volumes of a policy nothing can carry out do.
	reclaim := &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{hostPathPlugin: hostPathDeleter{}}}
	if c.o.Recycler {
		rec, err := recycler.NewForClientset(c.cs, recycler.Config{})
		if err != nil {
			return fmt.Errorf("controller: %w", err)
		}
		reclaim.Recycler = rec
	}
	b, err := binder.NewForClientset(ctx, c.cs, factory, binder.Config{
		ClaimWorkers:   c.o.ClaimWorkers,
		VolumeWorkers:  c.o.VolumeWorkers,
		ResyncPeriod:   c.o.ResyncPeriod,
		AvailableDelay: c.o.AvailableDelay,
		Recorder:       c.recorder,
		Registerer:     c.reg,
		KubeMetrics:    &binder.KubeMetricsConfig{ShowHidden: c.o.ShowHiddenMetricsForVersion != ""},
		Reclaim:        reclaim,
		Provisioning:   provisioning(c.o),
		Fence:          c.fence,
		Identity:       c.o.Identity,
	})
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("controller: the %v informer did not sync", typ)
		}
	}
	c.setState(stateRunning)
	logger := klog.FromContext(ctx)
	if n, err := releaseStartupPages(); err != nil {
		logger.Error(err, "Cannot release the start-up pages of the executable")
	} else {
		logger.V(2).Info("Released the start-up pages of the executable", "residentBytes", n)
	}
	logger.Info("Binder running", "claimWorkers", c.o.ClaimWorkers, "volumeWorkers", c.o.VolumeWorkers)
	if err := b.Run(ctx); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}

// readyCheck is the "binder" check of /readyz: ready while waiting for
// the Lease or running the Binder; not while the informers sync or the
// controller stops.
func (c *controller) readyCheck(*http.Request) error {
	if s := controllerState(c.state.Load()); !s.ready() {
		return errors.New(s.String())
	}
	return nil
}

// provisioning is the Binder's provisioning of o: with
// --enable-dynamic-provisioning (the default, as in
// kube-controller-manager), claims of external provisioners are handed to
// them. No provisioner is built into the program, so nothing reads nodes:
// noNodes keeps NewForClientset from starting a node informer (memory and
// RBAC the program does not need).
func provisioning(o controllerOptions) *binder.ProvisioningConfig {
	if !o.DynamicProvisioning {
		return nil
	}
	return &binder.ProvisioningConfig{Nodes: noNodes{}}
}

// noNodes is the NodeGetter of a Binder without provisioners of its own:
// it knows no node.
type noNodes struct{}

var _ binder.NodeGetter = noNodes{}

// GetNode returns a NotFound error for every name.
func (noNodes) GetNode(_ context.Context, name string) (*v1.Node, error) {
	return nil, apierrors.NewNotFound(v1.Resource("nodes"), name)
}

// ListNodes returns no node.
func (noNodes) ListNodes(context.Context) ([]*v1.Node, error) { return nil, nil }
