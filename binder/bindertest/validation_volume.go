package bindertest

import (
	"path"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	accessModes   = sets.New(v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany, v1.ReadWriteOncePod)
	reclaimPolicy = sets.New(v1.PersistentVolumeReclaimDelete, v1.PersistentVolumeReclaimRecycle, v1.PersistentVolumeReclaimRetain)
	volumeModes   = sets.New(v1.PersistentVolumeBlock, v1.PersistentVolumeFilesystem)
	hostPathTypes = sets.New(v1.HostPathUnset, v1.HostPathDirectoryOrCreate, v1.HostPathDirectory, v1.HostPathFileOrCreate, v1.HostPathFile, v1.HostPathSocket, v1.HostPathCharDev, v1.HostPathBlockDev)
)

// mountOptionsOK is the message of mount options on a volume type that
// takes none.
const mountOptionsOK = "mount options are only allowed for volume types that support them"

// mountOptionsAnnotation is the beta annotation of a volume's mount options.
const mountOptionsAnnotation = "volume.beta.kubernetes.io/mount-options"

// validateVolume checks a PersistentVolume as a create does.
func validateVolume(pv *v1.PersistentVolume) field.ErrorList {
	errs := validateMeta(&pv.ObjectMeta, false)
	spec := specPath
	errs = append(errs, validateAccessModes(pv.Spec.AccessModes, specAccessModes, "")...)
	errs = append(errs, validateCapacity(pv.Spec.Capacity, specCapacity)...)
	if p := pv.Spec.PersistentVolumeReclaimPolicy; p != "" && !reclaimPolicy.Has(p) {
		errs = append(errs, field.NotSupported(spec.Child("persistentVolumeReclaimPolicy"), p, sets.List(reclaimPolicy)))
	}
	hasAffinity := pv.Spec.NodeAffinity != nil
	if hasAffinity {
		errs = append(errs, validateVolumeNodeAffinity(pv.Spec.NodeAffinity, specNodeAffinity)...)
	}
	errs = append(errs, validateVolumeSources(&pv.Spec, hasAffinity)...)
	if hp := pv.Spec.HostPath; hp != nil && path.Clean(hp.Path) == "/" && pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(spec.Child("persistentVolumeReclaimPolicy"), "a hostPath volume of / cannot be recycled"))
	}
	if c := pv.Spec.StorageClassName; c != "" {
		errs = append(errs, dnsSubdomain(c, specStorageClassName)...)
	}
	if m := pv.Spec.VolumeMode; m != nil && !volumeModes.Has(*m) {
		errs = append(errs, field.NotSupported(spec.Child("volumeMode"), *m, sets.List(volumeModes)))
	}
	if vac := pv.Spec.VolumeAttributesClassName; vac != nil {
		if *vac == "" {
			errs = append(errs, field.Required(spec.Child("volumeAttributesClassName"), "must not be empty when set"))
		} else {
			errs = append(errs, dnsSubdomain(*vac, spec.Child("volumeAttributesClassName"))...)
		}
		if pv.Spec.CSI == nil {
			errs = append(errs, field.Required(spec.Child("csi"), "a volume attributes class needs a CSI volume"))
		}
	}
	if _, ok := pv.Annotations[mountOptionsAnnotation]; ok && !mountOptionsAllowed(&pv.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations", mountOptionsAnnotation), mountOptionsOK))
	}
	return errs
}

func mountOptionsAllowed(s *v1.PersistentVolumeSpec) bool {
	return s.GCEPersistentDisk != nil || s.AWSElasticBlockStore != nil || s.Glusterfs != nil || s.NFS != nil ||
		s.RBD != nil || s.Quobyte != nil || s.ISCSI != nil || s.Cinder != nil || s.CephFS != nil ||
		s.AzureFile != nil || s.VsphereVolume != nil || s.AzureDisk != nil || s.PhotonPersistentDisk != nil
}

// validateAccessModes checks a volume's or a claim's access modes.
func validateAccessModes(modes []v1.PersistentVolumeAccessMode, p *field.Path, requiredMsg string) field.ErrorList {
	var errs field.ErrorList
	if len(modes) == 0 {
		errs = append(errs, field.Required(p, requiredMsg))
	}
	rwop, other := false, false
	for _, m := range modes {
		switch {
		case !accessModes.Has(m):
			errs = append(errs, field.NotSupported(p, m, sets.List(accessModes)))
		case m == v1.ReadWriteOncePod:
			rwop = true
		default:
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "ReadWriteOncePod cannot be combined with other access modes"))
	}
	return errs
}

// validateCapacity checks a volume's capacity: exactly one entry,
// storage, positive.
func validateCapacity(c v1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(c) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	if _, ok := c[v1.ResourceStorage]; !ok || len(c) > 1 {
		errs = append(errs, field.NotSupported(p, c, []v1.ResourceName{v1.ResourceStorage}))
	}
	for name, q := range c {
		if q.Sign() > 0 && q.Value() >= 0 {
			continue // what the checks below accept, without the key's path
		}
		kp := p.Key(string(name))
		errs = append(errs, validQuantity(q, kp)...)
		errs = append(errs, positiveQuantity(q, kp)...)
	}
	return errs
}

// validQuantity rejects a quantity whose integer value is negative.
func validQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Value() < 0 {
		return field.ErrorList{field.Invalid(p, q.Value(), "must be a valid resource quantity")}
	}
	return nil
}

func positiveQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than zero")}
	}
	return nil
}

func nonNegativeQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than or equal to 0")}
	}
	return nil
}

func validateVolumeNodeAffinity(a *v1.VolumeNodeAffinity, p *field.Path) field.ErrorList {
	if a.Required != nil && nodeSelectorValid(a.Required) {
		return nil
	}
	if a.Required == nil {
		return field.ErrorList{field.Required(p.Child("required"), "must specify required node constraints")}
	}
	return validateNodeSelector(a.Required, p.Child("required"))
}

func validateNodeSelector(s *v1.NodeSelector, p *field.Path) field.ErrorList {
	terms := p.Child("nodeSelectorTerms")
	if len(s.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(terms, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, t := range s.NodeSelectorTerms {
		for j, r := range t.MatchExpressions {
			errs = append(errs, validateNodeSelectorRequirement(r, terms.Index(i).Child("matchExpressions").Index(j))...)
		}
		for j, r := range t.MatchFields {
			errs = append(errs, validateNodeFieldRequirement(r, terms.Index(i).Child("matchFields").Index(j))...)
		}
	}
	return errs
}

func validateNodeSelectorRequirement(r v1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "operators In and NotIn need values"))
		}
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(p.Child("values"), "operators Exists and DoesNotExist take no values"))
		}
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "operators Gt and Lt need exactly one value"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	errs = append(errs, metav1validation.ValidateLabelName(r.Key, p.Child("key"))...)
	for i, v := range r.Values {
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			errs = append(errs, invalidEach(p.Child("values").Index(i), v, msgs)...)
		}
	}
	return errs
}

func validateNodeFieldRequirement(r v1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "a node field selector with In or NotIn needs exactly one value"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	if r.Key != "metadata.name" {
		errs = append(errs, field.Invalid(p.Child("key"), r.Key, "not a valid field selector key"))
	} else {
		for i, v := range r.Values {
			errs = append(errs, dnsSubdomain(v, p.Child("values").Index(i))...)
		}
	}
	return errs
}

// volumeSource is one of a PersistentVolume's source fields: its JSON
// name, whether it is set and the check of its contents (nil: none).
type volumeSource struct {
	name  string
	set   func(*v1.PersistentVolumeSpec) bool
	check func(s *v1.PersistentVolumeSpec, hasAffinity bool, p *field.Path) field.ErrorList
}

// validateVolumeSources checks that exactly one source is set, in the
// API's order: a second one is forbidden, none is required.
func validateVolumeSources(s *v1.PersistentVolumeSpec, hasAffinity bool) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for i, src := range volumeSources {
		if !src.set(s) {
			continue
		}
		if n > 0 && src.name != "flexVolume" {
			errs = append(errs, field.Forbidden(sourcePaths[i], "may not specify more than 1 volume type"))
			continue
		}
		n++
		if src.check != nil {
			errs = append(errs, src.check(s, hasAffinity, sourcePaths[i])...)
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(specPath, "must specify a volume type"))
	}
	return errs
}

// volumeSources are the sources in the API's order. A table, not a
// function building closures over the spec: that allocated seven times
// per volume created.
var volumeSources = [...]volumeSource{
	{"hostPath", func(s *v1.PersistentVolumeSpec) bool { return s.HostPath != nil },
		func(s *v1.PersistentVolumeSpec, _ bool, p *field.Path) field.ErrorList {
			return validateHostPath(s.HostPath, p)
		}},
	{"gcePersistentDisk", func(s *v1.PersistentVolumeSpec) bool { return s.GCEPersistentDisk != nil },
		func(s *v1.PersistentVolumeSpec, _ bool, _ *field.Path) field.ErrorList {
			// The API reports this source's errors under "persistentDisk".
			return required(s.GCEPersistentDisk.PDName, field.NewPath("spec", "persistentDisk", "pdName"))
		}},
	{"awsElasticBlockStore", func(s *v1.PersistentVolumeSpec) bool { return s.AWSElasticBlockStore != nil },
		func(s *v1.PersistentVolumeSpec, _ bool, p *field.Path) field.ErrorList {
			return required(s.AWSElasticBlockStore.VolumeID, p.Child("volumeID"))
		}},
	{"glusterfs", func(s *v1.PersistentVolumeSpec) bool { return s.Glusterfs != nil }, nil},
	{"flocker", func(s *v1.PersistentVolumeSpec) bool { return s.Flocker != nil }, nil},
	{"nfs", func(s *v1.PersistentVolumeSpec) bool { return s.NFS != nil },
		func(s *v1.PersistentVolumeSpec, _ bool, p *field.Path) field.ErrorList { return validateNFS(s.NFS, p) }},
	{"rbd", func(s *v1.PersistentVolumeSpec) bool { return s.RBD != nil }, nil},
	{"quobyte", func(s *v1.PersistentVolumeSpec) bool { return s.Quobyte != nil }, nil},
	{"cephFS", func(s *v1.PersistentVolumeSpec) bool { return s.CephFS != nil }, nil},
	{"iscsi", func(s *v1.PersistentVolumeSpec) bool { return s.ISCSI != nil }, nil},
	{"cinder", func(s *v1.PersistentVolumeSpec) bool { return s.Cinder != nil }, nil},
	{"fc", func(s *v1.PersistentVolumeSpec) bool { return s.FC != nil }, nil},
	{"flexVolume", func(s *v1.PersistentVolumeSpec) bool { return s.FlexVolume != nil }, nil},
	{"azureFile", func(s *v1.PersistentVolumeSpec) bool { return s.AzureFile != nil }, nil},
	{"vsphereVolume", func(s *v1.PersistentVolumeSpec) bool { return s.VsphereVolume != nil }, nil},
	{"photonPersistentDisk", func(s *v1.PersistentVolumeSpec) bool { return s.PhotonPersistentDisk != nil }, nil},
	{"portworxVolume", func(s *v1.PersistentVolumeSpec) bool { return s.PortworxVolume != nil }, nil},
	{"azureDisk", func(s *v1.PersistentVolumeSpec) bool { return s.AzureDisk != nil }, nil},
	{"scaleIO", func(s *v1.PersistentVolumeSpec) bool { return s.ScaleIO != nil }, nil},
	{"local", func(s *v1.PersistentVolumeSpec) bool { return s.Local != nil },
		func(s *v1.PersistentVolumeSpec, hasAffinity bool, p *field.Path) field.ErrorList {
			errs := validateLocalPath(s.Local.Path, p.Child("path"))
			if !hasAffinity {
				errs = append(errs, field.Required(field.NewPath("spec", "nodeAffinity"), "a local volume needs node affinity"))
			}
			return errs
		}},
	{"storageos", func(s *v1.PersistentVolumeSpec) bool { return s.StorageOS != nil }, nil},
	{"csi", func(s *v1.PersistentVolumeSpec) bool { return s.CSI != nil },
		func(s *v1.PersistentVolumeSpec, _ bool, p *field.Path) field.ErrorList {
			return validateCSISource(s.CSI, p)
		}},
}

func required(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
}

func validateHostPath(hp *v1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	errs := validateLocalPath(hp.Path, p.Child("path"))
	if len(errs) == 0 && hp.Type != nil && !hostPathTypes.Has(*hp.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), hp.Type, sets.List(hostPathTypes)))
	}
	return errs
}

// validateLocalPath checks a hostPath or local path: set, without "..".
func validateLocalPath(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	for _, part := range strings.Split(v, "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(p, v, "must not contain '..'")}
		}
	}
	return nil
}

func validateNFS(nfs *v1.NFSVolumeSource, p *field.Path) field.ErrorList {
	errs := required(nfs.Server, p.Child("server"))
	errs = append(errs, required(nfs.Path, p.Child("path"))...)
	if !path.IsAbs(nfs.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return errs
}

func validateCSISource(csi *v1.CSIPersistentVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !isCSIDriverName(csi.Driver) {
		errs = validateCSIDriverName(csi.Driver, p.Child("driver"))
	}
	if csi.VolumeHandle == "" {
		errs = append(errs, field.Required(p.Child("volumeHandle"), ""))
	}
	for _, ref := range []struct {
		name string
		ref  *v1.SecretReference
	}{
		{"controllerPublishSecretRef", csi.ControllerPublishSecretRef},
		{"controllerExpandSecretRef", csi.ControllerExpandSecretRef},
		{"nodePublishSecretRef", csi.NodePublishSecretRef},
		{"nodeExpandSecretRef", csi.NodeExpandSecretRef},
	} {
		if ref.ref == nil {
			continue
		}
		rp := p.Child(ref.name)
		if ref.ref.Name == "" {
			errs = append(errs, field.Required(rp.Child("name"), ""))
		} else {
			errs = append(errs, dnsSubdomain(ref.ref.Name, rp.Child("name"))...)
		}
		if ref.ref.Namespace == "" {
			errs = append(errs, field.Required(rp.Child("namespace"), ""))
		} else {
			errs = append(errs, dnsLabel(ref.ref.Namespace, rp.Child("namespace"))...)
		}
	}
	return errs
}

// validateCSIDriverName checks a CSI driver or provisioner-like name: set,
// at most 63 characters, a DNS-1123 subdomain ignoring case.
func validateCSIDriverName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(p, "", 63))
	}
	return append(errs, invalidEach(p, name, validation.IsDNS1123Subdomain(strings.ToLower(name)))...)
}

// validateVolumeUpdate checks the immutable parts of a volume: its source
// (a CSI volume may gain a controllerExpandSecretRef), its volume mode and
// a set volume attributes class, which cannot be unset.
func validateVolumeUpdate(next, old *v1.PersistentVolume) field.ErrorList {
	var errs field.ErrorList
	src := next.Spec.PersistentVolumeSource
	if old.Spec.CSI != nil && old.Spec.CSI.ControllerExpandSecretRef == nil && src.CSI != nil && src.CSI.ControllerExpandSecretRef != nil {
		csi := *src.CSI
		csi.ControllerExpandSecretRef = nil
		src.CSI = &csi
	}
	if !apiequality.Semantic.DeepEqual(src, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "the volume source cannot change after creation"))
	}
	// The API reports this path without "spec".
	errs = append(errs, immutable(next.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	// MutablePVNodeAffinity is off by default in v1.37: a set node affinity
	// may only move from the beta zone and region labels to the GA ones.
	// The API reports this path without "spec".
	if old.Spec.NodeAffinity != nil && !apiequality.Semantic.DeepEqual(gaAffinity(next.Spec.NodeAffinity), gaAffinity(old.Spec.NodeAffinity)) {
		errs = append(errs, field.Invalid(field.NewPath("nodeAffinity"), next.Spec.NodeAffinity, "field is immutable, except for a move from the beta zone and region labels to the GA ones"))
	}
	if old.Spec.VolumeAttributesClassName != nil && next.Spec.VolumeAttributesClassName == nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "a set volume attributes class cannot be unset"))
	}
	return errs
}

// betaToGA maps the beta topology labels to their GA names.
var betaToGA = map[string]string{
	v1.LabelFailureDomainBetaZone:   v1.LabelTopologyZone,
	v1.LabelFailureDomainBetaRegion: v1.LabelTopologyRegion,
}

// gaAffinity returns a copy of a with beta topology label keys replaced by
// the GA ones.
func gaAffinity(a *v1.VolumeNodeAffinity) *v1.VolumeNodeAffinity {
	if a == nil || a.Required == nil {
		return a
	}
	c := a.DeepCopy()
	for i := range c.Required.NodeSelectorTerms {
		exprs := c.Required.NodeSelectorTerms[i].MatchExpressions
		for j := range exprs {
			if ga, ok := betaToGA[exprs[j].Key]; ok {
				exprs[j].Key = ga
			}
		}
	}
	return c
}
