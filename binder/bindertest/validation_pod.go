package bindertest

import (
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
		switch n := countPodVolumeSources(&vol.VolumeSource); {
		case n == 0:
			e = append(e, field.Required(vp, "must specify a volume type"))
		case n > 1:
			e = append(e, field.Forbidden(vp, "may not specify more than 1 volume type"))
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

// countPodVolumeSources counts the sources of a pod volume that volbind
// tests use; the others count as one when none of these is set.
func countPodVolumeSources(s *v1.VolumeSource) int {
	n := 0
	for _, set := range []bool{s.PersistentVolumeClaim != nil, s.EmptyDir != nil, s.HostPath != nil,
		s.ConfigMap != nil, s.Secret != nil, s.Ephemeral != nil, s.Projected != nil, s.DownwardAPI != nil,
		s.CSI != nil, s.NFS != nil, s.Image != nil} {
		if set {
			n++
		}
	}
	if n == 0 && !apiequality.Semantic.DeepEqual(*s, v1.VolumeSource{}) {
		n = 1
	}
	return n
}

// validatePodUpdate: a pod's spec is immutable except container images,
// activeDeadlineSeconds, added tolerations and removed scheduling gates.
func validatePodUpdate(next, old *v1.Pod) field.ErrorList {
	n := *next.Spec.DeepCopy()
	o := old.Spec
	if len(n.Containers) == len(o.Containers) {
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
