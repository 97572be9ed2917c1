package main

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	applyContentionProfiling(o.Debugging)
	applyControllerGOGC(os.LookupEnv)
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
