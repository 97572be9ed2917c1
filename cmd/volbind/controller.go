package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
)

// controllerOptions are the flags of "volbind controller".
type controllerOptions struct {
	Kubeconfig    string
	QPS           float64
	Burst         int
	ClaimWorkers  int
	VolumeWorkers int
	ResyncPeriod  time.Duration
	// AvailableDelay is binder.Config.AvailableDelay.
	AvailableDelay time.Duration
	// ContentType is the media type of requests and answers.
	ContentType string
	MetricsAddr string
	Verbosity   int

	LeaderElect   bool
	LeaseName     string
	LeaseNS       string
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// defaultIdentity is the replica's identity in the Lease, as
// kube-controller-manager makes it: the host name and a random suffix, so
// that a restarted replica does not take over its predecessor's Lease.
func defaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "volbind"
	}
	return host + "_" + string(uuid.NewUUID())
}

func parseControllerFlags(args []string, stderr io.Writer) (controllerOptions, error) {
	var o controllerOptions
	fs := flag.NewFlagSet("volbind controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: volbind controller [flags]\n\n"+
			"Runs the Binder against a cluster until SIGINT or SIGTERM. Disable kube-controller-manager's\n"+
			"persistentvolume-binder-controller so that the two do not compete.\n\nflags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty means the in-cluster configuration")
	fs.Float64Var(&o.QPS, "kube-api-qps", 20, "queries per second to the API server")
	fs.IntVar(&o.Burst, "kube-api-burst", 30, "burst of queries to the API server")
	fs.IntVar(&o.ClaimWorkers, "claim-workers", 32, "goroutines syncing claims (a worker waits for the API server most of the time)")
	fs.IntVar(&o.VolumeWorkers, "volume-workers", 8, "goroutines syncing volumes")
	fs.DurationVar(&o.ResyncPeriod, "resync", 15*time.Second, "periodic resync of every object (kube-controller-manager's --pvclaimbinder-sync-period)")
	fs.DurationVar(&o.AvailableDelay, "available-delay", 5*time.Second,
		"how long a new unbound volume waits for a claim before it is marked Available; a claim that takes it saves that write (0: mark at once, as kube-controller-manager does)")
	fs.StringVar(&o.ContentType, "kube-api-content-type", runtime.ContentTypeProtobuf,
		"media type of requests to the API server (kube-controller-manager's default; application/json also works)")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", ":8080", "address serving /metrics, /healthz and /readyz; empty disables it")
	fs.IntVar(&o.Verbosity, "v", 0, "log verbosity (klog)")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "run the Binder only while holding the coordination.k8s.io Lease, so that several replicas can run")
	fs.StringVar(&o.LeaseName, "leader-elect-resource-name", "volbind", "name of the leader-election Lease")
	fs.StringVar(&o.LeaseNS, "leader-elect-resource-namespace", "kube-system", "namespace of the leader-election Lease")
	fs.StringVar(&o.Identity, "leader-elect-identity", defaultIdentity(), "this replica's identity in the Lease")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long the Lease is valid after its last renewal")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader retries renewing the Lease before it gives up")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often to try to acquire or renew the Lease")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, flagError{err}
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("controller: unexpected arguments %q", fs.Args())
	}
	switch {
	case !(o.QPS > 0) || o.Burst < 1:
		return o, fmt.Errorf("controller: -kube-api-qps and -kube-api-burst must be positive, got %v and %d", o.QPS, o.Burst)
	case o.ClaimWorkers < 1 || o.VolumeWorkers < 1:
		return o, fmt.Errorf("controller: -claim-workers and -volume-workers must be at least 1, got %d and %d", o.ClaimWorkers, o.VolumeWorkers)
	case o.ResyncPeriod <= 0:
		return o, fmt.Errorf("controller: -resync must be positive, got %v", o.ResyncPeriod)
	case o.AvailableDelay < 0:
		return o, fmt.Errorf("controller: -available-delay must not be negative, got %v", o.AvailableDelay)
	case o.ContentType != runtime.ContentTypeProtobuf && o.ContentType != runtime.ContentTypeJSON:
		return o, fmt.Errorf("controller: -kube-api-content-type must be %s or %s, got %q", runtime.ContentTypeProtobuf, runtime.ContentTypeJSON, o.ContentType)
	case o.Verbosity < 0:
		return o, fmt.Errorf("controller: -v must not be negative, got %d", o.Verbosity)
	}
	if !o.LeaderElect {
		return o, nil
	}
	switch {
	case o.Identity == "" || o.LeaseName == "" || o.LeaseNS == "":
		return o, fmt.Errorf("controller: leader election needs a Lease name, namespace and identity")
	case o.RetryPeriod <= 0 || o.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(o.RetryPeriod)):
		return o, fmt.Errorf("controller: -leader-elect-renew-deadline (%v) must be more than %v times -leader-elect-retry-period (%v), which must be positive",
			o.RenewDeadline, leaderelection.JitterFactor, o.RetryPeriod)
	case o.LeaseDuration <= o.RenewDeadline:
		return o, fmt.Errorf("controller: -leader-elect-lease-duration (%v) must be more than -leader-elect-renew-deadline (%v)", o.LeaseDuration, o.RenewDeadline)
	}
	return o, nil
}

// restConfig builds the client configuration from the flags.
func (o controllerOptions) restConfig() (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("controller: client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(o.QPS), o.Burst
	cfg.UserAgent = "volbind-controller"
	// Protobuf for the built-in types (cheaper to encode and decode on both
	// ends); JSON stays accepted for answers that have no protobuf form.
	cfg.ContentType = o.ContentType
	cfg.AcceptContentTypes = o.ContentType
	if o.ContentType == runtime.ContentTypeProtobuf {
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}
	return cfg, nil
}

// runController is "volbind controller": it connects to the cluster and
// runs controllerMain until ctx is done.
func runController(ctx context.Context, o controllerOptions) error {
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("controller: client: %w", err)
	}
	var ln net.Listener
	if o.MetricsAddr != "" {
		if ln, err = net.Listen("tcp", o.MetricsAddr); err != nil {
			return fmt.Errorf("controller: metrics listener: %w", err)
		}
	}
	return controllerMain(ctx, cs, o, ln)
}
