package bindertest

import (
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metaRule says whether an update's metadata is validated again.
type metaRule int

const (
	// revalidateMeta validates the metadata as kube-apiserver does.
	revalidateMeta metaRule = iota
	// metaValid skips that: every check of it would pass again. The
	// metadata equals, but for the resourceVersion and annotations that
	// pass apimachinery's annotation checks, that of a stored version
	// which passed validation (so its immutable fields are unchanged and
	// no finalizer is added).
	metaValid
)

// metaRuleFor returns metaValid when old was validated when it was
// stored (unvalidated: by SeedInvalid) and next's metadata equals old's but for
// the resourceVersion and the annotations, which are unchanged or pass
// apimachinery's ValidateAnnotations (the one check of the metadata rules
// that reads them). kube-apiserver validates the metadata of every
// update; apimachinery's metadata validation builds a field path per
// check whether or not it fails: 37 % of all allocations of the root
// BenchmarkBinderBindAll. Skipping it when the metadata is unchanged
// (every status update) took that benchmark (10,000 claims, 1 worker,
// 2 cores) from 3.13 M to 2.47 M allocations and from 84 to 72 µs per
// binding; the spec updates of a binding, which add annotations, skip it
// as well (see validateUpdate).
func metaRuleFor(next, old object, unvalidated bool, keys *annotationKeys) metaRule {
	if unvalidated {
		return revalidateMeta
	}
	n, o := metaOf(next), metaOf(old)
	if !sameMetaButAnnotations(n, o) {
		return revalidateMeta
	}
	switch {
	case equalStrings(n.Annotations, o.Annotations), keys.validMap(n.Annotations):
		return metaValid
	case keys.addedValid(n.Annotations, o.Annotations):
		// Every key of old was valid, and so is next as a whole.
		keys.rememberMap(n.Annotations)
		return metaValid
	}
	return revalidateMeta
}

// equalStrings is maps.Equal with the answer for the same map first: a
// status update keeps the stored version's labels and annotations.
func equalStrings(a, b map[string]string) bool {
	return len(a) == len(b) && (len(a) == 0 || mapPointer(a) == mapPointer(b) || maps.Equal(a, b))
}

// mapPointer returns m's runtime pointer, which tells maps apart.
func mapPointer[M ~map[K]V, K comparable, V any](m M) unsafe.Pointer {
	return reflect.ValueOf(m).UnsafePointer()
}

// annotationKeys remembers annotation keys that apimachinery's
// ValidateAnnotations accepted, a verdict that depends on the key alone: a
// Binder adds the same few keys to every volume and claim it binds, and
// the qualified-name check is a regular expression (6 % of a simulated
// binding's CPU, 2 cores). It is safe for concurrent use; it keeps at most
// maxAnnotationKeys keys, so that a client writing ever new keys cannot
// grow it.
type annotationKeys struct {
	valid sync.Map // string → struct{}
	n     atomic.Int32
	// maps holds annotation maps of new versions (their pointers) that
	// ValidateAnnotations accepts as a whole: a binding's writes send the
	// same few maps again and again (the server shares equal maps), and
	// one lookup answers for all their keys. BenchmarkBindingWrites
	// (400,000 bindings among 10,000 pairs and as many among 100,000, 2
	// cores): metaRuleFor's CPU 1.05 → 0.52 s. A map here stays alive, so
	// no other map can get its pointer; nMaps bounds it as n bounds valid.
	maps  sync.Map // unsafe.Pointer → struct{}
	nMaps atomic.Int32
}

// validMap reports whether m is a map that rememberMap was given.
func (k *annotationKeys) validMap(m map[string]string) bool {
	if len(m) == 0 {
		return false
	}
	_, ok := k.maps.Load(mapPointer(m))
	return ok
}

// rememberMap records that ValidateAnnotations accepts m, which nobody may
// modify from then on (the map of a version the server built).
func (k *annotationKeys) rememberMap(m map[string]string) {
	if len(m) == 0 || k.nMaps.Load() >= maxAnnotationKeys {
		return
	}
	if _, loaded := k.maps.LoadOrStore(mapPointer(m), struct{}{}); !loaded {
		k.nMaps.Add(1)
	}
}

// maxAnnotationKeys bounds an annotationKeys.
const maxAnnotationKeys = 1024

// addedValid reports whether apimachinery's ValidateAnnotations would
// accept next, given that it accepted old: the keys that old lacks are
// valid and the whole is within the size limit (the checks it makes).
// Only whether it finds an error matters (the full validation reports
// it), so its errors need no field path.
func (k *annotationKeys) addedValid(next, old map[string]string) bool {
	for key := range next {
		if _, ok := old[key]; ok {
			continue
		}
		if _, ok := k.valid.Load(key); ok {
			continue
		}
		if len(apivalidation.ValidateAnnotations(map[string]string{key: ""}, nil)) > 0 {
			return false
		}
		if k.n.Load() < maxAnnotationKeys {
			if _, loaded := k.valid.LoadOrStore(key, struct{}{}); !loaded {
				k.n.Add(1)
			}
		}
	}
	return apivalidation.ValidateAnnotationsSize(next) == nil
}

// sameMetaButAnnotations reports whether n and o are equal but for the
// resourceVersion and the annotations. It compares field by field:
// apimachinery's semantic DeepEqual allocated more than the validation it
// would save.
func sameMetaButAnnotations(n, o *metav1.ObjectMeta) bool {
	return n.Name == o.Name && n.GenerateName == o.GenerateName && n.Namespace == o.Namespace &&
		n.SelfLink == o.SelfLink && n.UID == o.UID && n.Generation == o.Generation &&
		n.CreationTimestamp.Equal(&o.CreationTimestamp) && equalTime(n.DeletionTimestamp, o.DeletionTimestamp) &&
		equalInt64(n.DeletionGracePeriodSeconds, o.DeletionGracePeriodSeconds) &&
		equalStrings(n.Labels, o.Labels) && slices.Equal(n.Finalizers, o.Finalizers) &&
		(len(n.OwnerReferences) == 0 && len(o.OwnerReferences) == 0 || reflect.DeepEqual(n.OwnerReferences, o.OwnerReferences)) &&
		(len(n.ManagedFields) == 0 && len(o.ManagedFields) == 0 || reflect.DeepEqual(n.ManagedFields, o.ManagedFields))
}

// replaceLocked records that next replaces the stored version old, or,
// when next is nil, that old was removed: a version that keeps old's
// metadata and spec (a status update's, a deletion's) stays marked when
// old was stored by SeedInvalid; a spec update that passed validation in
// full, or the removal, clears the mark. The caller holds s.mu.
func (s *Server) replaceLocked(old, next object, keepsSpec bool) {
	if _, ok := s.unvalidated[old]; !ok {
		return
	}
	delete(s.unvalidated, old)
	if next != nil && keepsSpec {
		s.unvalidated[next] = struct{}{}
	}
}

func equalTime(a, b *metav1.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(b)
}

func equalInt64(a, b *int64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
