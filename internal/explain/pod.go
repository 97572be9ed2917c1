package explain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/cache"
)

// DefaultPodMax is how many candidate volumes a pod explanation lists per
// claim and node when PodOptions.Max is zero.
const DefaultPodMax = 3

// PodOptions tune one pod explanation. The zero value explains every node.
type PodOptions struct {
	// Max is the number of candidate volumes listed per claim (and per
	// claim and node); zero means DefaultPodMax, negative means all.
	Max int
	// Nodes limits the explanation to these nodes; empty means every node.
	Nodes []string
}

// Pod explains, node by node, whether the pod namespace/name's claims can
// be satisfied there. The verdict of each node is binder/scheduling's
// VolumeBinder.Find on the Objects; the explanation adds, under each
// reason, the claim and the volumes or CSIStorageCapacity objects that
// decided it. It fails with ErrNotFound for an unknown pod or node.
func (e *Explainer) Pod(ctx context.Context, namespace, name string, opts PodOptions) (*PodExplanation, error) {
	pod, ok := e.pods[namespace+"/"+name]
	if !ok {
		return nil, fmt.Errorf("%w: Pod %s/%s", ErrNotFound, namespace, name)
	}
	nodes := e.nodes
	if len(opts.Nodes) > 0 {
		nodes = make([]*v1.Node, 0, len(opts.Nodes))
		for _, n := range opts.Nodes {
			node := e.nodeByName[n]
			if node == nil {
				return nil, fmt.Errorf("%w: Node %s", ErrNotFound, n)
			}
			nodes = append(nodes, node)
		}
	}
	max := ClaimOptions{Max: opts.Max}.max()
	if opts.Max == 0 {
		max = DefaultPodMax
	}
	x := &PodExplanation{Pod: cache.Key(pod), Node: pod.Spec.NodeName, FitNodes: []string{}}
	for _, pvc := range e.claimsOf(pod) {
		cx := e.newClaimExplanation(pvc)
		if err := e.explainClaim(cx, pvc, nil, max); err != nil {
			return nil, err
		}
		x.Claims = append(x.Claims, cx)
	}
	if pod.Spec.NodeName != "" {
		x.Verdict, x.Summary = Scheduled, "scheduled to node "+pod.Spec.NodeName
		return x, nil
	}
	s, err := e.scheduler()
	if err != nil {
		return nil, err
	}
	// kube-scheduler's PreFilter answers for the whole pod first (a claim
	// missing, Lost, being deleted, or unbound and not delayed).
	if reasons, err := s.vb.Check(ctx, pod); err == nil && len(reasons) > 0 {
		x.Verdict, x.Error = Unschedulable, reasons[0].Message()
		x.Summary = fmt.Sprintf("0/%d nodes are available: %s.", len(nodes), x.Error)
		return x, nil
	}
	nc := &nodeCandidates{e: e, max: max, byClaim: make(map[string]*claimScan)}
	for _, node := range nodes {
		pv, reasons, err := s.vb.Find(ctx, pod, node)
		if err != nil {
			x.Verdict, x.Error = Unschedulable, e.findError(pod, err)
			x.Summary = fmt.Sprintf("0/%d nodes are available: %s.", len(nodes), x.Error)
			x.Nodes = nil
			return x, nil
		}
		n := NodeExplanation{Node: node.Name, Fits: len(reasons) == 0}
		if n.Fits {
			n.Claims = e.nodeClaims(ctx, s, pod, pv)
			x.FitNodes = append(x.FitNodes, node.Name)
		}
		for _, r := range reasons {
			n.Reasons = append(n.Reasons, e.nodeReason(r, node, pv, nc))
		}
		x.Nodes = append(x.Nodes, n)
	}
	x.summarize(len(nodes))
	return x, nil
}

// claimsOf returns the pod's claims that exist, in the order of its
// volumes.
func (e *Explainer) claimsOf(pod *v1.Pod) []*v1.PersistentVolumeClaim {
	var out []*v1.PersistentVolumeClaim
	for i := range pod.Spec.Volumes {
		if name := podClaimName(pod, &pod.Spec.Volumes[i]); name != "" {
			if pvc := e.claims[claimName{pod.Namespace, name}]; pvc != nil {
				out = append(out, pvc)
			}
		}
	}
	return out
}

func podClaimName(pod *v1.Pod, vol *v1.Volume) string {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol)
	}
	return ""
}

// findError is kube-scheduler's text for a pod that cannot be evaluated.
func (e *Explainer) findError(pod *v1.Pod, err error) string {
	for i := range pod.Spec.Volumes {
		name := podClaimName(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		pvc := e.claims[claimName{pod.Namespace, name}]
		switch {
		case pvc == nil && errors.Is(err, scheduling.ErrClaimNotFound):
			return fmt.Sprintf("persistentvolumeclaim %q not found", name)
		case pvc != nil && pvc.DeletionTimestamp != nil && errors.Is(err, scheduling.ErrClaimDeleting):
			return fmt.Sprintf("persistentvolumeclaim %q is being deleted", name)
		}
	}
	return err.Error()
}

// nodeClaims says what each claim of the pod gets on a node that fits.
func (e *Explainer) nodeClaims(ctx context.Context, s *schedSide, pod *v1.Pod, pv *scheduling.PodVolumes) []NodeClaim {
	var out []NodeClaim
	for _, pvc := range e.claimsOf(pod) {
		key := cache.Key(pvc)
		nc := NodeClaim{Claim: key}
		bound := slices.IndexFunc(pv.StaticBindings, func(b *scheduling.BindingInfo) bool { return cache.Key(b.PVC) == key })
		switch {
		case bound >= 0:
			nc.Action, nc.Volume = "bind", pv.StaticBindings[bound].PV.Name
		case slices.ContainsFunc(pv.DynamicProvisions, func(c *v1.PersistentVolumeClaim) bool { return cache.Key(c) == key }):
			nc.Action = "provision"
			e.provisionOnNode(ctx, s, &nc, pvc, pv.Node)
		default:
			nc.Action, nc.Volume = "bound", pvc.Spec.VolumeName
		}
		out = append(out, nc)
	}
	return out
}

// provisionOnNode fills in who provisions pvc on node and which
// CSIStorageCapacity admits it.
func (e *Explainer) provisionOnNode(ctx context.Context, s *schedSide, nc *NodeClaim, pvc *v1.PersistentVolumeClaim, node *v1.Node) {
	sc := e.classes[volume.GetPersistentVolumeClaimClass(pvc)]
	if sc == nil {
		return
	}
	nc.Provisioner = sc.Provisioner
	if p, _ := e.provisioner(pvc); p != nil && p.Kind == Migrated {
		nc.Provisioner = p.CSIDriver
	}
	if _, c, err := s.capacity.Lookup(ctx, sc, pvc, node); err == nil && c != nil {
		req := pvc.Spec.Resources.Requests[v1.ResourceStorage]
		limit := capacityLimit(c)
		nc.Capacity = &CapacityObject{Name: cache.Key(c), Limit: limit.String(),
			Detail: fmt.Sprintf("%s %s admits request %s", limitField(c), limit.String(), req.String())}
	}
}

// nodeReason explains one of Find's reasons with what decided it.
func (e *Explainer) nodeReason(r scheduling.Reason, node *v1.Node, pv *scheduling.PodVolumes, nc *nodeCandidates) NodeReason {
	out := NodeReason{Message: r.Message(), Kind: r.Kind.String(), Claim: r.Claim, Volume: r.Volume, Detail: r.Detail}
	pvc := e.claimByKey(r.Claim)
	switch r.Kind {
	case scheduling.VolumeNodeAffinityConflict:
		if v := e.volumeByName[r.Volume]; v != nil && affinityText(v.pv) != "" {
			out.Detail += "; " + affinityConflict(v.pv, node)
		}
	case scheduling.NotEnoughSpace:
		if pvc != nil {
			out.Capacities = e.capacitiesFor(volume.GetPersistentVolumeClaimClass(pvc), pvc, node)
			if len(out.Capacities) == 0 {
				out.Detail += fmt.Sprintf("; no CSIStorageCapacity of the class reaches node %s", node.Name)
			}
		}
	}
	if pvc != nil && needsCandidates(r, pvc) {
		exclude := make(map[string]string)
		for _, b := range pv.StaticBindings {
			if key := cache.Key(b.PVC); key != r.Claim {
				exclude[b.PV.Name] = key
			}
		}
		out.Candidates, out.More = nc.on(pvc, node, exclude)
	}
	return out
}

// needsCandidates reports whether a reason is about a claim that found no
// volume on the node, whose closest volumes then say why.
func needsCandidates(r scheduling.Reason, pvc *v1.PersistentVolumeClaim) bool {
	switch r.Kind {
	case scheduling.NoMatchingVolume:
		return true
	case scheduling.CannotProvision, scheduling.NotEnoughSpace:
		_, selected := pvc.Annotations[volume.AnnSelectedNode]
		return !selected
	}
	return false
}

// summarize writes the verdict and summary from the nodes' verdicts, the
// summary as kube-scheduler's FailedScheduling event counts reasons.
func (x *PodExplanation) summarize(nodes int) {
	if len(x.FitNodes) > 0 {
		x.Verdict = Schedulable
		names := x.FitNodes
		more := ""
		if len(names) > 10 {
			names, more = names[:10], fmt.Sprintf(" and %d more", len(x.FitNodes)-10)
		}
		x.Summary = fmt.Sprintf("fits on %d of %d node(s): %s%s", len(x.FitNodes), nodes, strings.Join(names, ", "), more)
		return
	}
	x.Verdict = Unschedulable
	counts := map[string]int{}
	for _, n := range x.Nodes {
		seen := map[string]bool{}
		for _, r := range n.Reasons {
			if !seen[r.Message] {
				seen[r.Message] = true
				counts[r.Message]++
			}
		}
	}
	parts := make([]string, 0, len(counts))
	for msg, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, msg))
	}
	slices.Sort(parts)
	x.Summary = fmt.Sprintf("0/%d nodes are available", nodes)
	if len(parts) > 0 {
		x.Summary += ": " + strings.Join(parts, ", ")
	}
	x.Summary += "."
}
