// Command testprovisioner runs volbind's test CSI provisioner (package
// provisioner: sig-storage-lib-external-provisioner's controller, volumes
// of a test driver without storage) against a cluster until SIGINT or
// SIGTERM. hack/bench-provisioner.sh runs it beside the binder it measures.
//
//	testprovisioner -kubeconfig DIR/kubeconfig -driver csi.e2e.volbind.io -kube-api-qps 20 -kube-api-burst 30
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/e2e/provisioner"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	driver := flag.String("driver", "csi.e2e.volbind.io", "CSI driver name (the StorageClass's provisioner)")
	qps := flag.Float64("kube-api-qps", 20, "client QPS")
	burst := flag.Int("kube-api-burst", 30, "client burst")
	threads := flag.Int("threadiness", 0, "claim and volume workers (0: the library's default)")
	klog.InitFlags(nil)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *driver, float32(*qps), *burst, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "testprovisioner:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, driver string, qps float32, burst, threads int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = qps, burst
	cfg.UserAgent = "volbind-testprovisioner"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	p, err := provisioner.New(provisioner.Config{Driver: driver, Nodes: cs.CoreV1().Nodes()})
	if err != nil {
		return err
	}
	return provisioner.Run(ctx, cs, p, provisioner.ControllerConfig{Threadiness: threads})
}
