package explain

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// detailer writes how far a volume is from fitting a claim.
type detailer struct {
	// e, when set, is asked whether the claims that volumes name exist.
	e *Explainer
	m *matcher
	// chosen is the chosen volume, nil for none; smallest the smallest
	// volume that fits; decider a volume pre-bound to the claim that ends
	// kube-scheduler's search on the node without a match.
	chosen, smallest, decider *volumeInfo
}

// ruleDetail says how v fails rule.
func (d *detailer) ruleDetail(v *volumeInfo, rule Rule) string {
	m, pv := d.m, v.pv
	switch rule {
	case Invalid:
		return "malformed: " + v.invalid
	case StorageClass:
		return fmt.Sprintf("storage class %s, the claim's is %s", className(v.class), className(m.class))
	case BoundElsewhere:
		return d.boundElsewhere(pv)
	case Deleting:
		return "being deleted"
	case NotAvailable:
		return notAvailable(pv)
	case AccessModes:
		if m.unknown && !m.scheduler {
			return "the claim asks for an access mode no volume can offer"
		}
		return fmt.Sprintf("offers %s, the claim asks for %s", joinModes(pv.Spec.AccessModes), joinModes(m.claim.Spec.AccessModes))
	case VolumeMode:
		return fmt.Sprintf("volume mode %s, the claim's is %s", modeOrDefault(pv.Spec.VolumeMode), m.mode)
	case Capacity:
		return fmt.Sprintf("capacity %s < request %s", v.capacityText(), m.request.String())
	case Selector:
		return fmt.Sprintf("labels %s do not match the selector %s", labelText(pv.Labels), m.selector.String())
	case VolumeAttributesClass:
		return fmt.Sprintf("volume attributes class %s, the claim's is %s",
			className(ptr.Deref(pv.Spec.VolumeAttributesClassName, "")), className(m.vac))
	case NodeAffinity:
		return affinityConflict(pv, m.node)
	}
	return rule.Text()
}

// fitDetail says why a volume that fits is, or is not, the one chosen.
func (d *detailer) fitDetail(v *volumeInfo, s *scan) string {
	m := d.m
	if by, ok := s.exclude[v.pv.Name]; ok {
		return "fits, but is chosen for claim " + by + " of the same pod"
	}
	if d.chosen == v {
		return "chosen"
	}
	if d.decider != nil {
		return fmt.Sprintf("fits, but volume %s, pre-bound to the claim, decides kube-scheduler's search and does not fit node %s",
			d.decider.pv.Name, m.node.Name)
	}
	c := d.chosen
	switch {
	case c == nil && m.scheduler && m.node == nil:
		if na := affinityText(v.pv); na != "" {
			return "fits on the nodes its node affinity admits (" + na + "); kube-scheduler chooses on the pod's node"
		}
		return "fits; kube-scheduler chooses on the pod's node"
	case c == nil:
		return "fits"
	case m.preboundTo(v) && m.preboundTo(c):
		return "fits, pre-bound to the claim too; " + c.pv.Name + " sorts first by name"
	case !m.scheduler && v.modes.Rank() > c.modes.Rank():
		return fmt.Sprintf("fits, but offers more access modes (%s) than %s (%s): the controller tries volumes with the fewest modes first",
			joinModes(v.pv.Spec.AccessModes), c.pv.Name, joinModes(c.pv.Spec.AccessModes))
	case m.preboundTo(c):
		return "fits, but " + c.pv.Name + " is pre-bound to the claim"
	case v.capacity.cmp(c.capacity) > 0:
		return fmt.Sprintf("fits, but is larger than %s (%s > %s)", c.pv.Name, v.capacityText(), c.capacityText())
	}
	return "fits, as large as " + c.pv.Name + ", whose name sorts first"
}

// whyChosen says why the chosen volume wins.
func (d *detailer) whyChosen() string {
	m, c := d.m, d.chosen
	if m.preboundTo(c) {
		return "pre-bound to the claim (its claimRef names the claim)"
	}
	why := "the smallest volume that fits"
	if m.node != nil {
		why += " on node " + m.node.Name
	}
	if s := d.smallest; !m.scheduler && s != nil && s != c && s.capacity.cmp(c.capacity) < 0 {
		why += fmt.Sprintf(" among those with the fewest access modes (%s); %s is smaller but offers %s",
			joinModes(c.pv.Spec.AccessModes), s.pv.Name, joinModes(s.pv.Spec.AccessModes))
	}
	return why
}

func className(name string) string {
	if name == "" {
		return "none"
	}
	return fmt.Sprintf("%q", name)
}

// boundElsewhere says which claim pv's claimRef names, and whether that
// claim is gone.
func (d *detailer) boundElsewhere(pv *v1.PersistentVolume) string {
	ref, claim := pv.Spec.ClaimRef, d.m.claim
	key := ref.Namespace + "/" + ref.Name
	var s string
	switch {
	case ref.Namespace == claim.Namespace && ref.Name == claim.Name:
		return fmt.Sprintf("bound to an earlier claim named %s (UID %s)", key, ref.UID)
	case ref.UID == "":
		s = "pre-bound to " + key
	default:
		s = "bound to " + key
	}
	if d.e == nil {
		return s
	}
	if c := d.e.claims[claimName{ref.Namespace, ref.Name}]; c == nil || ref.UID != "" && c.UID != ref.UID {
		s += ", which is gone"
		if pv.Status.Phase == v1.VolumeReleased {
			s += fmt.Sprintf(" (Released; reclaim policy %s)", pv.Spec.PersistentVolumeReclaimPolicy)
		}
	}
	return s
}

func notAvailable(pv *v1.PersistentVolume) string {
	switch pv.Status.Phase {
	case "", v1.VolumePending:
		return fmt.Sprintf("phase %s: not marked Available yet (the controller marks it at its next sync)", phaseText(pv.Status.Phase))
	case v1.VolumeFailed:
		if pv.Status.Message != "" {
			return "phase Failed: " + pv.Status.Message
		}
	}
	return fmt.Sprintf("phase %s, not Available", pv.Status.Phase)
}

func phaseText(p v1.PersistentVolumePhase) string {
	if p == "" {
		return "not set"
	}
	return string(p)
}

func labelText(l map[string]string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return "{" + labels.Set(l).String() + "}"
}

// affinityText writes a volume's required node affinity as
// "key in [a,b] or key2 exists", "" when it has none.
func affinityText(pv *v1.PersistentVolume) string {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil {
		return ""
	}
	terms := make([]string, 0, len(na.Required.NodeSelectorTerms))
	for _, t := range na.Required.NodeSelectorTerms {
		var parts []string
		for _, r := range t.MatchExpressions {
			parts = append(parts, requirementText(r))
		}
		for _, r := range t.MatchFields {
			parts = append(parts, requirementText(r))
		}
		terms = append(terms, strings.Join(parts, " and "))
	}
	return strings.Join(terms, " or ")
}

func requirementText(r v1.NodeSelectorRequirement) string {
	switch r.Operator {
	case v1.NodeSelectorOpExists:
		return r.Key + " exists"
	case v1.NodeSelectorOpDoesNotExist:
		return r.Key + " does not exist"
	case v1.NodeSelectorOpIn:
		return fmt.Sprintf("%s in [%s]", r.Key, strings.Join(r.Values, ","))
	case v1.NodeSelectorOpNotIn:
		return fmt.Sprintf("%s notin [%s]", r.Key, strings.Join(r.Values, ","))
	}
	return fmt.Sprintf("%s %s [%s]", r.Key, strings.ToLower(string(r.Operator)), strings.Join(r.Values, ","))
}

// affinityConflict says why pv's node affinity excludes node, with the
// node's values of the label keys the affinity reads.
func affinityConflict(pv *v1.PersistentVolume, node *v1.Node) string {
	if node == nil {
		return "node affinity " + affinityText(pv)
	}
	var keys []string
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, r := range t.MatchExpressions {
			keys = append(keys, r.Key)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	has := make([]string, 0, len(keys))
	for _, k := range keys {
		if val, ok := node.Labels[k]; ok {
			has = append(has, k+"="+val)
		} else {
			has = append(has, k+" unset")
		}
	}
	return fmt.Sprintf("node affinity (%s) excludes node %s (%s)", affinityText(pv), node.Name, strings.Join(has, ", "))
}
