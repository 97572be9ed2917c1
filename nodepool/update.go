package nodepool

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// NodeUpdate is a binding annotation write: bind Node to Pod, or clear its
// binding when Pod is the zero value. Node is the caller's input, shared;
// do not mutate it.
type NodeUpdate struct {
	Node *v1.Node
	Pod  types.NamespacedName
}

// Clear reports whether the update clears the node's binding.
func (u NodeUpdate) Clear() bool { return u.Pod == (types.NamespacedName{}) }

// Apply returns a deep copy of the node with the update applied, for an
// Update call. The input node is not modified.
func (u NodeUpdate) Apply() *v1.Node {
	n := u.Node.DeepCopy()
	if u.Clear() {
		delete(n.Annotations, BoundPodAnnotation)
		return n
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[BoundPodAnnotation] = u.Pod.String()
	return n
}

// MergePatch returns the update as a JSON merge patch (types.MergePatchType)
// for a Patch call.
func (u NodeUpdate) MergePatch() []byte {
	var v any
	if !u.Clear() {
		v = u.Pod.String()
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{BoundPodAnnotation: v}}})
	return b
}
