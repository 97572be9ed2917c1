package explain

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/cache"
)

// provisioner says who provisions a volume for the claim's class, or why
// nobody does (the text of Kubernetes' ProvisioningFailed event where it
// has one).
func (e *Explainer) provisioner(pvc *v1.PersistentVolumeClaim) (*Provisioner, string) {
	name := volume.GetPersistentVolumeClaimClass(pvc)
	if e.cfg.NoProvisioning {
		return nil, "the controller does not provision volumes (dynamic provisioning is off)"
	}
	sc := e.classes[name]
	if sc == nil {
		return nil, fmt.Sprintf("storageclass.storage.k8s.io %q not found", name)
	}
	p := &Provisioner{Name: sc.Provisioner, Node: pvc.Annotations[volume.AnnSelectedNode]}
	m := e.cfg.CSIMigration
	switch {
	case sc.Provisioner == "":
		return nil, fmt.Sprintf("storage class %q names no provisioner", name)
	case m.IsMigrationEnabledForPlugin(sc.Provisioner):
		driver, err := m.GetCSINameFromInTreeName(sc.Provisioner)
		if err != nil {
			return nil, fmt.Sprintf("error getting CSI name for In tree plugin %s: %v", sc.Provisioner, err)
		}
		p.Kind, p.CSIDriver = Migrated, driver
	case slices.Contains(e.cfg.InTreeProvisioners, sc.Provisioner):
		p.Kind = InTree
	case sc.Provisioner == volume.NotSupportedProvisioner:
		return nil, fmt.Sprintf("storage class %q does not provision volumes: its provisioner is %s", name, sc.Provisioner)
	case strings.HasPrefix(sc.Provisioner, "kubernetes.io/"):
		return nil, "no volume plugin matched name: " + sc.Provisioner
	default:
		p.Kind = External
	}
	return p, ""
}

// provision explains a claim of a class that no volume fits.
func (e *Explainer) provision(x *ClaimExplanation, pvc *v1.PersistentVolumeClaim) {
	p, why := e.provisioner(pvc)
	if p == nil {
		x.set(Unsatisfiable, "nothing can satisfy it: no volume fits and its class cannot provision one", why)
		return
	}
	if p.Kind == InTree && p.Node != "" && len(e.nodes) > 0 && e.nodeByName[p.Node] == nil {
		x.set(Unsatisfiable, "nothing can satisfy it: the node selected for it does not exist",
			fmt.Sprintf("Failed to get target node: nodes %q not found", p.Node))
		return
	}
	x.Provisioner = p
	if vac := ptr.Deref(pvc.Spec.VolumeAttributesClassName, ""); p.Kind == InTree && vac != "" {
		x.set(Unsatisfiable, "nothing can satisfy it: the volume provisioned for it lacks its VolumeAttributesClass",
			fmt.Sprintf("%s (in-tree) provisions volume %s, but the controller does not give provisioned volumes the claim's VolumeAttributesClass %q (external provisioners do), so the claim does not bind to it",
				p.Name, provisionedName(pvc), vac))
		return
	}
	who := p.Name
	switch p.Kind {
	case Migrated:
		who = fmt.Sprintf("%s (in-tree %s, migrated to CSI)", p.CSIDriver, p.Name)
	default:
		who += " (" + string(p.Kind) + ")"
	}
	reason := "no volume fits"
	switch p.Kind {
	case InTree:
		reason += "; the controller provisions volume " + provisionedName(pvc) + " itself"
	default:
		reason += fmt.Sprintf("; the controller hands the claim to the external provisioner with the %s annotation", volume.AnnStorageProvisioner)
	}
	if p.Node != "" {
		reason += "; the volume is made for node " + p.Node + " (selected by kube-scheduler)"
	}
	x.set(WillProvision, "will be provisioned by "+who, reason)
}

// provisionedName is the name the Binder gives a volume it provisions.
func provisionedName(pvc *v1.PersistentVolumeClaim) string { return "pvc-" + string(pvc.UID) }

// contenders lists the other claims that may take v: the claims that name
// it (a claim that completed binding to it takes it back; one that asks
// for it takes it if it fits), and the pending claims it fits (as the PV
// controller matches them, or kube-scheduler for WaitForFirstConsumer
// claims, on any node). None when v is pre-bound or bound.
func (e *Explainer) contenders(pvc *v1.PersistentVolumeClaim, v *volumeInfo) []string {
	if v == nil || v.pv.Spec.ClaimRef != nil {
		return nil
	}
	var out []string
	for _, other := range e.naming[v.pv.Name] {
		if other == pvc || invalidClaim(other) != "" {
			continue
		}
		rule, _ := checkRequested(v, other)
		if metav1.HasAnnotation(other.ObjectMeta, volume.AnnBindCompleted) || rule == Fits {
			out = append(out, cache.Key(other))
		}
	}
	for _, other := range e.pending {
		if other != pvc && e.mayTake(other, v) {
			out = append(out, cache.Key(other))
		}
	}
	return out
}

// availableCopy returns v as it is once the controller has made it an
// unbound, Available volume.
func availableCopy(v *volumeInfo) *volumeInfo {
	pv := v.pv.DeepCopy()
	pv.Spec.ClaimRef = nil
	pv.Status.Phase = v1.VolumeAvailable
	c := infoOf(pv)
	return &c
}

// mayTake reports whether the pending claim c, which names no volume, may
// be bound to the unbound volume v.
func (e *Explainer) mayTake(c *v1.PersistentVolumeClaim, v *volumeInfo) bool {
	if invalidClaim(c) != "" {
		return false
	}
	if e.fitsClaim(c, v) {
		return true
	}
	if !volume.PersistentVolumeClaimHasClass(c) && e.defaultClass != nil {
		clone := c.DeepCopy()
		clone.Spec.StorageClassName = ptr.To(e.defaultClass.Name)
		return e.fitsClaim(clone, v)
	}
	return false
}

func (e *Explainer) fitsClaim(c *v1.PersistentVolumeClaim, v *volumeInfo) bool {
	delay, _, err := e.delayBinding(c)
	if err != nil {
		return false
	}
	return newMatcher(c, delay, nil, e.cfg.UnmarkedCandidates).check(v) == Fits
}
