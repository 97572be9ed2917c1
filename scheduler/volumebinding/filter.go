package volumebinding

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// Filter asks binder/scheduling whether the pod's claims can be satisfied
// on the node. A node that does not fit is UnschedulableAndUnresolvable
// with binder/scheduling's texts, which are the in-tree plugin's, in its
// order; a node that fits keeps its decision for Score, Reserve and
// PreBind.
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
		return reasonsStatus(reasons)
	}
	s.mu.Lock()
	if s.byNode != nil {
		s.byNode[node.Name] = found
	}
	s.hasStatic = s.hasStatic || len(found.StaticBindings) > 0
	s.mu.Unlock()
	return nil
}
