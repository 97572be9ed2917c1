package bindertest

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A write is validated as kube-apiserver v1.37.2 validates it (the rules of
// k8s.io/kubernetes/pkg/apis/core/validation and storage/validation that
// apply to the kinds a Server holds, after the API's defaults): a write
// that kube-apiserver rejects fails with an apierrors Invalid error
// carrying the same field paths and error types, and leaves the store as
// it was. e2e/validation_test.go sends a table of objects and updates to
// both and compares the verdicts.
//
// What is not checked: the contents of the legacy in-tree volume sources
// other than hostPath, local, nfs, csi, gcePersistentDisk and
// awsElasticBlockStore (they count towards "exactly one volume source");
// pod containers beyond name, image and volume mounts; and admission
// (namespace existence, quotas).

// Validate reports whether kube-apiserver would accept obj (a
// *storagev1.StorageClass, *v1.Node, *v1.PersistentVolume,
// *v1.PersistentVolumeClaim or *v1.Pod) on create, after the API's
// defaults: nil, or the apierrors Invalid error it would return, naming
// the object and every field in error. It is the check Create and Seed
// make; obj is not modified. An unsupported type fails with BadRequest.
func Validate(obj runtime.Object) error {
	o, k, err := generic(obj)
	if err != nil {
		return err
	}
	c := deepCopy(o)
	applyDefaults(c)
	return validateNew(k, c)
}

// validateNew checks o, a create's or a seed's private copy with defaults
// applied.
func validateNew(kind Kind, o object) error {
	var errs field.ErrorList
	switch t := o.(type) {
	case *v1.PersistentVolume:
		errs = validateVolume(t)
	case *v1.PersistentVolumeClaim:
		errs = validateClaim(t)
	case *storagev1.StorageClass:
		errs = validateClass(t)
	case *v1.Node:
		errs = validateNode(t)
	case *v1.Pod:
		errs = validatePod(t)
	}
	return invalid(kind, o, errs)
}

// validateUpdate checks next, the version an update would store (defaults
// applied, system fields kept), against the stored old version. With
// metaValid it first tries specStillValid, which accepts without running
// the rules what they would accept.
func validateUpdate(kind Kind, next, old object, meta metaRule) error {
	if meta == metaValid && specStillValid(next, old) {
		return nil
	}
	var errs field.ErrorList
	if meta == revalidateMeta {
		errs = validateMetaUpdate(kind, next, old)
	}
	switch n := next.(type) {
	case *v1.PersistentVolume:
		errs = append(errs, validateVolume(n)...)
		errs = append(errs, validateVolumeUpdate(n, old.(*v1.PersistentVolume))...)
	case *v1.PersistentVolumeClaim:
		errs = append(errs, validateClaim(n)...)
		errs = append(errs, validateClaimUpdate(n, old.(*v1.PersistentVolumeClaim))...)
	case *storagev1.StorageClass:
		errs = append(errs, validateClass(n)...)
		errs = append(errs, validateClassUpdate(n, old.(*storagev1.StorageClass))...)
	case *v1.Node:
		errs = append(errs, validateNode(n)...)
		errs = append(errs, validateNodeUpdate(n, old.(*v1.Node))...)
	case *v1.Pod:
		errs = append(errs, validatePod(n)...)
		errs = append(errs, validatePodUpdate(n, old.(*v1.Pod))...)
	}
	return invalid(kind, next, errs)
}

// validateStatusUpdate checks next, the version a status update would
// store, against old.
func validateStatusUpdate(kind Kind, next, old object, meta metaRule) error {
	var errs field.ErrorList
	if meta == revalidateMeta {
		errs = validateMetaUpdate(kind, next, old)
	}
	switch n := next.(type) {
	case *v1.PersistentVolumeClaim:
		errs = append(errs, validateClaimStatus(n)...)
	case *v1.Node:
		errs = append(errs, validateNode(n)...)
		errs = append(errs, validateNodeUpdate(n, old.(*v1.Node))...)
	}
	return invalid(kind, next, errs)
}

// invalid returns kube-apiserver's Invalid error for errs, or nil.
func invalid(kind Kind, o object, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(kind.groupVersionKind().GroupKind(), o.GetName(), errs)
}

// metaOf returns the ObjectMeta of a supported object (every API type
// embeds one).
func metaOf(o object) *metav1.ObjectMeta {
	return o.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
}

// validateMeta checks an object's metadata as a create does. A name that
// will be generated from generateName is checked with a sample suffix, as
// the API checks the generated name.
func validateMeta(meta *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	if plainMetaValid(meta, namespaced) {
		return nil
	}
	return validateMetaFully(meta, namespaced)
}

// validateMetaFully is validateMeta without the shortcut of
// plainMetaValid: apimachinery's ValidateObjectMeta and the finalizer
// names.
func validateMetaFully(meta *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	m := meta
	if m.Name == "" && m.GenerateName != "" {
		c := *meta
		c.Name = c.GenerateName + "bcdfg"
		m = &c
	}
	path := field.NewPath("metadata")
	errs := apivalidation.ValidateObjectMeta(m, namespaced, apivalidation.NameIsDNSSubdomain, path)
	return append(errs, validateFinalizerNames(m.Finalizers, path.Child("finalizers"))...)
}

// standardFinalizers are the finalizer names that need no domain prefix.
var standardFinalizers = sets.New(string(v1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents)

func validateFinalizerNames(names []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range names {
		if !strings.Contains(f, "/") && !standardFinalizers.Has(f) {
			errs = append(errs, field.Invalid(path.Index(i), f, "a finalizer name without a domain must be one of the standard ones"))
		}
	}
	return errs
}

// validateMetaUpdate checks what every update checks: the metadata rules
// of a create on the new version and the immutable metadata. Every kind
// allows unconditional updates: an update without a resourceVersion is
// checked with the stored one, as the API does.
func validateMetaUpdate(kind Kind, next, old object) field.ErrorList {
	n, o := *metaOf(next), metaOf(old)
	if n.ResourceVersion == "" {
		n.ResourceVersion = o.ResourceVersion
	}
	path := field.NewPath("metadata")
	errs := validateMeta(&n, kind.namespaced())
	errs = append(errs, apivalidation.ValidateObjectMetaUpdate(&n, o, path)...)
	if old.GetDeletionTimestamp() != nil {
		added := sets.New(next.GetFinalizers()...).Difference(sets.New(old.GetFinalizers()...))
		if added.Len() > 0 {
			errs = append(errs, field.Forbidden(path.Child("finalizers"),
				fmt.Sprintf("finalizers %q cannot be added to an object that is being deleted", sets.List(added))))
		}
	}
	return errs
}

// immutable returns an Invalid error at path when next and old differ.
func immutable(next, old any, path *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(next, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, next, "field is immutable")}
}

// dnsSubdomain returns an Invalid error per problem of value as a DNS-1123
// subdomain (object, class and secret names).
func dnsSubdomain(value string, path *field.Path) field.ErrorList {
	if isDNS1123Subdomain(value, false) {
		return nil
	}
	return invalidEach(path, value, validation.IsDNS1123Subdomain(value))
}

// dnsLabel is dnsSubdomain for DNS-1123 labels (namespaces, container and
// volume names).
func dnsLabel(value string, path *field.Path) field.ErrorList {
	if isDNS1123Label(value) {
		return nil
	}
	return invalidEach(path, value, validation.IsDNS1123Label(value))
}

// invalidEach returns an Invalid error at path for each message of an
// apimachinery format check (util/validation's Is* functions) of value.
func invalidEach(path *field.Path, value string, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}
