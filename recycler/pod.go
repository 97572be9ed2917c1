package recycler

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/volbind/volbind/internal/pvsource"
)

// PodAPI is the pod access the recycler needs. Users wire it to their own
// client: NewClientsetPods adapts a client-go kubernetes.Interface, and the
// in-memory API of binder/bindertest implements it too. Errors are
// k8s.io/apimachinery/pkg/api/errors values (AlreadyExists, NotFound).
type PodAPI interface {
	// CreatePod creates pod and returns the stored pod. It returns an
	// AlreadyExists error when the name is taken.
	CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	// GetPod returns the pod or a NotFound error.
	GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
	// DeletePod deletes the pod or returns a NotFound error.
	DeletePod(ctx context.Context, namespace, name string) error
	// WatchPod returns a watch that delivers the events of that one pod
	// (an API server's watch without resourceVersion first replays the
	// pod's current state as Added; either way is fine) until Stop is
	// called or ctx is done. It may close its channel early or send an
	// Error event; the recycler then watches again and reads the pod.
	WatchPod(ctx context.Context, namespace, name string) (watch.Interface, error)
}

// PodNamePrefix is the prefix of every recycler pod's name.
const PodNamePrefix = "recycler-for-"

// Annotations the recycler sets on the pods it creates. A pod with the
// recycler pod's name is adopted only when both match the volume.
const (
	// AnnVolume holds the name of the PersistentVolume the pod recycles.
	AnnVolume = "recycler.volbind.io/volume"
	// AnnVolumeUID holds the UID of the PersistentVolume the pod recycles.
	AnnVolumeUID = "recycler.volbind.io/volume-uid"
)

// DefaultImage is the image of DefaultPodTemplate's container.
const DefaultImage = "busybox:1.37"

// ScrubScript is the shell script DefaultPodTemplate runs: it fails unless
// /scrub exists and is empty after every entry below it was deleted.
const ScrubScript = `test -e /scrub && find /scrub -mindepth 1 -delete && test -z "$(ls -A /scrub)" || exit 1`

// PodName returns the name of the recycler pod of the volume named pvName.
// It depends on nothing else, so a restarted controller finds the pod a
// previous run created.
func PodName(pvName string) string { return PodNamePrefix + pvName }

// DefaultPodTemplate returns a new copy of the pod template used when
// Config.PodTemplate is nil, shaped like kube-controller-manager's default
// recycler pod: namespace "default", restart policy Never, one volume "vol"
// (its source is replaced by the volume's) mounted at /scrub in a busybox
// container that runs ScrubScript. The caller owns the result.
func DefaultPodTemplate() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyNever,
			Volumes:       []v1.Volume{{Name: "vol"}},
			Containers: []v1.Container{{
				Name:         "pv-recycler",
				Image:        DefaultImage,
				Command:      []string{"/bin/sh"},
				Args:         []string{"-c", ScrubScript},
				VolumeMounts: []v1.VolumeMount{{Name: "vol", MountPath: "/scrub"}},
			}},
		},
	}
}

// validateTemplate checks that a template can run as a recycler pod: it has
// a container, a first volume that a container mounts (it receives the
// recycled volume's source), a restart policy that lets the pod finish and a
// valid namespace. Errors wrap ErrInvalidTemplate.
func validateTemplate(t *v1.Pod) error {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidTemplate, fmt.Sprintf(format, args...))
	}
	if t == nil {
		return invalid("template is nil")
	}
	if len(t.Spec.Containers) == 0 {
		return invalid("no container")
	}
	if len(t.Spec.Volumes) == 0 {
		return invalid("no volume; the first volume receives the recycled volume's source")
	}
	if t.Spec.RestartPolicy == v1.RestartPolicyAlways {
		return invalid("restart policy %s never lets the pod succeed; use %s (the default when empty) or %s",
			v1.RestartPolicyAlways, v1.RestartPolicyNever, v1.RestartPolicyOnFailure)
	}
	if t.Namespace != "" {
		if errs := validation.IsDNS1123Label(t.Namespace); len(errs) > 0 {
			return invalid("namespace %q is invalid: %s", t.Namespace, strings.Join(errs, "; "))
		}
	}
	name := t.Spec.Volumes[0].Name
	for _, cs := range [][]v1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				if m.Name == name {
					return nil
				}
			}
		}
	}
	return invalid("no container mounts the first volume %q", name)
}

// sourceKind names the volume sources the recycler pod can mount.
type sourceKind int

const (
	kindNFS sourceKind = iota
	kindHostPath
)

// volumeSource returns the pod volume source that mounts pv's storage, as
// kube-controller-manager's NFS and HostPath recyclers build it (server and
// path; path only). Every other source gets an ErrUnsupportedVolume error.
func volumeSource(pv *v1.PersistentVolume) (v1.VolumeSource, sourceKind, error) {
	if pv == nil {
		return v1.VolumeSource{}, 0, fmt.Errorf("recycler: recycle nil volume: %w", ErrUnsupportedVolume)
	}
	if pv.Name == "" {
		return v1.VolumeSource{}, 0, fmt.Errorf("recycler: recycle volume with an empty name: %w", ErrUnsupportedVolume)
	}
	if errs := validation.IsDNS1123Subdomain(PodName(pv.Name)); len(errs) > 0 {
		return v1.VolumeSource{}, 0, fmt.Errorf("recycler: recycle volume %s: recycler pod name %q is invalid (%s): %w",
			pv.Name, PodName(pv.Name), strings.Join(errs, "; "), ErrUnsupportedVolume)
	}
	switch s := pv.Spec.PersistentVolumeSource; {
	case s.NFS != nil:
		return v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: s.NFS.Server, Path: s.NFS.Path}}, kindNFS, nil
	case s.HostPath != nil:
		return v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: s.HostPath.Path}}, kindHostPath, nil
	default:
		return v1.VolumeSource{}, 0, fmt.Errorf("recycler: recycle volume %s: source %s is not supported, only nfs and hostPath are: %w",
			pv.Name, sourceName(&s), ErrUnsupportedVolume)
	}
}

// sourceName names the first source set in s, for error messages: its
// field name, with the driver of a CSI or FlexVolume source.
func sourceName(s *v1.PersistentVolumeSource) string {
	src, ok := pvsource.Of(s)
	switch {
	case !ok:
		return "(none)"
	case src.Driver != "":
		return src.Field + " " + src.Driver
	}
	return src.Field
}

// CanRecycle returns nil when Recycle can mount pv's storage in a recycler
// pod: pv has an NFS or HostPath source and a name that makes a valid pod
// name. Otherwise the error wraps ErrUnsupportedVolume and names the volume
// and its source. It does not block and makes no API call.
func CanRecycle(pv *v1.PersistentVolume) error {
	_, _, err := volumeSource(pv)
	return err
}

// newPod builds the recycler pod of pv from the template: fixed name,
// annotations naming the volume, the volume's source on the first volume,
// the timeout as ActiveDeadlineSeconds (as kube-controller-manager does) and
// restart policy Never when the template leaves it empty.
func newPod(template *v1.Pod, pv *v1.PersistentVolume, src v1.VolumeSource, deadlineSeconds int64) *v1.Pod {
	pod := template.DeepCopy()
	pod.Name = PodName(pv.Name)
	pod.GenerateName = ""
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.UID = ""
	pod.ResourceVersion = ""
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string, 2)
	}
	pod.Annotations[AnnVolume] = pv.Name
	pod.Annotations[AnnVolumeUID] = string(pv.UID)
	pod.Spec.Volumes[0].VolumeSource = src
	pod.Spec.ActiveDeadlineSeconds = &deadlineSeconds
	if pod.Spec.RestartPolicy == "" {
		// The API server would default it to Always: the pod would never end.
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
	}
	pod.Status = v1.PodStatus{}
	return pod
}

// checkOwner returns a *ForeignPodError unless pod was created by a
// recycler for pv: the annotations carry pv's name and UID and one of the
// pod's volumes has exactly the volume's source.
func checkOwner(pod *v1.Pod, pv *v1.PersistentVolume, src v1.VolumeSource) error {
	foreign := func(format string, args ...any) error {
		return &ForeignPodError{
			Volume: pv.Name,
			Pod:    types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name},
			Reason: fmt.Sprintf(format, args...),
		}
	}
	name, ok := pod.Annotations[AnnVolume]
	if !ok {
		return foreign("annotation %s is missing", AnnVolume)
	}
	if name != pv.Name {
		return foreign("annotation %s is %q", AnnVolume, name)
	}
	uid, ok := pod.Annotations[AnnVolumeUID]
	if !ok {
		return foreign("annotation %s is missing", AnnVolumeUID)
	}
	if uid != string(pv.UID) {
		return foreign("it recycles volume UID %q, not %q", uid, pv.UID)
	}
	for i := range pod.Spec.Volumes {
		if apiequality.Semantic.DeepEqual(pod.Spec.Volumes[i].VolumeSource, src) {
			return nil
		}
	}
	return foreign("it does not mount the volume's source")
}
