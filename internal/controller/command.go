package controller

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/internal/cli"
)

// restConfig builds the client configuration from the flags.
func (o *controllerOptions) restConfig() (*rest.Config, error) {
	cfg, err := o.clientConfig().ClientConfig()
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

// Run is "volbind controller": it parses args (the flags after the command
// name) and runs the Binder against the cluster they select until ctx is
// done; --version prints the version to stdout instead, and stderr gets
// the usage. It returns flag.ErrHelp for --help and a cli.FlagError for a
// syntax error.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseControllerFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.showVersion != "false" {
		cli.PrintVersion(stdout, o.showVersion)
		return nil
	}
	return runController(ctx, o) // configures klog from the logging flags
}

// runController is "volbind controller" once its flags are parsed: it
// connects to the cluster, configures logging, metrics and serving, and
// runs controllerMain until ctx is done.
func runController(ctx context.Context, o controllerOptions) error {
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	if err := o.applyLogging(); err != nil {
		return err
	}
	applyContentionProfiling(o.Debugging)
	cli.ApplyGOGC(os.LookupEnv)
	// Taken after applyLogging: the logger of --logging-format.
	ctx = klog.NewContext(ctx, klog.Background())
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("controller: client: %w", err)
	}
	srv, err := newServing(&o)
	if err != nil {
		return err
	}
	return controllerMain(ctx, cs, o, prometheus.NewRegistry(), srv)
}
