package volumebinding

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/volbind/volbind/binder/scheduling"
)

const stateKey fwk.StateKey = Name

// state is the pod's scheduling cycle: written by PreFilter, filled by
// Filter for many nodes in parallel, read by the later extension points.
// It is kept by pointer in the CycleState, so Clone shares it.
type state struct {
	// mu guards byNode and hasStatic, which Filter writes in parallel.
	mu sync.Mutex
	// byNode holds Find's decision for each node that fits.
	byNode map[string]*scheduling.PodVolumes
	// hasStatic is whether some fitting node binds an existing volume.
	hasStatic bool
	// allBound is set by Reserve: nothing for PreBind to do.
	allBound bool
}

// Clone shares the state, as the in-tree plugin does: later phases see
// Filter's decisions.
func (s *state) Clone() fwk.StateData { return s }

func readState(cs fwk.CycleState) (*state, error) {
	d, err := cs.Read(stateKey)
	if err != nil {
		return nil, err
	}
	s, ok := d.(*state)
	if !ok {
		return nil, fmt.Errorf("%s: cycle state holds %T, not the plugin's state", Name, d)
	}
	return s, nil
}

// PreFilter skips a pod without claims, rejects a pod whose claims cannot
// be scheduled now with binder/scheduling's pod-level answer (Check: the
// in-tree texts, UnschedulableAndUnresolvable), and narrows the nodes to
// those whose hostname a bound claim's local volume names.
func (pl *Plugin) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if pl.resizeSkip && isResizeDeferred(pod) {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if err := pl.synced.wait(ctx); err != nil {
		return nil, fwk.AsStatus(err)
	}
	if !hasClaims(pod) {
		cs.Write(stateKey, &state{})
		return nil, fwk.NewStatus(fwk.Skip)
	}
	reasons, err := pl.binder.Check(ctx, pod)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if len(reasons) > 0 {
		return nil, reasonsStatus(reasons)
	}
	cs.Write(stateKey, &state{byNode: map[string]*scheduling.PodVolumes{}})
	return pl.narrow(pod, nodes), nil
}

// PreFilterExtensions returns nil: other pods do not change this plugin's
// answer.
func (pl *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// hasClaims reports whether the pod uses claims (persistentVolumeClaim or
// generic ephemeral volumes).
func hasClaims(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if vol := &pod.Spec.Volumes[i]; vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil {
			return true
		}
	}
	return false
}

// reasonsStatus is the framework status of binder/scheduling's reasons:
// UnschedulableAndUnresolvable (every Reason's Code) with their texts in
// the in-tree order.
func reasonsStatus(reasons []scheduling.Reason) *fwk.Status {
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, scheduling.Messages(reasons)...)
}

// narrow returns the nodes a pod can only run on because a bound claim's
// volume requires one of a set of kubernetes.io/hostname values in every
// node affinity term; nil (all nodes) when no bound volume is pinned so.
// Nodes outside the set would fail Filter with a node affinity conflict
// (translation to CSI rewrites only zone and region keys).
func (pl *Plugin) narrow(pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.PreFilterResult {
	var hosts sets.Set[string]
	for i := range pod.Spec.Volumes {
		name, _ := claimName(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		pvc, ok := pl.binder.Claim(pod.Namespace, name)
		if !ok || pvc.Spec.VolumeName == "" {
			continue
		}
		if _, bound := pvc.Annotations[volume.AnnBindCompleted]; !bound {
			continue
		}
		pv, ok := pl.binder.Volume(pvc.Spec.VolumeName)
		if !ok {
			continue
		}
		h, ok := pinnedHosts(pv)
		if !ok {
			continue
		}
		if hosts == nil {
			hosts = h
		} else {
			hosts = hosts.Intersection(h)
		}
	}
	if hosts == nil {
		return nil
	}
	names := sets.New[string]()
	for _, ni := range nodes {
		n := ni.Node()
		if n != nil && hosts.Has(n.Labels[v1.LabelHostname]) {
			names.Insert(n.Name)
		}
	}
	return &fwk.PreFilterResult{NodeNames: names}
}

// claimName returns the claim a volume uses, "" for none, and whether it
// is a generic ephemeral volume's claim.
func claimName(pod *v1.Pod, vol *v1.Volume) (string, bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, false
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol), true
	}
	return "", false
}

// pinnedHosts returns the hostnames pv's required node affinity admits when
// every term has a kubernetes.io/hostname In expression.
func pinnedHosts(pv *v1.PersistentVolume) (sets.Set[string], bool) {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil || len(na.Required.NodeSelectorTerms) == 0 {
		return nil, false
	}
	hosts := sets.New[string]()
	for _, term := range na.Required.NodeSelectorTerms {
		found := false
		for _, e := range term.MatchExpressions {
			if e.Key == v1.LabelHostname && e.Operator == v1.NodeSelectorOpIn {
				hosts.Insert(e.Values...)
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return hosts, true
}

// isResizeDeferred reports a pod whose in-place resize waits for room; with
// InPlacePodVerticalScalingSchedulerPreemption the plugin leaves it alone,
// as the in-tree plugin does.
func isResizeDeferred(pod *v1.Pod) bool { return resource.IsPodResizeDeferred(pod) }
