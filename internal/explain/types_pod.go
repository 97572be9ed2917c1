package explain

// PodVerdict says whether a pod's volumes let it be scheduled.
type PodVerdict string

// The pod verdicts.
const (
	// Scheduled: the pod is on a node already (spec.nodeName).
	Scheduled PodVerdict = "Scheduled"
	// Schedulable: the pod's claims can be satisfied on at least one node.
	Schedulable PodVerdict = "Schedulable"
	// Unschedulable: on no node (of those explained), or the pod cannot
	// be evaluated at all (Error says why).
	Unschedulable PodVerdict = "Unschedulable"
)

// PodExplanation is, node by node, whether a pod's PersistentVolumeClaims
// can be satisfied there, as kube-scheduler's VolumeBinding plugin decides
// (volumes only: other plugins, such as resources or taints, are not
// consulted).
type PodExplanation struct {
	// Pod is "namespace/name"; Node the node it is scheduled to, if any.
	Pod  string `json:"pod"`
	Node string `json:"node,omitempty"`
	// Verdict is the outcome; Summary says it as kube-scheduler's event
	// would ("0/3 nodes are available: ...").
	Verdict PodVerdict `json:"verdict"`
	Summary string     `json:"summary"`
	// Error is why the pod cannot be evaluated on any node (a claim that
	// does not exist or is being deleted), with kube-scheduler's text.
	Error string `json:"error,omitempty"`
	// Claims explains each of the pod's claims, in the order of its
	// volumes.
	Claims []*ClaimExplanation `json:"claims,omitempty"`
	// FitNodes are the nodes where the pod's claims can be satisfied.
	FitNodes []string `json:"fitNodes"`
	// Nodes is the verdict of every node explained, by node name.
	Nodes []NodeExplanation `json:"nodes,omitempty"`
}

// NodeExplanation is one node's verdict for a pod.
type NodeExplanation struct {
	Node string `json:"node"`
	Fits bool   `json:"fits"`
	// Reasons are why it does not fit, in kube-scheduler's order.
	Reasons []NodeReason `json:"reasons,omitempty"`
	// Claims say what each claim gets on a node that fits.
	Claims []NodeClaim `json:"claims,omitempty"`
}

// NodeReason is one reason why a node does not fit, with what decided it.
type NodeReason struct {
	// Message is kube-scheduler's text ("node(s) didn't find available
	// persistent volumes to bind"); Kind is binder/scheduling's
	// ReasonKind ("NoMatchingVolume").
	Message string `json:"message"`
	Kind    string `json:"kind"`
	// Claim is the claim at fault ("namespace/name"), Volume the volume,
	// if one decided.
	Claim  string `json:"claim,omitempty"`
	Volume string `json:"volume,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Candidates are, for a claim that no volume fits on the node, the
	// volumes closest to fitting there; More counts the others by rule.
	Candidates []Candidate `json:"candidates,omitempty"`
	More       []RuleCount `json:"more,omitempty"`
	// Capacities are, for NotEnoughSpace, the CSIStorageCapacity objects
	// of the claim's class that reach the node, none large enough.
	Capacities []CapacityObject `json:"capacities,omitempty"`
}

// NodeClaim is what one claim of a pod gets on a node that fits.
type NodeClaim struct {
	Claim string `json:"claim"`
	// Action is "bound" (already), "bind" (to Volume, chosen by
	// kube-scheduler) or "provision".
	Action string `json:"action"`
	Volume string `json:"volume,omitempty"`
	// Provisioner provisions it; Capacity is the CSIStorageCapacity that
	// admits it, when the driver tracks capacity.
	Provisioner string          `json:"provisioner,omitempty"`
	Capacity    *CapacityObject `json:"capacity,omitempty"`
}

// CapacityObject is one CSIStorageCapacity as it bears on a claim.
type CapacityObject struct {
	// Name is "namespace/name"; Limit the largest volume it admits
	// (maximumVolumeSize, else capacity; "" when neither is set).
	Name   string `json:"name"`
	Limit  string `json:"limit,omitempty"`
	Detail string `json:"detail,omitempty"`
}
