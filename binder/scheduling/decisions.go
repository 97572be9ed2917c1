package scheduling

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BindingInfo is one decided binding: claim PVC goes to volume PV. The
// objects are shared: do not mutate them.
type BindingInfo struct {
	PVC *v1.PersistentVolumeClaim
	PV  *v1.PersistentVolume
}

// decisions remembers, per pod and node, the PodVolumes Assume recorded, so
// that Decision reads them back. A pod is identified by namespace, name and
// UID: a recreated pod with the same name starts with no decisions. Slices
// are copied in and out; both are non-nil, empty when nothing is needed.
// The objects they point to are shared.
type decisions struct {
	// mu guards pods.
	mu sync.RWMutex
	// pods maps a pod's namespace and name to its decisions.
	pods map[types.NamespacedName]*podDecisions
}

// podDecisions are the decisions for one pod, by node name. Node is unset.
type podDecisions struct {
	uid   types.UID
	nodes map[string]PodVolumes
}

func newDecisions() *decisions {
	return &decisions{pods: make(map[types.NamespacedName]*podDecisions)}
}

func podName(pod *v1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// record stores what was decided for pod on node, replacing an earlier
// decision for that node. A pod with another UID than the recorded one
// replaces all of the old pod's decisions.
func (d *decisions) record(pod *v1.Pod, node string, bindings []*BindingInfo, provisions []*v1.PersistentVolumeClaim) {
	pv := PodVolumes{StaticBindings: cloneNonNil(bindings), DynamicProvisions: cloneNonNil(provisions)}
	key := podName(pod)
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.pods[key]
	if p == nil || p.uid != pod.UID {
		p = &podDecisions{uid: pod.UID, nodes: make(map[string]PodVolumes, 1)}
		d.pods[key] = p
	}
	p.nodes[node] = pv
}

// get returns a copy of the decision for pod on node, with node as its
// Node.
func (d *decisions) get(pod *v1.Pod, node *v1.Node) (*PodVolumes, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	p := d.pods[podName(pod)]
	if p == nil || p.uid != pod.UID {
		return nil, false
	}
	pv, ok := p.nodes[node.Name]
	if !ok {
		return nil, false
	}
	return &PodVolumes{Node: node, StaticBindings: slices.Clone(pv.StaticBindings),
		DynamicProvisions: slices.Clone(pv.DynamicProvisions)}, true
}

// forget drops every decision for pod. Decisions for another pod with the
// same name but another UID are kept.
func (d *decisions) forget(pod *v1.Pod) {
	key := podName(pod)
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.pods[key]; p != nil && p.uid == pod.UID {
		delete(d.pods, key)
	}
}

// len returns the number of pods with decisions.
func (d *decisions) len() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.pods)
}

// cloneNonNil copies s; nil becomes an empty non-nil slice.
func cloneNonNil[S ~[]E, E any](s S) S {
	return append(make(S, 0, len(s)), s...)
}
