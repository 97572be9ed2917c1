package cache

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

// Decision is what was decided for one pod on one node: the claims to bind
// to existing volumes and the claims to provision. Both are non-nil, empty
// when nothing is needed.
type Decision struct {
	Bindings      []*BindingInfo
	Provisionings []*v1.PersistentVolumeClaim
}

// PodBindings remembers, per pod and candidate node, the volume decisions of
// the scheduler's find step, so that its assume and bind steps reuse them.
// A pod is identified by namespace, name and UID: a recreated pod with the
// same name starts with no decisions.
//
// The zero value is not usable; use NewPodBindings. All methods are safe for
// concurrent use. Slices are copied in and out; the objects they point to are
// shared and must not be mutated.
type PodBindings struct {
	// mu guards pods.
	mu sync.RWMutex
	// pods maps "namespace/name" to the decisions for that pod.
	pods map[string]*podDecisions
}

type podDecisions struct {
	uid   types.UID
	nodes map[string]Decision
}

// NewPodBindings returns an empty PodBindings.
func NewPodBindings() *PodBindings {
	return &PodBindings{pods: make(map[string]*podDecisions)}
}

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

// Update records the decision for pod on node, replacing an earlier one for
// that node. A nil slice means "nothing needed" and reads back as empty, not
// nil. A pod with a different UID than the recorded one replaces all of the
// old pod's decisions. A nil pod is ignored.
func (c *PodBindings) Update(pod *v1.Pod, node string, bindings []*BindingInfo, provisionings []*v1.PersistentVolumeClaim) {
	if pod == nil {
		return
	}
	d := Decision{
		Bindings:      cloneNonNil(bindings),
		Provisionings: cloneNonNil(provisionings),
	}
	key := podKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pods[key]
	if p == nil || p.uid != pod.UID {
		p = &podDecisions{uid: pod.UID, nodes: make(map[string]Decision, 1)}
		c.pods[key] = p
	}
	p.nodes[node] = d
}

// lookup returns the decision for pod on node.
func (c *PodBindings) lookup(pod *v1.Pod, node string) (Decision, bool) {
	if pod == nil {
		return Decision{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	p := c.pods[podKey(pod)]
	if p == nil || p.uid != pod.UID {
		return Decision{}, false
	}
	d, ok := p.nodes[node]
	return d, ok
}

// Bindings returns a copy of the bindings decided for pod on node: nil when
// nothing was recorded, empty and non-nil when no binding is needed.
func (c *PodBindings) Bindings(pod *v1.Pod, node string) []*BindingInfo {
	d, ok := c.lookup(pod, node)
	if !ok {
		return nil
	}
	return slices.Clone(d.Bindings)
}

// Provisionings returns a copy of the claims decided to be provisioned for
// pod on node: nil when nothing was recorded, empty and non-nil when no
// provisioning is needed.
func (c *PodBindings) Provisionings(pod *v1.Pod, node string) []*v1.PersistentVolumeClaim {
	d, ok := c.lookup(pod, node)
	if !ok {
		return nil
	}
	return slices.Clone(d.Provisionings)
}

// Decision returns a copy of the decision for pod on node and whether one
// was recorded.
func (c *PodBindings) Decision(pod *v1.Pod, node string) (Decision, bool) {
	d, ok := c.lookup(pod, node)
	if !ok {
		return Decision{}, false
	}
	return Decision{Bindings: slices.Clone(d.Bindings), Provisionings: slices.Clone(d.Provisionings)}, true
}

// Decisions returns a copy of all decisions for pod, by node name; nil when
// nothing was recorded for the pod.
func (c *PodBindings) Decisions(pod *v1.Pod) map[string]Decision {
	if pod == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	p := c.pods[podKey(pod)]
	if p == nil || p.uid != pod.UID {
		return nil
	}
	out := make(map[string]Decision, len(p.nodes))
	for node, d := range p.nodes {
		out[node] = Decision{Bindings: slices.Clone(d.Bindings), Provisionings: slices.Clone(d.Provisionings)}
	}
	return out
}

// DeletePod forgets all decisions for pod. Decisions recorded for another
// pod with the same name but a different UID are kept. A nil pod is ignored.
func (c *PodBindings) DeletePod(pod *v1.Pod) {
	if pod == nil {
		return
	}
	key := podKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pods[key]; p != nil && p.uid == pod.UID {
		delete(c.pods, key)
	}
}

// Len returns the number of pods with decisions.
func (c *PodBindings) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.pods)
}

// cloneNonNil copies s; nil becomes an empty non-nil slice.
func cloneNonNil[S ~[]E, E any](s S) S {
	return append(make(S, 0, len(s)), s...)
}
