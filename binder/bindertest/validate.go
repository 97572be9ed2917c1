package bindertest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// The update rules below are the subset of kube-apiserver's validation
// (k8s.io/kubernetes/pkg/apis/core/validation and storage/validation) that
// a volume binder can break: immutable fields it must never change. Object
// contents are otherwise not validated (a test may store a volume without
// a volume source).

// validateCreate checks what every create needs: a name (or generateName)
// and, for namespaced kinds, a namespace.
func validateCreate(kind Kind, o object) error {
	var errs field.ErrorList
	if o.GetName() == "" && o.GetGenerateName() == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	}
	if kind.namespaced() && o.GetNamespace() == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "namespace"), ""))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(kind.groupVersionKind().GroupKind(), o.GetName(), errs)
	}
	return nil
}

// validateUpdate checks next (the version an update would store) against
// the stored old version.
func validateUpdate(kind Kind, next, old object) error {
	var errs field.ErrorList
	if next.GetUID() != old.GetUID() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "uid"), next.GetUID(), "field is immutable"))
	}
	if old.GetDeletionTimestamp() != nil {
		added := sets.New(next.GetFinalizers()...).Difference(sets.New(old.GetFinalizers()...))
		if added.Len() > 0 {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "finalizers"),
				fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %q", sets.List(added))))
		}
	}
	switch n := next.(type) {
	case *v1.PersistentVolume:
		errs = append(errs, validateVolumeUpdate(n, old.(*v1.PersistentVolume))...)
	case *v1.PersistentVolumeClaim:
		errs = append(errs, validateClaimUpdate(n, old.(*v1.PersistentVolumeClaim))...)
	case *storagev1.StorageClass:
		errs = append(errs, validateClassUpdate(n, old.(*storagev1.StorageClass))...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(kind.groupVersionKind().GroupKind(), next.GetName(), errs)
	}
	return nil
}

func validateVolumeUpdate(next, old *v1.PersistentVolume) field.ErrorList {
	var errs field.ErrorList
	if !equalEncoding(&next.Spec.PersistentVolumeSource, &old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "spec.persistentvolumesource is immutable after creation"))
	}
	if ptr.Deref(next.Spec.VolumeMode, "") != ptr.Deref(old.Spec.VolumeMode, "") {
		errs = append(errs, field.Invalid(field.NewPath("spec", "volumeMode"), next.Spec.VolumeMode, "field is immutable"))
	}
	return errs
}

// betaStorageClassAnnotation is the claim annotation that named the class
// before spec.storageClassName existed.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// validateClaimUpdate: a claim's spec is immutable except that volumeName
// may be set once (by the binder), storageClassName may go from unset to a
// non-empty class (the retroactive default StorageClass assignment) and,
// for a bound claim, the storage request may grow and the volume
// attributes class may change.
func validateClaimUpdate(next, old *v1.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	// Shallow copies: only top-level fields are replaced below.
	n, o := next.Spec, old.Spec
	if o.VolumeName == "" {
		o.VolumeName = n.VolumeName
	}
	if classUpgradeFromNil(old, next) {
		o.StorageClassName = n.StorageClassName
	}
	oldSize, newSize := old.Spec.Resources.Requests[v1.ResourceStorage], next.Spec.Resources.Requests[v1.ResourceStorage]
	if next.Status.Phase == v1.ClaimBound {
		// The storage request is checked below; other requests must not
		// change.
		if !requestsEqualExceptStorage(n.Resources.Requests, o.Resources.Requests) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests"), "only the storage request of a bound claim may change"))
		}
		n.Resources.Requests, o.Resources.Requests = nil, nil
		n.VolumeAttributesClassName = o.VolumeAttributesClassName
	}
	if !equalEncoding(&n, &o) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
	}
	if newSize.Cmp(oldSize) < 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than previous value"))
	}
	return errs
}

// classUpgradeFromNil is kube-apiserver's validateStorageClassUpgradeFromNil
// (with RetroactiveDefaultStorageClass, GA since 1.28): the old claim has
// neither a class nor the beta class annotation and the new one names a
// non-empty class.
func classUpgradeFromNil(old, next *v1.PersistentVolumeClaim) bool {
	_, annotated := old.Annotations[betaStorageClassAnnotation]
	return !annotated && old.Spec.StorageClassName == nil &&
		next.Spec.StorageClassName != nil && *next.Spec.StorageClassName != ""
}

// requestsEqualExceptStorage compares two resource lists ignoring storage.
func requestsEqualExceptStorage(a, b v1.ResourceList) bool {
	count := func(l v1.ResourceList) int {
		n := len(l)
		if _, ok := l[v1.ResourceStorage]; ok {
			n--
		}
		return n
	}
	if count(a) != count(b) {
		return false
	}
	for name, q := range a {
		if name == v1.ResourceStorage {
			continue
		}
		if r, ok := b[name]; !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

func validateClassUpdate(next, old *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	if next.Provisioner != old.Provisioner {
		errs = append(errs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if !apiequality.Semantic.DeepEqual(next.Parameters, old.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if !apiequality.Semantic.DeepEqual(next.ReclaimPolicy, old.ReclaimPolicy) {
		errs = append(errs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	if !apiequality.Semantic.DeepEqual(next.VolumeBindingMode, old.VolumeBindingMode) {
		errs = append(errs, field.Forbidden(field.NewPath("volumeBindingMode"), "field is immutable"))
	}
	return errs
}
