package volumebinding

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// errNoDecision reports a node Filter kept no decision for.
var errNoDecision = errors.New("no pod volume found for node")

// Reserve assumes the node's decision in memory, so that later pods'
// Filters see the chosen volumes taken.
func (pl *Plugin) Reserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	s, err := readState(cs)
	if err != nil {
		return fwk.AsStatus(err)
	}
	found, ok := s.byNode[nodeName]
	if !ok {
		s.allBound = true // the pod has no claims
		return nil
	}
	allBound, err := pl.binder.Assume(ctx, pod, nodeName, found)
	if err != nil {
		return fwk.AsStatus(err)
	}
	s.allBound = allBound
	return nil
}

// Unreserve drops what Reserve (and PreBind) assumed. Idempotent.
func (pl *Plugin) Unreserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) {
	s, err := readState(cs)
	if err != nil {
		return
	}
	found, ok := s.byNode[nodeName]
	if !ok {
		return
	}
	pl.binder.Revert(pod, found)
}

// PreBindPreFlight skips PreBind when every claim is bound; PreBind may run
// in parallel with other plugins'.
func (pl *Plugin) PreBindPreFlight(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	res := &fwk.PreBindPreFlightResult{AllowParallel: true}
	s, err := readState(cs)
	if err != nil {
		return res, fwk.AsStatus(err)
	}
	if s.allBound {
		return res, fwk.NewStatus(fwk.Skip)
	}
	if _, ok := s.byNode[nodeName]; !ok {
		return res, fwk.AsStatus(fmt.Errorf("%w %q", errNoDecision, nodeName))
	}
	return res, nil
}

// PreBind writes the reserved decision to the API and blocks until the
// volume controller has bound every claim, or the bind timeout, a lost
// binding or ctx ends it with an error (the decision is then reverted and
// the pod retried).
func (pl *Plugin) PreBind(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	s, err := readState(cs)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if s.allBound {
		return nil
	}
	found, ok := s.byNode[nodeName]
	if !ok {
		return fwk.AsStatus(fmt.Errorf("%w %q", errNoDecision, nodeName))
	}
	logger := klog.FromContext(ctx)
	if err := pl.binder.Bind(ctx, pod, found); err != nil {
		logger.V(5).Info("Binding the pod's volumes failed", "pod", klog.KObj(pod), "node", nodeName, "err", err)
		return fwk.AsStatus(err)
	}
	logger.V(5).Info("Bound the pod's volumes", "pod", klog.KObj(pod), "node", nodeName)
	return nil
}
