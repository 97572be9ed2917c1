package bindertest

import (
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// betaStorageClassAnnotation is the claim annotation that named the class
// before spec.storageClassName existed.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// validateClaim checks a PersistentVolumeClaim as a create does.
func validateClaim(pvc *v1.PersistentVolumeClaim) field.ErrorList {
	errs := validateMeta(&pvc.ObjectMeta, true)
	spec := specPath
	errs = append(errs, validateAccessModes(pvc.Spec.AccessModes, specAccessModes, "at least 1 access mode is required")...)
	if pvc.Spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pvc.Spec.Selector,
			metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
	}
	// The API reports the storage request as spec.resources[storage].
	sp := specRequestedStorage
	if q, ok := pvc.Spec.Resources.Requests[v1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(sp, ""))
	} else if e := positiveQuantity(q, sp); len(e) > 0 {
		errs = append(errs, e...)
	} else {
		errs = append(errs, nonNegativeQuantity(q, sp)...)
	}
	if c := pvc.Spec.StorageClassName; c != nil && *c != "" {
		errs = append(errs, dnsSubdomain(*c, specStorageClassName)...)
	}
	if m := pvc.Spec.VolumeMode; m != nil && !volumeModes.Has(*m) {
		errs = append(errs, field.NotSupported(spec.Child("volumeMode"), *m, sets.List(volumeModes)))
	}
	if ds := pvc.Spec.DataSource; ds != nil {
		errs = append(errs, required(ds.Name, spec.Child("dataSource", "name"))...)
		errs = append(errs, required(ds.Kind, spec.Child("dataSource", "kind"))...)
	}
	if ds := pvc.Spec.DataSourceRef; ds != nil {
		errs = append(errs, required(ds.Name, spec.Child("dataSourceRef", "name"))...)
		errs = append(errs, required(ds.Kind, spec.Child("dataSourceRef", "kind"))...)
	}
	if vac := pvc.Spec.VolumeAttributesClassName; vac != nil && *vac != "" {
		errs = append(errs, dnsSubdomain(*vac, spec.Child("volumeAttributesClassName"))...)
	}
	return errs
}

// validateClaimUpdate checks what a claim update may change: volumeName
// once; storageClassName from unset (or from the beta annotation); and,
// for a bound claim, the storage request (not below status.capacity) and
// the volume attributes class.
func validateClaimUpdate(next, old *v1.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	// Shallow copies: only top-level fields (and a fresh requests map)
	// are replaced below.
	n, o := next.Spec, old.Spec
	if o.VolumeName == "" {
		o.VolumeName = n.VolumeName
	}
	if classFromAnnotation(old, next) {
		n.StorageClassName = nil
	} else {
		oldAnn, newAnn := old.Annotations[betaStorageClassAnnotation], next.Annotations[betaStorageClassAnnotation]
		if oldAnn != newAnn {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations", betaStorageClassAnnotation), newAnn, "field is immutable"))
		}
		if classFromNil(old, next) {
			n.StorageClassName = o.StorageClassName
		}
	}
	if next.Status.Phase == v1.ClaimBound {
		if n.Resources.Requests != nil {
			r := make(v1.ResourceList, len(n.Resources.Requests))
			for k, q := range n.Resources.Requests {
				r[k] = q
			}
			r[v1.ResourceStorage] = old.Spec.Resources.Requests[v1.ResourceStorage]
			n.Resources.Requests = r
		}
		n.VolumeAttributesClassName = o.VolumeAttributesClassName
	}
	if !apiequality.Semantic.DeepEqual(n, o) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "only resources.requests and volumeAttributesClassName of a bound claim may change after creation"))
	}
	oldSize, newSize := old.Spec.Resources.Requests[v1.ResourceStorage], next.Spec.Resources.Requests[v1.ResourceStorage]
	statusSize := old.Status.Capacity[v1.ResourceStorage]
	if newSize.Cmp(oldSize) < 0 && newSize.Cmp(statusSize) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "must be more than status.capacity"))
	}
	// The API reports this path without "spec".
	errs = append(errs, immutable(next.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Status.CurrentVolumeAttributesClassName != nil && !apiequality.Semantic.DeepEqual(old.Spec.VolumeAttributesClassName, next.Spec.VolumeAttributesClassName) {
		if vac := next.Spec.VolumeAttributesClassName; vac == nil || *vac == "" {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "cannot be unset once status.currentVolumeAttributesClassName is set"))
		}
	}
	return errs
}

// classFromAnnotation reports the move of a class from the old claim's
// beta annotation to spec.storageClassName.
func classFromAnnotation(old, next *v1.PersistentVolumeClaim) bool {
	oldAnn, oldHas := old.Annotations[betaStorageClassAnnotation]
	newAnn, newHas := next.Annotations[betaStorageClassAnnotation]
	return oldHas && old.Spec.StorageClassName == nil &&
		next.Spec.StorageClassName != nil && *next.Spec.StorageClassName == oldAnn &&
		(!newHas || newAnn == oldAnn)
}

// classFromNil reports the setting of a class on a claim that had none
// (the retroactive default StorageClass assignment).
func classFromNil(old, next *v1.PersistentVolumeClaim) bool {
	oldAnn, oldHas := old.Annotations[betaStorageClassAnnotation]
	return next.Spec.StorageClassName != nil && old.Spec.StorageClassName == nil &&
		(!oldHas || *next.Spec.StorageClassName == oldAnn)
}

// validateClaimStatus checks a claim status update's new version. The
// field paths of its errors are built only for a quantity in error: a
// valid status (every status update of a binding) allocates nothing.
func validateClaimStatus(pvc *v1.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	if len(pvc.Spec.AccessModes) == 0 {
		// The API capitalizes "Spec" in this one path.
		errs = append(errs, field.Required(field.NewPath("Spec", "accessModes"), ""))
	}
	for name, q := range pvc.Status.Capacity {
		if q.Value() < 0 {
			errs = append(errs, validQuantity(q, field.NewPath("status", "capacity").Key(string(name)))...)
		}
	}
	for name, q := range pvc.Status.AllocatedResources {
		if q.Value() >= 0 && q.Sign() >= 0 {
			continue
		}
		p := field.NewPath("status", "allocatedResources").Key(string(name))
		if e := validQuantity(q, p); len(e) > 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, nonNegativeQuantity(q, p)...)
		}
	}
	return errs
}

// defaultDataSourceRef copies a claim's dataSource to an unset
// dataSourceRef, as the API does on create. pvc is a private copy.
func defaultDataSourceRef(pvc *v1.PersistentVolumeClaim) {
	if ds := pvc.Spec.DataSource; ds != nil && pvc.Spec.DataSourceRef == nil {
		pvc.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: ds.APIGroup, Kind: ds.Kind, Name: ds.Name}
	}
}
