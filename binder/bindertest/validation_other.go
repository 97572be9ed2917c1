package bindertest

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	classReclaimPolicies = sets.New(string(v1.PersistentVolumeReclaimDelete), string(v1.PersistentVolumeReclaimRetain))
	bindingModes         = sets.New(string(storagev1.VolumeBindingImmediate), string(storagev1.VolumeBindingWaitForFirstConsumer))
)

// validateClass checks a StorageClass as a create does.
func validateClass(sc *storagev1.StorageClass) field.ErrorList {
	errs := validateMeta(&sc.ObjectMeta, false)
	pp := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(pp, ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelName(strings.ToLower(sc.Provisioner), pp)...)
	}
	for k := range sc.Parameters {
		if k == "" {
			errs = append(errs, field.Invalid(field.NewPath("parameters"), k, "must not be empty"))
		}
	}
	if p := sc.ReclaimPolicy; p != nil && *p != "" && !classReclaimPolicies.Has(string(*p)) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), p, sets.List(classReclaimPolicies)))
	}
	bp := field.NewPath("volumeBindingMode")
	if m := sc.VolumeBindingMode; m == nil {
		errs = append(errs, field.Required(bp, ""))
	} else if !bindingModes.Has(string(*m)) {
		errs = append(errs, field.NotSupported(bp, m, sets.List(bindingModes)))
	}
	errs = append(errs, validateAllowedTopologies(sc.AllowedTopologies, field.NewPath("allowedTopologies"))...)
	return errs
}

func validateAllowedTopologies(terms []v1.TopologySelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range terms {
		tp := p.Index(i).Child("matchLabelExpressions")
		if len(t.MatchLabelExpressions) == 0 {
			errs = append(errs, field.Required(tp, "must have at least one label expression"))
		}
		for j, r := range t.MatchLabelExpressions {
			rp := tp.Index(j)
			errs = append(errs, metav1validation.ValidateLabelName(r.Key, rp.Child("key"))...)
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must specify at least one value"))
			}
		}
	}
	return errs
}

// validateClassUpdate: provisioner, parameters, reclaimPolicy and
// volumeBindingMode are immutable.
func validateClassUpdate(next, old *storagev1.StorageClass) field.ErrorList {
	errs := immutable(next.Parameters, old.Parameters, field.NewPath("parameters"))
	errs = append(errs, immutable(next.Provisioner, old.Provisioner, field.NewPath("provisioner"))...)
	errs = append(errs, immutable(next.ReclaimPolicy, old.ReclaimPolicy, field.NewPath("reclaimPolicy"))...)
	errs = append(errs, immutable(next.VolumeBindingMode, old.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
	return errs
}

// validateNode checks a Node's name, taints and resource quantities.
func validateNode(n *v1.Node) field.ErrorList {
	errs := validateMeta(&n.ObjectMeta, false)
	// The API reports taints under "metadata".
	tp := field.NewPath("metadata", "taints")
	for i, t := range n.Spec.Taints {
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, tp.Index(i).Child("key"))...)
		switch t.Effect {
		case v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
		case "":
			errs = append(errs, field.Required(tp.Index(i).Child("effect"), ""))
		default:
			errs = append(errs, field.NotSupported(tp.Index(i).Child("effect"), t.Effect,
				[]v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute}))
		}
	}
	for _, list := range []struct {
		name string
		l    v1.ResourceList
	}{{"capacity", n.Status.Capacity}, {"allocatable", n.Status.Allocatable}} {
		for name, q := range list.l {
			p := field.NewPath("status", list.name, string(name))
			errs = append(errs, nonNegativeQuantity(q, p)...)
			if isIntegerResource(name) && q.MilliValue()%1000 != 0 {
				errs = append(errs, field.Invalid(p, q.String(), "must be an integer"))
			}
		}
	}
	return errs
}

// isIntegerResource reports resources that only take whole numbers: pods
// and extended resources (domain-prefixed, outside kubernetes.io).
func isIntegerResource(name v1.ResourceName) bool {
	s := string(name)
	if name == v1.ResourcePods {
		return true
	}
	native := !strings.Contains(s, "/") || strings.Contains(s, "kubernetes.io/")
	return !native && !strings.HasPrefix(s, "requests.")
}

// validateNodeUpdate: a set providerID and podCIDRs cannot change.
func validateNodeUpdate(next, old *v1.Node) field.ErrorList {
	var errs field.ErrorList
	if len(old.Spec.PodCIDRs) > 0 && !apiequality.Semantic.DeepEqual(old.Spec.PodCIDRs, next.Spec.PodCIDRs) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), "a set podCIDR cannot change"))
	}
	if old.Spec.ProviderID != "" && old.Spec.ProviderID != next.Spec.ProviderID {
		errs = append(errs, field.Invalid(field.NewPath("spec", "providerID"), nil, "a set providerID cannot change"))
	}
	seen := make(map[v1.NodeAddress]bool)
	for i, a := range next.Status.Addresses {
		if seen[a] {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen[a] = true
	}
	return errs
}

// defaultAllocatable sets a node's allocatable to its capacity when it has
// none, as the API's defaults do. n is a private copy.
func defaultAllocatable(n *v1.Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	}
}
