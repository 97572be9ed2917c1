package binder

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// NewForClientset returns a Binder that writes through cs (NewClientsetAPI)
// and learns about PersistentVolumes, PersistentVolumeClaims and
// StorageClasses from the informers of f: it registers its handlers on
// them and makes Run wait until they have synced. It starts nothing: the
// caller starts f (f.Start) and calls Run, in either order. When
// cfg.Provisioning is set without Nodes, the nodes are read from f's node
// informer (ListerNodes), which Run waits for too. When cfg.Pods is nil, the
// pods are read from f's pod informer (IndexerPods), which NewForClientset
// trims with TrimPod and indexes with AddPodClaimIndex, so it must not have
// started and must not be shared with code that needs whole pods (give
// such code another factory, or set cfg.Pods); Run waits for it too.
//
// The Binder orders every object by its resourceVersion, which must be the
// integer an API server sets. client-go's fake clientset
// (fake.NewClientset) sets none: the Binder then ignores every object and
// binds nothing, logs the first ignored object as an error at the default
// verbosity and counts them all in volbind_binder_ignored_objects_total.
// Given versions, it still does not advance them on a write: the Binder
// then cannot keep its writes' answers and may write a binding twice, and
// reports those answers the same way (reason stale_answer). Test with
// binder/bindertest, an in-memory API server that sets them, or make the
// fake set them with bindertest.AdvanceVersions.
func NewForClientset(ctx context.Context, cs kubernetes.Interface, f informers.SharedInformerFactory, cfg Config) (*Binder, error) {
	if cs == nil || f == nil {
		return nil, errors.Join(ErrInvalidConfig, errors.New("binder: nil clientset or informer factory"))
	}
	if cfg.Provisioning != nil && cfg.Provisioning.Nodes == nil {
		pc := *cfg.Provisioning
		nodes := f.Core().V1().Nodes()
		pc.Nodes = ListerNodes{Lister: nodes.Lister()}
		cfg.Provisioning = &pc
		cfg.Synced = append(append([]toolscache.InformerSynced(nil), cfg.Synced...), nodes.Informer().HasSynced)
	}
	if cfg.Pods == nil {
		pods := f.Core().V1().Pods().Informer()
		if err := pods.SetTransform(TrimPod); err != nil {
			return nil, fmt.Errorf("binder: trim the pod informer: %w", err)
		}
		if err := AddPodClaimIndex(pods); err != nil {
			return nil, err
		}
		cfg.Pods = IndexerPods{Indexer: pods.GetIndexer()}
		cfg.Synced = append(append([]toolscache.InformerSynced(nil), cfg.Synced...), pods.HasSynced)
	}
	b, err := New(NewClientsetAPI(cs), cfg)
	if err != nil {
		return nil, err
	}
	for _, reg := range []struct {
		name     string
		informer toolscache.SharedIndexInformer
		handler  toolscache.ResourceEventHandler
	}{
		{"PersistentVolume", f.Core().V1().PersistentVolumes().Informer(), b.VolumeHandler()},
		{"PersistentVolumeClaim", f.Core().V1().PersistentVolumeClaims().Informer(), b.ClaimHandler()},
		{"StorageClass", f.Storage().V1().StorageClasses().Informer(), b.ClassHandler()},
	} {
		r, err := reg.informer.AddEventHandler(reg.handler)
		if err != nil {
			return nil, fmt.Errorf("binder: register %s handler: %w", reg.name, err)
		}
		b.cfg.Synced = append(b.cfg.Synced, r.HasSynced)
	}
	klog.FromContext(ctx).V(4).Info("Volume binder registered on informers")
	return b, nil
}

// TrimManagedFields is an informer transform (informers.WithTransform,
// SharedIndexInformer.SetTransform) that drops metadata.managedFields from
// every object before it is cached, as kube-controller-manager does with its
// informers. The Binder never reads them, the cache holds much less, and
// updates sent without them leave the server's managedFields as they are
// (the API server keeps the stored ones when a request carries none), so
// each write is smaller to send and cheaper to decode.
func TrimManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}
