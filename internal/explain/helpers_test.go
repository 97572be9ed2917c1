package explain_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/explain"
)

// class returns a StorageClass with the given provisioner and binding
// mode.
func class(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

// pv returns an Available ReadWriteOnce volume of class and size.
func pv(name, class, size string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: class,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

// pvc returns a Pending ReadWriteOnce claim in namespace "app"; class "-"
// means no class at all.
func pvc(name, class, size string) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	if class != "-" {
		c.Spec.StorageClassName = ptr.To(class)
	}
	return c
}

// bind makes volume and claim bound to each other.
func bind(volume *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) {
	volume.Spec.ClaimRef = &v1.ObjectReference{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	volume.Status.Phase = v1.VolumeBound
	claim.Spec.VolumeName = volume.Name
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, volumeAnnBindCompleted, "yes")
	claim.Status.Phase = v1.ClaimBound
}

const volumeAnnBindCompleted = volume.AnnBindCompleted

// podUsing returns a pod in "app" that uses the claims.
func podUsing(name string, claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name}}
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

// zoneNode returns a node in zone.
func zoneNode(name, zone string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		v1.LabelHostname: name, v1.LabelTopologyZone: zone}}}
}

// inZone pins a volume to zone by node affinity.
func inZone(v *v1.PersistentVolume, zone string) *v1.PersistentVolume {
	v.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}}},
	}}}}
	return v
}

func newExplainer(t *testing.T, objs explain.Objects, cfg explain.Config) *explain.Explainer {
	t.Helper()
	e, err := explain.New(objs, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func explainClaim(t *testing.T, e *explain.Explainer, name string, opts explain.ClaimOptions) *explain.ClaimExplanation {
	t.Helper()
	x, err := e.Claim("app", name, opts)
	if err != nil {
		t.Fatalf("Claim(app/%s): %v", name, err)
	}
	return x
}
