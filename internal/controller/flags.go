package controller

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json

	"github.com/volbind/volbind/internal/cli"
)

// defaultSecurePort is the HTTPS port of /metrics and the health checks.
// kube-controller-manager serves on 10257, kube-scheduler on 10259 and
// cloud-controller-manager on 10258; 10260 keeps clear of them when the
// program runs on a control-plane host.
const defaultSecurePort = 10260

// controllerOptions are the flags of "volbind controller". Where
// kube-controller-manager has the option, the flag has its name.
type controllerOptions struct {
	// Kubeconfig and Master override client-go's loading rules
	// ($KUBECONFIG, then ~/.kube/config, then the in-cluster
	// configuration).
	Kubeconfig    string
	Master        string
	QPS           float64
	Burst         int
	ClaimWorkers  int
	VolumeWorkers int
	// ResyncPeriod is kube-controller-manager's --pvclaimbinder-sync-period.
	ResyncPeriod time.Duration
	// AvailableDelay is binder.Config.AvailableDelay.
	AvailableDelay time.Duration
	// ContentType is the media type of requests and answers.
	ContentType string
	// Recycler scrubs released Recycle volumes with a recycler pod; false
	// needs no pod permissions and leaves such volumes Failed.
	Recycler bool
	// DynamicProvisioning is kube-controller-manager's
	// --enable-dynamic-provisioning: claims of a class whose provisioner
	// is external (a CSI driver's) are handed to it (provisioner
	// annotations, ExternalProvisioning event). The program has no
	// provisioner of its own.
	DynamicProvisioning bool

	LeaderElect   bool
	ResourceLock  string
	LeaseName     string
	LeaseNS       string
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration

	// Logs is component-base's logging configuration (--logging-format,
	// -v, --vmodule).
	Logs *logsapi.LoggingConfiguration
	// SecureServing, Authentication and Authorization are
	// k8s.io/apiserver's options, as kube-controller-manager has them.
	SecureServing  *apiserveroptions.SecureServingOptions
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
	// Debugging is --profiling and --contention-profiling (debugging.go).
	Debugging componentbaseconfig.DebuggingConfiguration

	// showVersion is the value of --version ("false", "true" or "raw").
	showVersion string
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

// newControllerOptions returns the defaults.
func newControllerOptions() controllerOptions {
	o := controllerOptions{
		QPS: 20, Burst: 30, ClaimWorkers: 32, VolumeWorkers: 8, ResyncPeriod: 15 * time.Second,
		AvailableDelay: 5 * time.Second, ContentType: runtime.ContentTypeProtobuf, Recycler: true, DynamicProvisioning: true,
		LeaderElect: true, ResourceLock: resourcelock.LeasesResourceLock, LeaseName: "volbind", LeaseNS: "kube-system",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Logs:           logsapi.NewLoggingConfiguration(),
		SecureServing:  apiserveroptions.NewSecureServingOptions(),
		Authentication: apiserveroptions.NewDelegatingAuthenticationOptions(),
		Authorization:  apiserveroptions.NewDelegatingAuthorizationOptions(),
		Debugging:      newDebugging(),
	}
	// As kube-controller-manager: the delegated checks use the in-cluster
	// configuration unless --authentication-kubeconfig and
	// --authorization-kubeconfig say otherwise; out of a cluster without
	// them, only the always-allowed paths are served.
	o.Authentication.RemoteKubeConfigFileOptional = true
	o.Authorization.RemoteKubeConfigFileOptional = true
	o.SecureServing.ServerCert.CertDirectory = "" // generate the self-signed certificate in memory
	o.SecureServing.ServerCert.PairName = "volbind"
	o.SecureServing.BindPort = defaultSecurePort
	return o
}

// controllerFlags returns the named flag sets of o, in the order of the
// help text.
func (o *controllerOptions) controllerFlags(deprecated *deprecatedFlags) cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	fs := fss.FlagSet("generic")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file. Empty: $KUBECONFIG, then ~/.kube/config, then the in-cluster configuration.")
	fs.StringVar(&o.Master, "master", o.Master, "The address of the Kubernetes API server (overrides any value in kubeconfig).")
	fs.Float64Var(&o.QPS, "kube-api-qps", o.QPS, "QPS to use while talking with kubernetes apiserver.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Burst to use while talking with kubernetes apiserver.")
	fs.StringVar(&o.ContentType, "kube-api-content-type", o.ContentType, "Content type of requests sent to apiserver (application/vnd.kubernetes.protobuf or application/json).")
	fs.StringVar(&o.showVersion, "version", "false", "--version, --version=raw prints version information and quits.")
	fs.Lookup("version").NoOptDefVal = "true"

	fs = fss.FlagSet("persistentvolume-binder")
	fs.DurationVar(&o.ResyncPeriod, "pvclaimbinder-sync-period", o.ResyncPeriod, "The period for syncing persistent volumes and persistent volume claims.")
	fs.IntVar(&o.ClaimWorkers, "claim-workers", o.ClaimWorkers, "Goroutines syncing claims (a worker waits for the API server most of the time).")
	fs.IntVar(&o.VolumeWorkers, "volume-workers", o.VolumeWorkers, "Goroutines syncing volumes.")
	fs.DurationVar(&o.AvailableDelay, "available-delay", o.AvailableDelay,
		"How long a new unbound volume waits for a claim before it is marked Available; a claim that takes it saves that write (0: mark at once, as kube-controller-manager does).")
	fs.BoolVar(&o.Recycler, "recycler", o.Recycler,
		"Scrub released volumes with reclaim policy Recycle with a recycler pod. False needs no pod permissions; such volumes then become Failed.")

	fs.BoolVar(&o.DynamicProvisioning, "enable-dynamic-provisioning", o.DynamicProvisioning,
		"Hand claims of a StorageClass with a provisioner to that (external) provisioner, as kube-controller-manager does; false leaves them Pending without a write.")

	fs = fss.FlagSet("leader election")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Run the binder only while holding the leader-election Lease, so that several replicas can run.")
	fs.StringVar(&o.ResourceLock, "leader-elect-resource-lock", o.ResourceLock, "The type of resource object that is used for locking during leader election. Only \"leases\" is supported.")
	fs.StringVar(&o.LeaseName, "leader-elect-resource-name", o.LeaseName, "The name of the Lease used for leader election.")
	fs.StringVar(&o.LeaseNS, "leader-elect-resource-namespace", o.LeaseNS, "The namespace of the Lease used for leader election.")
	fs.StringVar(&o.Identity, "leader-elect-identity", o.Identity, "This replica's identity in the Lease. Empty: the host name and a random suffix.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long non-leader candidates wait after a renewal before they may take the Lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader retries renewing the Lease before it stops leading.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How long clients wait between attempts to acquire or renew the Lease.")

	o.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	o.Authentication.AddFlags(fss.FlagSet("authentication"))
	o.Authorization.AddFlags(fss.FlagSet("authorization"))
	addDebuggingFlags(fss.FlagSet("debugging"), &o.Debugging)
	logsapi.AddFlags(o.Logs, fss.FlagSet("logs"))

	fs = fss.FlagSet("deprecated")
	fs.DurationVar(&deprecated.resync, "resync", o.ResyncPeriod, "Use --pvclaimbinder-sync-period.")
	_ = fs.MarkDeprecated("resync", "use --pvclaimbinder-sync-period; --resync goes away in the next release")
	fs.StringVar(&deprecated.metricsAddr, "metrics-addr", "", "Use --bind-address and --secure-port; an empty value is --secure-port=0.")
	_ = fs.MarkDeprecated("metrics-addr", "use --bind-address and --secure-port (HTTPS with delegated authentication); --metrics-addr goes away in the next release")
	return fss
}

// deprecatedFlags hold the values of the old flag names, which are mapped
// onto the new options after parsing.
type deprecatedFlags struct {
	resync      time.Duration
	metricsAddr string
}

const controllerUsage = `usage: volbind controller [flags]

Runs the binder against a cluster until SIGINT or SIGTERM. Disable kube-controller-manager's
persistentvolume-binder-controller (--controllers=*,-persistentvolume-binder-controller) so that the
two do not compete. Serves /metrics and /debug/pprof/ (authenticated and authorized by the API server), /healthz,
/livez and /readyz over HTTPS on --bind-address:--secure-port.
`

// parseControllerFlags parses and validates the flags. --help returns
// flag.ErrHelp, a syntax error a cli.FlagError; --version sets showVersion.
func parseControllerFlags(args []string, stderr io.Writer) (controllerOptions, error) {
	o := newControllerOptions()
	var dep deprecatedFlags
	fss := o.controllerFlags(&dep)
	fs := pflag.NewFlagSet("volbind controller", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), controllerUsage)
		cliflag.PrintSections(fs.Output(), fss, 0)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return o, flag.ErrHelp
		}
		return o, cli.FlagError{Err: err}
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("controller: unexpected arguments %q", fs.Args())
	}
	switch o.showVersion {
	case "false":
	case "true", "raw":
		return o, nil
	default:
		return o, cli.FlagError{Err: fmt.Errorf("invalid argument %q for \"--version\" flag: want true, false or raw", o.showVersion)}
	}
	if o.Identity == "" {
		o.Identity = defaultIdentity()
	}
	if err := dep.apply(fs, &o); err != nil {
		return o, err
	}
	return o, o.validate()
}

// apply maps the deprecated flags that were given onto o.
func (d deprecatedFlags) apply(fs *pflag.FlagSet, o *controllerOptions) error {
	if fs.Changed("resync") && !fs.Changed("pvclaimbinder-sync-period") {
		o.ResyncPeriod = d.resync
	}
	if !fs.Changed("metrics-addr") || fs.Changed("bind-address") || fs.Changed("secure-port") {
		return nil
	}
	if d.metricsAddr == "" {
		o.SecureServing.BindPort = 0
		return nil
	}
	host, port, err := net.SplitHostPort(d.metricsAddr)
	if err != nil {
		return fmt.Errorf("controller: --metrics-addr %q: %w", d.metricsAddr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("controller: --metrics-addr %q: port %q is not a number from 0 to 65535", d.metricsAddr, port)
	}
	o.SecureServing.BindPort = p
	if host != "" {
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("controller: --metrics-addr %q: host %q is not an IP address", d.metricsAddr, host)
		}
		o.SecureServing.BindAddress = ip
	}
	return nil
}

// validate checks the values together.
func (o *controllerOptions) validate() error {
	switch {
	case !(o.QPS > 0) || o.Burst < 1:
		return fmt.Errorf("controller: --kube-api-qps and --kube-api-burst must be positive, got %v and %d", o.QPS, o.Burst)
	case o.ClaimWorkers < 1 || o.VolumeWorkers < 1:
		return fmt.Errorf("controller: --claim-workers and --volume-workers must be at least 1, got %d and %d", o.ClaimWorkers, o.VolumeWorkers)
	case o.ResyncPeriod <= 0:
		return fmt.Errorf("controller: --pvclaimbinder-sync-period must be positive, got %v", o.ResyncPeriod)
	case o.AvailableDelay < 0:
		return fmt.Errorf("controller: --available-delay must not be negative, got %v", o.AvailableDelay)
	case o.ContentType != runtime.ContentTypeProtobuf && o.ContentType != runtime.ContentTypeJSON:
		return fmt.Errorf("controller: --kube-api-content-type must be %s or %s, got %q", runtime.ContentTypeProtobuf, runtime.ContentTypeJSON, o.ContentType)
	}
	var errs []error
	errs = append(errs, logsapi.Validate(o.Logs, nil, nil).ToAggregate())
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if !o.LeaderElect {
		return nil
	}
	switch {
	case o.ResourceLock != resourcelock.LeasesResourceLock:
		return fmt.Errorf("controller: --leader-elect-resource-lock must be %q (the only lock client-go still supports), got %q", resourcelock.LeasesResourceLock, o.ResourceLock)
	case o.Identity == "" || o.LeaseName == "" || o.LeaseNS == "":
		return fmt.Errorf("controller: leader election needs a Lease name, namespace and identity")
	case o.RetryPeriod <= 0 || o.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(o.RetryPeriod)):
		return fmt.Errorf("controller: --leader-elect-renew-deadline (%v) must be more than %v times --leader-elect-retry-period (%v), which must be positive",
			o.RenewDeadline, leaderelection.JitterFactor, o.RetryPeriod)
	case o.LeaseDuration <= o.RenewDeadline:
		return fmt.Errorf("controller: --leader-elect-lease-duration (%v) must be more than --leader-elect-renew-deadline (%v)", o.LeaseDuration, o.RenewDeadline)
	}
	return nil
}

// clientConfig is the client configuration the flags select
// (cli.ClientConfig): --kubeconfig, else $KUBECONFIG, else ~/.kube/config,
// else the in-cluster configuration; --master overrides the server.
func (o *controllerOptions) clientConfig() clientcmd.ClientConfig {
	return cli.ClientConfig(o.Kubeconfig, o.Master)
}

// applyLogging configures klog as the flags say. It changes process-wide
// state and may run once per process.
func (o *controllerOptions) applyLogging() error {
	logs.InitLogs()
	if err := logsapi.ValidateAndApply(o.Logs, nil); err != nil {
		return fmt.Errorf("controller: logging: %w", err)
	}
	return nil
}
