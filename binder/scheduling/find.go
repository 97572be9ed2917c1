package scheduling

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/zones"
)

// Find decides whether the pod's claims can be satisfied on node, as
// kube-scheduler's VolumeBinding plugin does (its PreFilter, then its
// Filter for the node), from the cached (possibly assumed) objects. It
// returns the decision and the reasons why the node does not fit (none
// when it fits). When the pod cannot be scheduled on any node (see Check),
// the only reason is pod-level, the same for every node. An error
// (CodeError) means the pod cannot be evaluated: a class without
// volumeBindingMode, a claim to provision without a readable class
// (ErrClassNotFound), a volume that csi-translation-lib cannot translate,
// an unparsable selector. It never writes and is safe to call in parallel
// for many nodes. Neither argument is modified.
func (b *VolumeBinder) Find(ctx context.Context, pod *v1.Pod, node *v1.Node) (_ *PodVolumes, _ []Reason, err error) {
	start := b.clock.Now()
	defer func() { b.metrics.stage(opPredicate, start, b.clock.Now(), err != nil) }()
	if pod == nil || node == nil {
		return nil, nil, fmt.Errorf("scheduling: find volumes: nil pod or node: %w", ErrInvalidArgument)
	}
	b.catchUp()
	claims, podReason, err := b.podClaims(pod)
	if err != nil {
		return nil, nil, err
	}
	pv := &PodVolumes{Node: node}
	if podReason != nil {
		return pv, []Reason{*podReason}, nil
	}
	var reasons []Reason
	r, ok, err := b.checkBound(ctx, claims.bound, node)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		reasons = append(reasons, r)
	}
	if len(claims.delayed) > 0 {
		r, err := b.findDelayed(ctx, claims.delayed, node, pv)
		if err != nil {
			return nil, nil, err
		}
		reasons = append(reasons, r...)
	}
	if len(reasons) == 0 && b.cfg.VolumeZone {
		if r, ok := volumeZoneAllows(claims.zoned, node); !ok {
			reasons = append(reasons, r)
		}
	}
	return pv, reasons, nil
}

// checkBound checks that the bound claims' volumes exist and that their
// node affinity (translated to CSI where the node's CSINode says the
// volume's plugin is migrated) selects node, stopping at the first that
// fails, as Kubernetes' checkBoundClaims does.
func (b *VolumeBinder) checkBound(ctx context.Context, claims []*v1.PersistentVolumeClaim, node *v1.Node) (Reason, bool, error) {
	if len(claims) == 0 {
		return Reason{}, true, nil
	}
	csiNode := b.csiNode(ctx, node)
	for _, pvc := range claims {
		name := pvc.Spec.VolumeName
		pv, ok := b.pvs.Get(name)
		if !ok {
			return Reason{Kind: VolumeNotExist, Claim: cache.Key(pvc), Volume: name, Detail: "the volume does not exist"}, false, nil
		}
		mismatch, err := b.volumeFits(ctx, pv, csiNode, node)
		if err != nil {
			return Reason{}, false, fmt.Errorf("scheduling: claim %s: %w", cache.Key(pvc), err)
		}
		if mismatch != nil {
			return Reason{Kind: VolumeNodeAffinityConflict, Claim: cache.Key(pvc), Volume: name,
				Detail: fmt.Sprintf("node %q: %v", node.Name, mismatch)}, false, nil
		}
	}
	return Reason{}, true, nil
}

// findDelayed chooses volumes for the unbound WaitForFirstConsumer claims
// on node, or checks that they can be provisioned there, and fills pv.
func (b *VolumeBinder) findDelayed(ctx context.Context, delayed []*v1.PersistentVolumeClaim, node *v1.Node, pv *PodVolumes) ([]Reason, error) {
	var toMatch, toProvision []*v1.PersistentVolumeClaim
	for _, c := range delayed {
		selected, ok := c.Annotations[volume.AnnSelectedNode]
		if !ok {
			toMatch = append(toMatch, c)
			continue
		}
		if selected != node.Name {
			// Fast path, as Kubernetes: the claim is being provisioned
			// for another node.
			return []Reason{{Kind: SelectedNodeConflict, Claim: cache.Key(c),
				Detail: fmt.Sprintf("being provisioned for node %q", selected)}}, nil
		}
		toProvision = append(toProvision, c)
	}
	bindings, unmatched, err := b.findMatching(toMatch, node)
	if err != nil {
		return nil, err
	}
	pv.StaticBindings = bindings
	toProvision = append(toProvision, unmatched...)
	if len(toProvision) == 0 {
		return nil, nil
	}
	provisions, r, ok, err := b.checkProvisions(ctx, toProvision, unmatched, node)
	if err != nil {
		return nil, err
	}
	pv.DynamicProvisions = provisions
	if !ok {
		return []Reason{r}, nil
	}
	return nil, nil
}

// findMatching finds, smallest request first, the best available volume on
// node for each claim, never the same volume twice. It returns the
// bindings and the claims left without a volume.
func (b *VolumeBinder) findMatching(claims []*v1.PersistentVolumeClaim, node *v1.Node) ([]*BindingInfo, []*v1.PersistentVolumeClaim, error) {
	if len(claims) == 0 {
		return nil, nil, nil
	}
	if len(claims) > 1 {
		claims = slices.Clone(claims)
		slices.SortStableFunc(claims, func(a, c *v1.PersistentVolumeClaim) int {
			qa, qc := a.Spec.Resources.Requests[v1.ResourceStorage], c.Spec.Resources.Requests[v1.ResourceStorage]
			return qa.Cmp(qc)
		})
	}
	var (
		// infos backs the bindings with one allocation.
		infos     = make([]BindingInfo, len(claims))
		bindings  = make([]*BindingInfo, 0, len(claims))
		unmatched []*v1.PersistentVolumeClaim
		chosen    map[string]bool
	)
	for _, pvc := range claims {
		pv, err := b.vindex.find(pvc, node, chosen)
		if err != nil {
			return nil, nil, err
		}
		if pv == nil {
			unmatched = append(unmatched, pvc)
			continue
		}
		if len(claims) > 1 {
			if chosen == nil {
				chosen = make(map[string]bool, len(claims))
			}
			chosen[pv.Name] = true
		}
		bi := &infos[len(bindings)]
		bi.PVC, bi.PV = pvc, pv
		bindings = append(bindings, bi)
	}
	return bindings, unmatched, nil
}

// checkProvisions checks that every claim can be provisioned on node,
// stopping at the first that cannot, as Kubernetes' checkVolumeProvisions
// does: the class must have a provisioner, its allowedTopologies must
// admit the node's labels (with Config.ClassZoneParameters its zone
// parameters too), and Config.Capacity must find room. unmatched are the
// claims that found no volume (a class without provisioner then means
// NoMatchingVolume rather than CannotProvision).
func (b *VolumeBinder) checkProvisions(ctx context.Context, claims, unmatched []*v1.PersistentVolumeClaim, node *v1.Node) ([]*v1.PersistentVolumeClaim, Reason, bool, error) {
	for _, pvc := range claims {
		key := cache.Key(pvc)
		className := volume.GetPersistentVolumeClaimClass(pvc)
		if className == "" {
			return nil, Reason{}, false, fmt.Errorf("scheduling: claim %s to provision has no storage class: %w", key, ErrClassNotFound)
		}
		class, err := b.classes.Get(className)
		if err != nil {
			return nil, Reason{}, false, fmt.Errorf("scheduling: claim %s: storage class %q: %w: %w", key, className, ErrClassNotFound, err)
		}
		if class.Provisioner == "" || class.Provisioner == volume.NotSupportedProvisioner {
			kind := CannotProvision
			detail := fmt.Sprintf("storage class %q does not provision volumes", className)
			if slices.Contains(unmatched, pvc) {
				kind = NoMatchingVolume
				detail = "no available volume matches the claim and the node, and " + detail
			}
			return nil, Reason{Kind: kind, Claim: key, Detail: detail}, false, nil
		}
		if len(class.AllowedTopologies) > 0 && !matchTopology(class.AllowedTopologies, node.Labels) {
			return nil, Reason{Kind: CannotProvision, Claim: key,
				Detail: fmt.Sprintf("node %q does not satisfy the allowedTopologies of storage class %q", node.Name, class.Name)}, false, nil
		}
		if b.cfg.ClassZoneParameters {
			if detail, ok := classZonesAllow(class, node); !ok {
				return nil, Reason{Kind: ClassZoneConflict, Claim: key, Detail: detail}, false, nil
			}
		}
		if b.cfg.Capacity != nil {
			ok, err := b.cfg.Capacity.HasCapacity(ctx, class, pvc, node)
			if err != nil {
				return nil, Reason{}, false, fmt.Errorf("scheduling: claim %s: capacity of storage class %q on node %q: %w", key, className, node.Name, err)
			}
			if !ok {
				return nil, Reason{Kind: NotEnoughSpace, Claim: key,
					Detail: fmt.Sprintf("storage class %q has no room for the claim on node %q", className, node.Name)}, false, nil
			}
		}
	}
	return claims, Reason{}, true, nil
}

// classZonesAllow reports whether the class's "zone"/"zones" parameters
// (keys in any case, as the in-tree provisioners read them), when it has
// them, name the node's zone.
func classZonesAllow(class *storagev1.StorageClass, node *v1.Node) (string, bool) {
	for key, value := range class.Parameters {
		var allowed []string
		switch strings.ToLower(key) {
		case "zone":
			allowed = []string{strings.TrimSpace(value)}
		case "zones":
			for _, z := range strings.Split(value, ",") {
				allowed = append(allowed, strings.TrimSpace(z))
			}
		default:
			continue
		}
		zone, ok := zones.NodeZone(node)
		if !ok || !slices.Contains(allowed, zone) {
			return fmt.Sprintf("node %q (zone %q) is not in the zones %q of storage class %q", node.Name, zone, allowed, class.Name), false
		}
	}
	return "", true
}

// matchTopology is Kubernetes' MatchTopologySelectorTerms: terms are ORed,
// a term's expressions ANDed, and an expression holds when the label has one
// of its values.
func matchTopology(terms []v1.TopologySelectorTerm, labels map[string]string) bool {
	for _, term := range terms {
		ok := len(term.MatchLabelExpressions) > 0
		for _, e := range term.MatchLabelExpressions {
			value, has := labels[e.Key]
			if !has || !slices.Contains(e.Values, value) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
