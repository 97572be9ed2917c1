package bindertest

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePod checks the parts of a Pod a volume binder relies on: the
// metadata, the containers' names and images, the volumes (names, exactly
// one source, a claim name) and that volume mounts name a volume.
func validatePod(pod *v1.Pod) field.ErrorList {
	errs := validateMeta(&pod.ObjectMeta, true)
	spec := field.NewPath("spec")
	volumes, verrs := validatePodVolumes(pod.Spec.Volumes, spec.Child("volumes"))
	errs = append(errs, verrs...)
	cp := spec.Child("containers")
	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, field.Required(cp, ""))
	}
	names := sets.New[string]()
	for i, c := range pod.Spec.Containers {
		p := cp.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, dnsLabel(c.Name, p.Child("name"))...)
			if names.Has(c.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
			}
			names.Insert(c.Name)
		}
		if c.Image == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		for j, m := range c.VolumeMounts {
			mp := p.Child("volumeMounts").Index(j)
			if m.Name == "" {
				errs = append(errs, field.Required(mp.Child("name"), ""))
			} else if !volumes.Has(m.Name) {
				errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
			}
			if m.MountPath == "" {
				errs = append(errs, field.Required(mp.Child("mountPath"), ""))
			}
		}
	}
	return errs
}

// validatePodVolumes checks the volumes and returns the names of the
// valid ones.
func validatePodVolumes(vols []v1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, vol := range vols {
		vp := p.Index(i)
		var e field.ErrorList
		srcs := podVolumeSources(&vol.VolumeSource)
		if len(srcs) == 0 {
			e = append(e, field.Required(vp, "must specify a volume type"))
		}
		for _, name := range srcs[min(1, len(srcs)):] {
			e = append(e, field.Forbidden(vp.Child(name), "may not specify more than 1 volume type"))
		}
		if c := vol.PersistentVolumeClaim; c != nil && c.ClaimName == "" {
			e = append(e, field.Required(vp.Child("persistentVolumeClaim", "claimName"), ""))
		}
		if vol.Name == "" {
			e = append(e, field.Required(vp.Child("name"), ""))
		} else {
			e = append(e, dnsLabel(vol.Name, vp.Child("name"))...)
		}
		if names.Has(vol.Name) {
			e = append(e, field.Duplicate(vp.Child("name"), vol.Name))
		}
		if len(e) == 0 {
			names.Insert(vol.Name)
		}
		errs = append(errs, e...)
	}
	return names, errs
}

// podVolumeSources lists the sources set in s by JSON name, in the
// order the API checks them (the second and later ones are reported).
// The API reports downwardAPI as "downwarAPI".
func podVolumeSources(s *v1.VolumeSource) []string {
	var out []string
	for _, src := range []struct {
		name string
		set  bool
	}{
		{"emptyDir", s.EmptyDir != nil}, {"hostPath", s.HostPath != nil}, {"gitRepo", s.GitRepo != nil},
		{"gcePersistentDisk", s.GCEPersistentDisk != nil}, {"awsElasticBlockStore", s.AWSElasticBlockStore != nil},
		{"secret", s.Secret != nil}, {"nfs", s.NFS != nil}, {"iscsi", s.ISCSI != nil}, {"glusterfs", s.Glusterfs != nil},
		{"flocker", s.Flocker != nil}, {"persistentVolumeClaim", s.PersistentVolumeClaim != nil}, {"rbd", s.RBD != nil},
		{"cinder", s.Cinder != nil}, {"cephFS", s.CephFS != nil}, {"quobyte", s.Quobyte != nil},
		{"downwarAPI", s.DownwardAPI != nil}, {"fc", s.FC != nil}, {"flexVolume", s.FlexVolume != nil},
		{"configMap", s.ConfigMap != nil}, {"azureFile", s.AzureFile != nil}, {"vsphereVolume", s.VsphereVolume != nil},
		{"photonPersistentDisk", s.PhotonPersistentDisk != nil}, {"portworxVolume", s.PortworxVolume != nil},
		{"azureDisk", s.AzureDisk != nil}, {"storageos", s.StorageOS != nil}, {"projected", s.Projected != nil},
		{"scaleIO", s.ScaleIO != nil}, {"csi", s.CSI != nil}, {"ephemeral", s.Ephemeral != nil}, {"image", s.Image != nil},
	} {
		if src.set {
			out = append(out, src.name)
		}
	}
	return out
}

// validatePodUpdate: a pod's spec is immutable except container images,
// activeDeadlineSeconds, added tolerations and removed scheduling gates.
func validatePodUpdate(next, old *v1.Pod) field.ErrorList {
	// A shallow copy with its own containers slice: only top-level fields
	// and the containers' images are replaced below.
	n, o := next.Spec, old.Spec
	if len(n.Containers) == len(o.Containers) {
		n.Containers = slices.Clone(n.Containers)
		for i := range n.Containers {
			n.Containers[i].Image = o.Containers[i].Image
		}
	}
	n.ActiveDeadlineSeconds = o.ActiveDeadlineSeconds
	n.Tolerations = o.Tolerations
	n.SchedulingGates = o.SchedulingGates
	if !apiequality.Semantic.DeepEqual(n, o) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), "pod updates may only change container images, activeDeadlineSeconds, tolerations and scheduling gates")}
	}
	return nil
}

// defaultPodVolumes makes a volume without a source an emptyDir, as the
// API's defaults do. pod is a private copy.
func defaultPodVolumes(pod *v1.Pod) {
	for i := range pod.Spec.Volumes {
		if apiequality.Semantic.DeepEqual(pod.Spec.Volumes[i].VolumeSource, v1.VolumeSource{}) {
			pod.Spec.Volumes[i].EmptyDir = &v1.EmptyDirVolumeSource{}
		}
	}
}
