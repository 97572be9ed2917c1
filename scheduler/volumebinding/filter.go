package volumebinding

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/volbind/volbind/binder/scheduling"
)

// Filter asks binder/scheduling whether the pod's claims can be satisfied
// on the node. A node that does not fit is UnschedulableAndUnresolvable
// with the in-tree plugin's reasons, in its order; a node that fits keeps
// its decision for Score, Reserve and PreBind.
func (pl *Plugin) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	if pl.resizeSkip && isResizeDeferred(pod) {
		return nil
	}
	s, err := readState(cs)
	if err != nil {
		return fwk.AsStatus(err)
	}
	node := ni.Node()
	found, reasons, err := pl.binder.Find(ctx, pod, node)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if len(reasons) > 0 {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, inTreeReasons(reasons)...)
	}
	s.mu.Lock()
	if s.byNode != nil {
		s.byNode[node.Name] = found
	}
	s.hasStatic = s.hasStatic || len(found.StaticBindings) > 0
	s.mu.Unlock()
	return nil
}

// inTreeOrder is the order in which the in-tree plugin reports reasons.
var inTreeOrder = [...]func(scheduling.ReasonKind) bool{
	func(k scheduling.ReasonKind) bool { return k == scheduling.VolumeNodeAffinityConflict },
	func(k scheduling.ReasonKind) bool {
		return k == scheduling.NoMatchingVolume || k == scheduling.CannotProvision || k == scheduling.SelectedNodeConflict
	},
	func(k scheduling.ReasonKind) bool { return k == scheduling.NotEnoughSpace },
	func(k scheduling.ReasonKind) bool { return k == scheduling.VolumeNotExist },
}

// inTreeReasons maps reasons to the in-tree texts, one per kind of text, in
// the in-tree order; kinds the in-tree Filter never reports follow.
func inTreeReasons(reasons []scheduling.Reason) []string {
	out := make([]string, 0, len(reasons))
	used := make([]bool, len(reasons))
	for _, match := range inTreeOrder {
		for i, r := range reasons {
			if !used[i] && match(r.Kind) {
				out = append(out, inTreeReason(r))
				markAll(reasons, used, match)
				break
			}
		}
	}
	for i, r := range reasons {
		if !used[i] {
			out = append(out, inTreeReason(r))
		}
	}
	return out
}

func markAll(reasons []scheduling.Reason, used []bool, match func(scheduling.ReasonKind) bool) {
	for i, r := range reasons {
		if match(r.Kind) {
			used[i] = true
		}
	}
}
