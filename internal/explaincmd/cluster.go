package explaincmd

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/pager"

	"github.com/volbind/volbind/internal/cli"
	"github.com/volbind/volbind/internal/explain"
)

// clientConfig is the cluster the flags select: the kubeconfig as `volbind
// controller` reads it (--kubeconfig, $KUBECONFIG, ~/.kube/config, the
// in-cluster configuration; --master overrides the server), with kubectl's
// --context.
func (o *options) clientConfig() clientcmd.ClientConfig {
	return cli.ClientConfigContext(o.kubeconfig, o.master, o.context)
}

// restConfig returns the client configuration and the context's
// namespace.
func (o *options) restConfig() (*rest.Config, string, error) {
	cc := o.clientConfig()
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("client configuration: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("client configuration: namespace: %w", err)
	}
	cfg.UserAgent = "volbind-explain"
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	// A handful of LISTs, paged: the client-side default of 5 requests a
	// second would make 100,000 volumes (200 pages) take 40 s.
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, ns, nil
}

// pageSize is the number of objects per page of a LIST, as kubectl's
// --chunk-size.
const pageSize = 500

// readCluster reads what the explanation of o needs with one paged LIST
// per kind, at once: volumes, claims and classes always; the pods of the
// object's namespace; nodes for a pod or a claim matched on a node; CSI
// drivers, storage capacities and CSINodes for a pod.
func (o *options) readCluster(ctx context.Context, cs kubernetes.Interface) (explain.Objects, error) {
	var objs explain.Objects
	g, ctx := errgroup.WithContext(ctx)
	list := func(what string, page func(context.Context, metav1.ListOptions) (runtime.Object, error), add func(runtime.Object) error) {
		g.Go(func() error {
			l, _, err := pager.New(page).List(ctx, metav1.ListOptions{Limit: pageSize})
			if err == nil {
				err = meta.EachListItem(l, add)
			}
			if err != nil {
				return fmt.Errorf("list %s: %w", what, err)
			}
			return nil
		})
	}
	list("persistentvolumes", func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().PersistentVolumes().List(ctx, opts)
	}, collect(&objs.Volumes))
	list("persistentvolumeclaims", func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, opts)
	}, collect(&objs.Claims))
	list("storageclasses", func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return cs.StorageV1().StorageClasses().List(ctx, opts)
	}, collect(&objs.Classes))
	list("pods", func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Pods(o.namespace).List(ctx, opts)
	}, collect(&objs.Pods))
	if o.kind == kindPod || len(o.nodes) > 0 {
		list("nodes", func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Nodes().List(ctx, opts)
		}, collect(&objs.Nodes))
	}
	if o.kind == kindPod {
		list("csidrivers", func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return cs.StorageV1().CSIDrivers().List(ctx, opts)
		}, collect(&objs.CSIDrivers))
		list("csistoragecapacities", func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return cs.StorageV1().CSIStorageCapacities(metav1.NamespaceAll).List(ctx, opts)
		}, collect(&objs.Capacities))
		list("csinodes", func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return cs.StorageV1().CSINodes().List(ctx, opts)
		}, collect(&objs.CSINodes))
	}
	return objs, g.Wait()
}

// collect returns a function that appends list items of type T to out;
// each runs on its own list's goroutine.
func collect[T interface {
	*v1.PersistentVolume | *v1.PersistentVolumeClaim | *storagev1.StorageClass | *v1.Pod | *v1.Node |
		*storagev1.CSIDriver | *storagev1.CSIStorageCapacity | *storagev1.CSINode
}](out *[]T) func(runtime.Object) error {
	return func(obj runtime.Object) error {
		t, ok := obj.(T)
		if !ok {
			return fmt.Errorf("unexpected list item %T", obj)
		}
		*out = append(*out, t)
		return nil
	}
}
