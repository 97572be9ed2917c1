package randcluster

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
)

func claimRef(pvc *v1.PersistentVolumeClaim, withUID bool) *v1.ObjectReference {
	ref := &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name}
	if withUID {
		ref.UID = pvc.UID
	}
	return ref
}

// classOf returns the claim's class as a volume's class ("" for none).
func classOf(pvc *v1.PersistentVolumeClaim) string {
	if pvc.Spec.StorageClassName == nil {
		return ""
	}
	return *pvc.Spec.StorageClassName
}

// fitting adds a volume that usually fits the claim (same class, modes,
// volume mode and VAC, large enough) for a claim state that binds it.
func (g *gen) fitting(pvc *v1.PersistentVolumeClaim) *v1.PersistentVolume {
	class := classOf(pvc)
	pv := g.volume(&class)
	if g.chance(85) {
		pv.Spec.AccessModes = pvc.Spec.AccessModes
		pv.Spec.VolumeMode = pvc.Spec.VolumeMode
		pv.Spec.VolumeAttributesClassName = pvc.Spec.VolumeAttributesClassName
		if pv.Spec.VolumeAttributesClassName != nil && pv.Spec.CSI == nil {
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: Disk, VolumeHandle: pv.Name}}
			pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
		}
		pv.Spec.Capacity = pvc.Spec.Resources.Requests.DeepCopy()
		if g.chance(50) {
			pv.Spec.Capacity[v1.ResourceStorage] = pvcSize(g.pick(volumeSizes))
		}
	}
	return pv
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

// claimState puts the claim in a random binding state, adding the volumes
// that state needs.
func (g *gen) claimState(pvc *v1.PersistentVolumeClaim) {
	switch r := g.r.IntN(100); {
	case r < 50: // unbound
	case r < 56: // asks for a volume by name
		if len(g.c.Volumes) > 0 && g.chance(70) {
			pvc.Spec.VolumeName = g.c.Volumes[g.r.IntN(len(g.c.Volumes))].Name
		} else {
			pvc.Spec.VolumeName = "missing-" + pvc.Name
		}
	case r < 64:
		bindBoth(g.fitting(pvc), pvc)
	case r < 67: // bound, the claim's status not written yet
		bindBoth(g.fitting(pvc), pvc)
		pvc.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}
	case r < 71: // half-bound: the volume side written
		pv := g.fitting(pvc)
		pv.Spec.ClaimRef = claimRef(pvc, true)
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, volume.AnnBoundByController, "yes")
		pv.Status.Phase = v1.VolumeBound
	case r < 74: // half-bound: the claim side written
		pv := g.fitting(pvc)
		bindBoth(pv, pvc)
		pv.Spec.ClaimRef = nil
		pv.Status.Phase = v1.VolumeAvailable
		delete(pv.Annotations, volume.AnnBoundByController)
	case r < 81: // a volume pre-bound to it by the user
		pv := g.fitting(pvc)
		pv.Spec.ClaimRef = claimRef(pvc, false)
	case r < 84: // bound to a volume that does not exist: Lost
		pvc.Spec.VolumeName = "gone-" + pvc.Name
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnBindCompleted, "yes")
		pvc.Status.Phase = v1.ClaimBound
	case r < 87: // misbound: its volume names an earlier claim of the same name
		pv := g.fitting(pvc)
		bindBoth(pv, pvc)
		pv.Spec.ClaimRef.UID = "uid-earlier-" + pvc.UID
	case r < 92: // a volume released by a claim that is gone
		gone := pvc.DeepCopy()
		gone.Name, gone.UID = "gone-"+pvc.Name, "uid-gone-"+pvc.UID
		pv := g.fitting(gone)
		pv.Spec.ClaimRef = claimRef(gone, true)
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, volume.AnnBoundByController, "yes")
		pv.Status.Phase = v1.VolumeReleased
	default: // the scheduler selected a node for it (kept only for WaitForFirstConsumer classes)
		if c := classOf(pvc); c == "local" || c == "zonal" || c == "tracked" {
			node := fmt.Sprintf("node-%d", g.r.IntN(len(g.c.Nodes)+1)) // sometimes a node that does not exist
			metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnSelectedNode, node)
		}
	}
}

// pods adds 0-3 pods, each using 1-3 claims (now and then one that does
// not exist), some already scheduled.
func (g *gen) pods() {
	for i := range g.r.IntN(4) {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: Namespace},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
		}
		used := map[string]bool{}
		for j := range 1 + g.r.IntN(3) {
			name := g.c.Claims[g.r.IntN(len(g.c.Claims))].Name
			if g.chance(5) {
				name = "missing-claim"
			}
			if used[name] {
				continue
			}
			used[name] = true
			pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("v%d", j),
				VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
		}
		if g.chance(20) {
			pod.Spec.NodeName = g.c.Nodes[g.r.IntN(len(g.c.Nodes))].Name
		}
		g.c.Pods = append(g.c.Pods, pod)
	}
}
