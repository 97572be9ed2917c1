package main

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/klog/v2"
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

// newProcessRegistry returns the registry of the process: Go and process
// collectors, client-go's REST client and leader-election metrics. It
// registers the adapters with client-go, which keeps the first ones it is
// given for the life of the process: call it once, from the program.
func newProcessRegistry() (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	rest, err := newRESTClientMetrics(reg)
	if err != nil {
		return nil, err
	}
	clientmetrics.Register(rest.registerOpts())
	leader, err := newLeaderMetrics(reg)
	if err != nil {
		return nil, err
	}
	leaderelection.SetProvider(leader)
	return reg, nil
}

// runController is "volbind controller": it connects to the cluster,
// configures logging, metrics and serving, and runs controllerMain until
// ctx is done.
func runController(ctx context.Context, o controllerOptions) error {
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	if err := o.applyLogging(); err != nil {
		return err
	}
	// Taken after applyLogging: the logger of --logging-format.
	ctx = klog.NewContext(ctx, klog.Background())
	reg, err := newProcessRegistry()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("controller: client: %w", err)
	}
	srv, err := newServing(&o)
	if err != nil {
		return err
	}
	return controllerMain(ctx, cs, o, reg, srv)
}
