package nodepool

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Annotations and label keys this package reads and writes.
const (
	// BoundPodAnnotation on a node names the pod ("namespace/name") the
	// node is bound to. Compute sets and clears it through NodeUpdate; boot
	// specs carry it from the start.
	BoundPodAnnotation = "nodepool.volbind.io/bound-pod"
	// PhaseAnnotation on a node holds its Phase. Boot specs start in
	// PhaseCreating; the Dispenser writes PhaseClaimed, PhaseAvailable and
	// PhaseCleaning; the caller's boot code writes PhaseCreated and
	// PhaseAvailable as the machine comes up.
	PhaseAnnotation = "nodepool.volbind.io/phase"
	// InstanceTypeLabel is the node label holding the instance type.
	InstanceTypeLabel = v1.LabelInstanceTypeStable
	// DefaultCapacityTypeKey is the default Config.CapacityTypeKey.
	DefaultCapacityTypeKey = "nodepool.volbind.io/capacity-type"
	// DefaultDiskSizeKey is the default Config.DiskSizeKey.
	DefaultDiskSizeKey = "nodepool.volbind.io/disk-size"
	// CapacitySpot and CapacityOnDemand are the capacity type label values.
	CapacitySpot     = "spot"
	CapacityOnDemand = "on-demand"
)

// Phase is where a node is in its life in the pool.
type Phase string

// Node phases. Only PhaseCreating, PhaseCreated and PhaseAvailable nodes take
// part in a round; a PhaseClaimed node is never stopped; PhaseCleaning nodes
// (used nodes handed back) are stopped.
const (
	PhaseCreating    Phase = "Creating"
	PhaseCreated     Phase = "Created"
	PhaseAvailable   Phase = "Available"
	PhaseClaimed     Phase = "Claimed"
	PhaseCleaning    Phase = "Cleaning"
	PhaseTerminating Phase = "Terminating"
	PhaseTerminated  Phase = "Terminated"
)

// NodePhase returns the node's phase: PhaseTerminating for a node being
// deleted, else its PhaseAnnotation, else PhaseAvailable when its Ready
// condition is true and PhaseCreating otherwise.
func NodePhase(node *v1.Node) Phase {
	if node.DeletionTimestamp != nil {
		return PhaseTerminating
	}
	if p, ok := node.Annotations[PhaseAnnotation]; ok && p != "" {
		return Phase(p)
	}
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if c.Type == v1.NodeReady {
			if c.Status == v1.ConditionTrue {
				return PhaseAvailable
			}
			break
		}
	}
	return PhaseCreating
}

// takesPart reports whether a node in phase p can be bound in a round.
func (p Phase) takesPart() bool {
	return p == PhaseCreating || p == PhaseCreated || p == PhaseAvailable
}

// BoundPod returns the pod the node is bound to, from BoundPodAnnotation.
// ok is false when the node is unbound or the annotation is malformed.
func BoundPod(node *v1.Node) (pod types.NamespacedName, ok bool) {
	v := node.Annotations[BoundPodAnnotation]
	if v == "" {
		return types.NamespacedName{}, false
	}
	ns, name, found := strings.Cut(v, "/")
	if !found || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// podKey returns the pod's identity.
func podKey(pod *v1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// IsWaiting is the default Config.IsWaiting: the pod is pending and not
// being deleted. spec.nodeName is not looked at: a virtual-kubelet provider's
// pods are scheduled to the virtual node and still wait for a machine.
func IsWaiting(pod *v1.Pod) bool {
	return pod.DeletionTimestamp == nil && (pod.Status.Phase == v1.PodPending || pod.Status.Phase == "")
}
