package volumebinding

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/helper"

	"github.com/volbind/volbind/binder/scheduling"
)

// usage is the requested and available bytes of one storage class on a
// node.
type usage struct{ requested, capacity int64 }

// scorer rates a node from its per-class usage.
type scorer func(map[string]*usage) int64

// newScorer builds the in-tree utilization scorer from the args' shape:
// each class scores shape(requested*100/capacity) (100 when the capacity is
// zero or exceeded), the node scores the rounded mean over classes.
func newScorer(shape []config.UtilizationShapePoint) scorer {
	fs := make(helper.FunctionShape, 0, len(shape))
	for _, p := range shape {
		fs = append(fs, helper.FunctionShapePoint{
			Utilization: int64(p.Utilization),
			Score:       int64(p.Score) * (fwk.MaxScore / config.MaxCustomPriorityScore),
		})
	}
	f := helper.BuildBrokenLinearFunction(fs)
	return func(classes map[string]*usage) int64 {
		if len(classes) == 0 {
			return 0
		}
		var sum int64
		for _, u := range classes {
			util := int64(100)
			if u.capacity != 0 && u.requested <= u.capacity {
				util = u.requested * 100 / u.capacity
			}
			sum += f(util)
		}
		return int64(math.Round(float64(sum) / float64(len(classes))))
	}
}

// PreScore skips scoring when StorageCapacityScoring is off, as the in-tree
// plugin does (with it off, it scores only nodes with static bindings).
func (pl *Plugin) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	if pl.scorer == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	if _, err := readState(cs); err != nil {
		return fwk.AsStatus(err)
	}
	return nil
}

// Score rates the node by the utilization its decision implies: the
// chosen existing volumes' request against their size, or, for a pod that
// only provisions, the requests against the CSIStorageCapacity that
// admitted them.
func (pl *Plugin) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	if pl.scorer == nil {
		return 0, nil
	}
	s, err := readState(cs)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	node := ni.Node()
	s.mu.Lock()
	found, ok := s.byNode[node.Name]
	s.mu.Unlock()
	if !ok {
		return 0, nil
	}
	classes := map[string]*usage{}
	if len(found.StaticBindings) > 0 {
		for _, bi := range found.StaticBindings {
			u := classUsage(classes, bi.PV.Spec.StorageClassName)
			req := bi.PVC.Spec.Resources.Requests[v1.ResourceStorage]
			size := bi.PV.Spec.Capacity[v1.ResourceStorage]
			u.requested += req.Value()
			u.capacity += size.Value()
		}
		return pl.scorer(classes), nil
	}
	if err := pl.provisionUsage(ctx, classes, found, node); err != nil {
		return 0, fwk.AsStatus(err)
	}
	return pl.scorer(classes), nil
}

// provisionUsage adds the claims to provision whose class reports
// CSIStorageCapacity: the capacity is that of the object that admitted
// the claim (not summed: claims of one class share it).
func (pl *Plugin) provisionUsage(ctx context.Context, classes map[string]*usage, found *scheduling.PodVolumes, node *v1.Node) error {
	for _, pvc := range found.DynamicProvisions {
		name := volume.GetPersistentVolumeClaimClass(pvc)
		class, err := pl.classes.Get(name)
		if err != nil {
			return err
		}
		_, c, err := pl.capacity.Lookup(ctx, class, pvc, node)
		if err != nil {
			return err
		}
		if c == nil || c.Capacity == nil {
			continue
		}
		u := classUsage(classes, name)
		u.capacity = c.Capacity.Value()
		req := pvc.Spec.Resources.Requests[v1.ResourceStorage]
		u.requested += req.Value()
	}
	return nil
}

func classUsage(classes map[string]*usage, name string) *usage {
	u, ok := classes[name]
	if !ok {
		u = &usage{}
		classes[name] = u
	}
	return u
}

// ScoreExtensions returns nil: scores are already in [0, 100].
func (pl *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }
