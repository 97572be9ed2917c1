package controller

import (
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/internal/dedup"
)

// cacheTransform is the informer transform of "volbind controller": it
// drops managedFields (binder.TrimManagedFields) and makes the objects an
// informer caches share their equal labels, annotations, capacities,
// requests, access modes and node affinities (internal/dedup) instead of
// holding one decoded copy each: a cluster's volumes carry a handful of
// distinct ones. The Binder never modifies cached objects.
func cacheTransform(shared *dedup.Table) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		obj, err := binder.TrimManagedFields(obj)
		if err != nil {
			return nil, err
		}
		if o, ok := obj.(runtime.Object); ok {
			shared.Share(o, dedup.All)
		}
		return obj, nil
	}
}
