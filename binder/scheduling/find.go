package scheduling

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/zones"
)

// podClaims are a pod's claims as the scheduler sorts them.
type podClaims struct {
	// bound claims have a volume and the bind-completed annotation.
	bound []*v1.PersistentVolumeClaim
	// delayed claims are unbound, of a WaitForFirstConsumer class and not
	// pre-bound by name: the scheduler chooses their volume.
	delayed []*v1.PersistentVolumeClaim
	// immediate claims are unbound otherwise: the Binder must bind them.
	immediate []*v1.PersistentVolumeClaim
}

// Find decides whether the pod's claims can be satisfied on node, as
// kube-scheduler's FindPodVolumes does, from the cached (possibly assumed)
// objects. It returns the decision, and the reasons why the node does not
// fit (none when it fits); an error means the pod cannot be evaluated at
// all (a claim missing or being deleted: ErrClaimNotFound,
// ErrClaimDeleting; an ephemeral claim owned by another pod; a claim to
// provision without a readable class: ErrClassNotFound; an unparsable
// selector). It never writes and is safe to call in parallel for many nodes.
// Neither argument is modified.
func (b *VolumeBinder) Find(ctx context.Context, pod *v1.Pod, node *v1.Node) (_ *PodVolumes, _ []Reason, err error) {
	start := b.clock.Now()
	defer func() { b.metrics.stage(opPredicate, start, b.clock.Now(), err != nil) }()
	if pod == nil || node == nil {
		return nil, nil, fmt.Errorf("scheduling: find volumes: nil pod or node: %w", ErrInvalidArgument)
	}
	claims, err := b.podClaims(pod)
	if err != nil {
		return nil, nil, err
	}
	pv := &PodVolumes{Node: node}
	if len(claims.immediate) > 0 {
		return pv, []Reason{{Kind: UnboundImmediateClaim, Claim: cache.Key(claims.immediate[0]),
			Detail: "the claim must be bound before the pod can be scheduled"}}, nil
	}
	var reasons []Reason
	if r, ok := b.checkBound(claims.bound, node); !ok {
		reasons = append(reasons, r)
	}
	if len(claims.delayed) == 0 {
		return pv, reasons, nil
	}

	var toMatch, toProvision []*v1.PersistentVolumeClaim
	for _, c := range claims.delayed {
		selected, ok := c.Annotations[volume.AnnSelectedNode]
		if !ok {
			toMatch = append(toMatch, c)
			continue
		}
		if selected != node.Name {
			// Fast path, as Kubernetes: the claim is being provisioned
			// for another node.
			return pv, append(reasons, Reason{Kind: SelectedNodeConflict, Claim: cache.Key(c),
				Detail: fmt.Sprintf("being provisioned for node %q", selected)}), nil
		}
		toProvision = append(toProvision, c)
	}
	bindings, unmatched, err := b.findMatching(toMatch, node)
	if err != nil {
		return nil, nil, err
	}
	pv.StaticBindings = bindings
	toProvision = append(toProvision, unmatched...)
	if len(toProvision) > 0 {
		provisions, r, ok, err := b.checkProvisions(ctx, toProvision, unmatched, node)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			reasons = append(reasons, r)
		}
		pv.DynamicProvisions = provisions
	}
	return pv, reasons, nil
}

// podClaims reads and sorts the pod's claims from the claim cache.
func (b *VolumeBinder) podClaims(pod *v1.Pod) (podClaims, error) {
	var out podClaims
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var name string
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name = ephemeral.VolumeClaimName(pod, vol)
		default:
			continue
		}
		key := cache.ClaimKey(pod.Namespace, name)
		pvc, ok := b.pvcs.Get(key)
		if !ok {
			return out, fmt.Errorf("scheduling: pod %s: claim %s: %w", klog.KObj(pod), key, ErrClaimNotFound)
		}
		if vol.Ephemeral != nil {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return out, fmt.Errorf("scheduling: pod %s: %w", klog.KObj(pod), err)
			}
		}
		if pvc.DeletionTimestamp != nil {
			return out, fmt.Errorf("scheduling: pod %s: claim %s: %w", klog.KObj(pod), key, ErrClaimDeleting)
		}
		switch {
		case isFullyBound(pvc):
			out.bound = append(out.bound, pvc)
		case pvc.Spec.VolumeName == "" && b.delayBinding(pvc):
			if out.delayed == nil {
				out.delayed = make([]*v1.PersistentVolumeClaim, 0, len(pod.Spec.Volumes)-i)
			}
			out.delayed = append(out.delayed, pvc)
		default:
			out.immediate = append(out.immediate, pvc)
		}
	}
	return out, nil
}

// delayBinding reports whether the claim's class binds WaitForFirstConsumer.
// A class that cannot be read, or that has no binding mode, counts as
// immediate, as the Binder treats it.
func (b *VolumeBinder) delayBinding(pvc *v1.PersistentVolumeClaim) bool {
	delay, err := volume.IsDelayBindingMode(pvc, b.classes)
	return err == nil && delay
}

func isFullyBound(pvc *v1.PersistentVolumeClaim) bool {
	_, ok := pvc.Annotations[volume.AnnBindCompleted]
	return pvc.Spec.VolumeName != "" && ok
}

// checkBound checks that the bound claims' volumes exist and can be used
// from node, stopping at the first that fails, as Kubernetes does.
func (b *VolumeBinder) checkBound(claims []*v1.PersistentVolumeClaim, node *v1.Node) (Reason, bool) {
	for _, pvc := range claims {
		name := pvc.Spec.VolumeName
		pv, ok := b.pvs.Get(name)
		if !ok {
			return Reason{Kind: VolumeNotExist, Claim: cache.Key(pvc), Volume: name, Detail: "the volume does not exist"}, false
		}
		fits, err := b.matcher.Matches(pv, node)
		if err != nil {
			return Reason{Kind: VolumeNodeAffinityConflict, Claim: cache.Key(pvc), Volume: name, Detail: err.Error()}, false
		}
		if !fits {
			return Reason{Kind: VolumeNodeAffinityConflict, Claim: cache.Key(pvc), Volume: name,
				Detail: fmt.Sprintf("the volume cannot be used from node %q", node.Name)}, false
		}
	}
	return Reason{}, true
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
// stopping at the first that cannot, as Kubernetes does. unmatched are the
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
		if detail, ok := topologyAllows(class, node); !ok {
			return nil, Reason{Kind: CannotProvision, Claim: key, Detail: detail}, false, nil
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

// topologyAllows reports whether the class may provision a volume for node:
// its allowedTopologies (any term whose every expression has the node's
// label value among its values, as Kubernetes' MatchTopologySelectorTerms)
// and its "zone"/"zones" parameters (keys in any case, as the in-tree
// provisioners read them), which must name the node's zone.
func topologyAllows(class *storagev1.StorageClass, node *v1.Node) (string, bool) {
	if len(class.AllowedTopologies) > 0 && !matchTopology(class.AllowedTopologies, node.Labels) {
		return fmt.Sprintf("node %q does not satisfy the allowedTopologies of storage class %q", node.Name, class.Name), false
	}
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
