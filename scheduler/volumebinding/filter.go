package volumebinding

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"

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

// inTreeTexts are the in-tree Filter's reasons in the order it reports
// them.
var inTreeTexts = [...]string{
	string(intree.ErrReasonNodeConflict),
	string(intree.ErrReasonBindConflict),
	intree.ErrReasonNotEnoughSpace,
	intree.ErrReasonPVNotExist,
}

// inTreeIndex returns the index in inTreeTexts of the text for k, -1 for a
// kind the in-tree Filter never reports.
func inTreeIndex(k scheduling.ReasonKind) int {
	switch k {
	case scheduling.VolumeNodeAffinityConflict:
		return 0
	case scheduling.NoMatchingVolume, scheduling.CannotProvision, scheduling.SelectedNodeConflict:
		return 1
	case scheduling.NotEnoughSpace:
		return 2
	case scheduling.VolumeNotExist:
		return 3
	}
	return -1
}

// inTreeReasons maps reasons to the in-tree texts, each text once, in the
// in-tree order; the messages of kinds the in-tree Filter never reports
// follow.
func inTreeReasons(reasons []scheduling.Reason) []string {
	var seen [len(inTreeTexts)]bool
	out := make([]string, 0, len(reasons))
	var others []string
	for _, r := range reasons {
		if i := inTreeIndex(r.Kind); i >= 0 {
			seen[i] = true
		} else {
			others = append(others, r.Message())
		}
	}
	for i, text := range inTreeTexts {
		if seen[i] {
			out = append(out, text)
		}
	}
	return append(out, others...)
}
