package chaos

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/pvindex"
)

// check records the invariants the settled cluster breaks.
func (r *run) check(vs *violations) {
	volumes := map[string]*v1.PersistentVolume{}
	ix := pvindex.New()
	for _, pv := range r.srv.Volumes() {
		volumes[pv.Name] = pv
		ix.Upsert(pv)
	}
	claims := map[types.UID]*v1.PersistentVolumeClaim{}
	for _, pvc := range r.srv.Claims() {
		claims[pvc.UID] = pvc
	}
	r.checkClaims(vs, volumes, claims, ix)
	r.checkVolumes(vs, volumes, claims)
	r.checkStorage(vs, volumes)
	r.checkSynced(vs, volumes, claims)
	for name := range r.retained {
		if volumes[name] == nil {
			vs.add(RetainDeleted, "Retain volume %s is gone", name)
		}
	}
}

func (r *run) checkClaims(vs *violations, volumes map[string]*v1.PersistentVolume, claims map[types.UID]*v1.PersistentVolumeClaim, ix *pvindex.Index) {
	boundTo := map[string]string{}
	for _, pvc := range claims {
		key := pvc.Namespace + "/" + pvc.Name
		switch pvc.Status.Phase {
		case v1.ClaimBound:
			if other, ok := boundTo[pvc.Spec.VolumeName]; ok {
				vs.add(DoubleBind, "claims %s and %s are both Bound to volume %s", other, key, pvc.Spec.VolumeName)
			}
			boundTo[pvc.Spec.VolumeName] = key
			pv := volumes[pvc.Spec.VolumeName]
			if pv == nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
				vs.add(BoundClaimVolume, "claim %s is Bound to volume %q, which does not name it by UID: %s",
					key, pvc.Spec.VolumeName, describeVolume(pv))
			} else if pv.Status.Phase != v1.VolumeBound {
				vs.add(PhaseWrong, "claim %s is Bound to volume %s in phase %s", key, pv.Name, pv.Status.Phase)
			}
			if pv != nil && r.st.wasChosen(pv, pvc.UID) {
				if why := mismatch(pv, pvc); why != "" {
					vs.add(BoundMismatch, "claim %s is Bound to volume %s, which the Binder chose, although %s", key, pv.Name, why)
				}
			}
		case v1.ClaimPending:
			if pvc.Spec.VolumeName != "" {
				if pv := volumes[pvc.Spec.VolumeName]; pv != nil && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == pvc.UID {
					vs.add(PhaseWrong, "claim %s is Pending although volume %s is bound to it", key, pv.Name)
				}
				continue
			}
			if pvc.Spec.StorageClassName == nil && r.defaultClass != "" {
				vs.add(ClaimUnbound, "claim %s without class is Pending, never given the default class %s", key, r.defaultClass)
				continue
			}
			class := ptr.Deref(pvc.Spec.StorageClassName, "")
			if provisions(class) {
				vs.add(ClaimUnbound, "claim %s of class %s is Pending, never provisioned", key, class)
				continue
			}
			if pv, err := ix.FindBestMatch(pvc, pvindex.FindOptions{}); err != nil || pv != nil {
				vs.add(ClaimUnbound, "claim %s is Pending although volume %s matches (err %v)", key, describeVolume(pv), err)
			}
		case v1.ClaimLost:
			if pv := volumes[pvc.Spec.VolumeName]; pv != nil && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == pvc.UID {
				vs.add(PhaseWrong, "claim %s is Lost although volume %s is bound to it", key, pv.Name)
			}
		default:
			vs.add(PhaseWrong, "claim %s in phase %q", key, pvc.Status.Phase)
		}
	}
}

func (r *run) checkVolumes(vs *violations, volumes map[string]*v1.PersistentVolume, claims map[types.UID]*v1.PersistentVolumeClaim) {
	for _, pv := range volumes {
		ref := pv.Spec.ClaimRef
		provisioned := pv.Annotations[volume.AnnDynamicallyProvisioned] != ""
		switch {
		case ref == nil:
			if pv.Status.Phase != v1.VolumeAvailable {
				vs.add(PhaseWrong, "unbound volume %s in phase %s", pv.Name, pv.Status.Phase)
			}
			if provisioned {
				vs.add(ProvisionedUnsynced, "provisioned volume %s is not bound to any claim", pv.Name)
			}
		case ref.UID == "":
			// Pre-bound: the claim may not exist (yet); it is left alone.
			if provisioned {
				vs.add(ProvisionedUnsynced, "provisioned volume %s is only pre-bound to %s/%s", pv.Name, ref.Namespace, ref.Name)
			}
		case claims[ref.UID] != nil:
			pvc := claims[ref.UID]
			if pvc.Spec.VolumeName != pv.Name || pvc.Status.Phase != v1.ClaimBound || pv.Status.Phase != v1.VolumeBound {
				inv := HalfBound
				if provisioned {
					inv = ProvisionedUnsynced
				}
				vs.add(inv, "volume %s (%s) is bound to claim %s/%s, which is %s with volume %q",
					pv.Name, pv.Status.Phase, ref.Namespace, ref.Name, pvc.Status.Phase, pvc.Spec.VolumeName)
			}
		default: // released: the claim is gone
			r.checkReleased(vs, pv, provisioned)
		}
	}
}

// checkReleased checks that a volume whose claim is gone was reclaimed
// per its policy.
func (r *run) checkReleased(vs *violations, pv *v1.PersistentVolume, provisioned bool) {
	switch p := pv.Spec.PersistentVolumeReclaimPolicy; {
	case p == v1.PersistentVolumeReclaimRetain && pv.Status.Phase == v1.VolumeReleased:
	case p == v1.PersistentVolumeReclaimRetain:
		vs.add(NotReclaimed, "Retain volume %s of a gone claim is %s, not Released", pv.Name, pv.Status.Phase)
	case provisioned:
		vs.add(ProvisionedUnsynced, "provisioned %s volume %s of gone claim %s is still there (%s)", p, pv.Name,
			pv.Spec.ClaimRef.Name, pv.Status.Phase)
	default:
		vs.add(NotReclaimed, "%s volume %s of gone claim %s is still there (%s)", p, pv.Name, pv.Spec.ClaimRef.Name, pv.Status.Phase)
	}
}

// checkStorage: no volume refers to deleted storage, and no provisioned
// storage is left without a volume.
func (r *run) checkStorage(vs *violations, volumes map[string]*v1.PersistentVolume) {
	used := map[string]bool{}
	assets := r.st.snapshot()
	for _, pv := range volumes {
		h := handleOf(pv)
		used[h] = true
		if a, ok := assets[h]; ok && a.deleted {
			vs.add(StorageLost, "volume %s (%s, claim %v) refers to deleted storage %s", pv.Name, pv.Status.Phase,
				refName(pv.Spec.ClaimRef), h)
		}
	}
	for h, a := range assets {
		// A Binder that crashed (or was retired) between Provision and
		// the create of the volume leaves the storage behind when the
		// claim is deleted before a new one provisions it again, as
		// Kubernetes does.
		if a.provisionedBy != nil && !a.deleted && !used[h] && !a.provisionedBy.gone() {
			vs.add(ProvisionedUnsynced, "provisioned storage %s has no volume and was never deleted", h)
		}
	}
}

func refName(ref *v1.ObjectReference) string {
	if ref == nil {
		return "none"
	}
	return ref.Namespace + "/" + ref.Name + "(" + string(ref.UID) + ")"
}

func describeVolume(pv *v1.PersistentVolume) string {
	if pv == nil {
		return "no such volume"
	}
	return pv.Name + " " + string(pv.Status.Phase) + " bound to " + refName(pv.Spec.ClaimRef)
}

// mismatch says which of the claim's matching rules pv breaks, or "".
func mismatch(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) string {
	request := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	switch {
	case volume.GetPersistentVolumeClass(pv) != volume.GetPersistentVolumeClaimClass(pvc):
		return fmt.Sprintf("its class %q is not the claim's %q", volume.GetPersistentVolumeClass(pv), volume.GetPersistentVolumeClaimClass(pvc))
	case !volume.CheckAccessModes(pvc, pv):
		return fmt.Sprintf("its access modes %v do not include the claim's %v", pv.Spec.AccessModes, pvc.Spec.AccessModes)
	case volume.CheckVolumeModeMismatches(&pvc.Spec, &pv.Spec):
		return "its volume mode is not the claim's"
	case capacity.Cmp(request) < 0:
		return fmt.Sprintf("its capacity %s is less than the claim's request %s", capacity.String(), request.String())
	case pvc.Spec.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return "its labels do not match the claim's selector"
		}
	}
	return ""
}

// checkSynced: every volume and claim that exists was synced, or written,
// at its final version by a Binder live at the end (see
// binder.SyncObserver). Without instances (a hand-made run) nothing is
// checked.
func (r *run) checkSynced(vs *violations, volumes map[string]*v1.PersistentVolume, claims map[types.UID]*v1.PersistentVolumeClaim) {
	ins := r.live
	if len(ins) == 0 {
		ins = r.final
	}
	if len(ins) == 0 {
		return
	}
	seen := func(obj metav1.Object) bool {
		return slices.ContainsFunc(ins, func(in *instance) bool { return in.synced.has(obj) })
	}
	for _, pv := range volumes {
		if !seen(pv) {
			vs.add(Unsynced, "volume %s (UID %s) was never synced at its final resourceVersion %s (%s)", pv.Name, pv.UID, pv.ResourceVersion, pv.Status.Phase)
		}
	}
	for _, pvc := range claims {
		if !seen(pvc) {
			vs.add(Unsynced, "claim %s/%s (UID %s) was never synced at its final resourceVersion %s (%s)", pvc.Namespace, pvc.Name, pvc.UID, pvc.ResourceVersion, pvc.Status.Phase)
		}
	}
}
