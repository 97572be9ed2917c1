package chaos

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// ns is the namespace of every claim.
const ns = "chaos"

// annDefaultClass marks the default StorageClass.
const annDefaultClass = "storageclass.kubernetes.io/is-default-class"

// The storage classes of a run: two provision (Delete and Retain), one
// does not ("manual"), and "" has no class object.
var (
	classNamesAll = []string{"", "manual", "fast", "keep"}
	policies      = []v1.PersistentVolumeReclaimPolicy{v1.PersistentVolumeReclaimRetain,
		v1.PersistentVolumeReclaimDelete, v1.PersistentVolumeReclaimRecycle}
)

func classes() []runtime.Object { return classesWithDefault("") }

// classesWithDefault is classes with the class named def, if any, made
// the default class.
func classesWithDefault(def string) []runtime.Object {
	mk := func(name, provisioner string, policy v1.PersistentVolumeReclaimPolicy) *storagev1.StorageClass {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, ReclaimPolicy: &policy}
		if name == def {
			sc.Annotations = map[string]string{annDefaultClass: "true"}
		}
		return sc
	}
	return []runtime.Object{
		mk("manual", "kubernetes.io/no-provisioner", v1.PersistentVolumeReclaimRetain),
		mk("fast", driver, v1.PersistentVolumeReclaimDelete),
		mk("keep", driver, v1.PersistentVolumeReclaimRetain),
	}
}

// provisions reports whether the Binder provisions claims of class.
func provisions(class string) bool { return class == "fast" || class == "keep" }

func gi(n int) resource.Quantity { return resource.MustParse(fmt.Sprintf("%dGi", n)) }

// withHandle makes pv refer to the storage handle h.
func withHandle(pv *v1.PersistentVolume, h string) {
	if s := pv.Spec.CSI; s != nil {
		s.VolumeHandle = h
	}
	if s := pv.Spec.NFS; s != nil {
		s.Path = "/" + h
	}
}

// newVolume returns an unbound static volume with storage handle name.
func newVolume(name, class string, size int, policy v1.PersistentVolumeReclaimPolicy) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: gi(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              class,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: name},
			},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if policy == v1.PersistentVolumeReclaimRecycle {
		// Kubernetes recycles only NFS and host path volumes.
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "nfs.chaos", Path: "/" + name}}
	}
	return pv
}

// newClaim returns a Pending claim.
func newClaim(name, class string, size int) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gi(size)}},
			StorageClassName: ptr.To(class),
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

func claimRef(pvc *v1.PersistentVolumeClaim, withUID bool) *v1.ObjectReference {
	ref := &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name}
	if withUID {
		ref.UID = pvc.UID
	}
	return ref
}

// bindBoth marks pv and pvc bound to each other as the controller does.
func bindBoth(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) {
	pv.Spec.ClaimRef = claimRef(pvc, true)
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, volume.AnnBoundByController, "yes")
	pv.Status.Phase = v1.VolumeBound
	pvc.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnBindCompleted, "yes")
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnBoundByController, "yes")
	pvc.Status.Phase = v1.ClaimBound
	pvc.Status.AccessModes = pv.Spec.AccessModes
	pvc.Status.Capacity = pv.Spec.Capacity
}

// cluster generates n volumes and n claims in every state a Binder meets:
// unbound (Available, Pending or no phase), pre-bound by name on either
// side, bound, half-bound on either side, released (bound to a claim that
// is gone) with each reclaim policy, and claims to provision.
func cluster(rng *rand.Rand, n int, claim func(name string, size int) *v1.PersistentVolumeClaim, staticClass func() string, policy func() v1.PersistentVolumeReclaimPolicy) (volumes []*v1.PersistentVolume, claims []*v1.PersistentVolumeClaim) {
	for i := range n {
		claims = append(claims, claim(fmt.Sprintf("claim-%d", i), 1+rng.IntN(8)))
	}
	next := 0 // claims before next are taken by a volume
	for i := range n {
		class := staticClass()
		pv := newVolume(fmt.Sprintf("pv-%d", i), class, 1+rng.IntN(10), policy())
		volumes = append(volumes, pv)
		r := rng.IntN(20)
		if r >= 9 && r < 18 && next == n {
			r = 0 // no claim left to pair with
		}
		var pvc *v1.PersistentVolumeClaim
		if r >= 9 && r < 18 {
			pvc = claims[next]
			next++
			pvc.Spec.StorageClassName = ptr.To(class)
			pvc.Spec.Resources.Requests[v1.ResourceStorage] = gi(1 + rng.IntN(int(pv.Spec.Capacity.Storage().Value()>>30)))
		}
		switch {
		case r < 5: // Available
		case r < 7:
			pv.Status.Phase = v1.VolumePending
		case r < 9:
			pv.Status.Phase = ""
		case r < 11: // pre-bound by the volume
			pv.Spec.ClaimRef = claimRef(pvc, false)
		case r < 12: // pre-bound by the claim
			pvc.Spec.VolumeName = pv.Name
		case r < 15:
			bindBoth(pv, pvc)
		case r < 16: // half-bound: the volume side written
			pv.Spec.ClaimRef = claimRef(pvc, true)
			metav1.SetMetaDataAnnotation(&pv.ObjectMeta, volume.AnnBoundByController, "yes")
			pv.Status.Phase = v1.VolumeBound
		case r < 17: // half-bound: the claim side written
			bindBoth(pv, pvc)
			pv.Spec.ClaimRef = nil
			pv.Status.Phase = v1.VolumeAvailable
			delete(pv.Annotations, volume.AnnBoundByController)
		case r < 18: // bound, claim status not written yet
			bindBoth(pv, pvc)
			pvc.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}
		default: // released: its claim is gone
			gone := newClaim(fmt.Sprintf("gone-%d", i), class, 1)
			bindBoth(pv, gone)
			if rng.IntN(2) == 0 {
				pv.Status.Phase = v1.VolumeReleased
			}
		}
	}
	return volumes, claims
}
