package explain

// Verdict says what happens to a claim.
type Verdict string

// The claim verdicts.
const (
	// Bound: the claim is bound to Volume (the controller may still have
	// writes to finish, such as the claim's Bound status).
	Bound Verdict = "Bound"
	// WouldBind: the controller binds the claim to Volume at its next sync.
	WouldBind Verdict = "WouldBind"
	// WaitForFirstConsumer: the claim's class binds when a pod that uses
	// it is scheduled; Consumers lists the pods.
	WaitForFirstConsumer Verdict = "WaitForFirstConsumer"
	// WillProvision: no volume fits; Provisioner creates one.
	WillProvision Verdict = "WillProvision"
	// Unsatisfiable: nothing can satisfy the claim as the cluster is; it
	// stays Pending (or Lost).
	Unsatisfiable Verdict = "Unsatisfiable"
)

// Search names the rules a claim was matched with.
type Search string

// The searches.
const (
	// ControllerSearch is the PV controller's: no node, volumes grouped by
	// access-mode set, fewest modes first.
	ControllerSearch Search = "controller"
	// SchedulerSearch is kube-scheduler's for WaitForFirstConsumer claims:
	// every volume of the claim's class, on a node when one is given.
	SchedulerSearch Search = "scheduler"
)

// ClaimExplanation is why a claim is where it is, and what happens next.
type ClaimExplanation struct {
	// Claim is "namespace/name".
	Claim string `json:"claim"`
	// Phase is the claim's status phase as read.
	Phase string `json:"phase"`
	// Request is the storage request ("10Gi"), AccessModes and VolumeMode
	// what the claim asks for.
	Request     string   `json:"request"`
	AccessModes []string `json:"accessModes,omitempty"`
	VolumeMode  string   `json:"volumeMode"`
	// StorageClass is the class the claim is matched with ("" for none):
	// DefaultClass when that is assigned.
	StorageClass string `json:"storageClass"`
	// BindingMode is the class's volumeBindingMode, when the class exists.
	BindingMode string `json:"bindingMode,omitempty"`
	// DefaultClass is set when the claim has no class and the controller
	// assigns this default class to it (retroactive default StorageClass
	// assignment); the rest of the explanation is then for that class.
	DefaultClass string `json:"defaultClass,omitempty"`

	// Verdict is what happens; Summary says it in one line and Reason
	// says why.
	Verdict Verdict `json:"verdict"`
	Summary string  `json:"summary"`
	Reason  string  `json:"reason,omitempty"`
	// Volume is the volume of Bound and WouldBind.
	Volume string `json:"volume,omitempty"`
	// Provisioner is who provisions the claim's volume (WillProvision), or
	// would, once no volume fits (WaitForFirstConsumer).
	Provisioner *Provisioner `json:"provisioner,omitempty"`
	// Consumers are the pods in the claim's namespace that use it.
	Consumers []Consumer `json:"consumers,omitempty"`
	// Contenders are other pending claims that Volume fits as well:
	// whichever the controller syncs first (or the scheduler places first)
	// takes it.
	Contenders []string `json:"contenders,omitempty"`
	// Alternatives are volumes that do not fit now but may become the
	// claim's first choice before it is synced (a volume not marked
	// Available yet, a binding the controller rolls back).
	Alternatives []Alternative `json:"alternatives,omitempty"`

	// Search and Node say how Candidates were matched.
	Search Search `json:"search"`
	Node   string `json:"node,omitempty"`
	// Candidates are the volumes closest to fitting, closest first: the
	// chosen volume, the other volumes that fit, then the rejected ones by
	// the first rule they fail, latest rule first.
	Candidates []Candidate `json:"candidates,omitempty"`
	// More counts, by the first rule they fail, the volumes left out of
	// Candidates (Fits counts volumes that fit).
	More []RuleCount `json:"more,omitempty"`
	// Volumes is the number of volumes considered.
	Volumes int `json:"volumes"`
}

// Candidate is one volume and how it fares against the claim.
type Candidate struct {
	// Volume is the volume's name; Capacity, AccessModes and StorageClass
	// are its own.
	Volume       string   `json:"volume"`
	Capacity     string   `json:"capacity"`
	AccessModes  []string `json:"accessModes,omitempty"`
	StorageClass string   `json:"storageClass"`
	// Chosen marks the volume the claim binds to (or, on a node, that
	// kube-scheduler chooses).
	Chosen bool `json:"chosen,omitempty"`
	// Rule is the first rule the volume fails, Fits when none.
	Rule Rule `json:"rule"`
	// Detail says how far off the volume is ("capacity 8Gi < request
	// 10Gi"), or, for a volume that fits but is not chosen, why not.
	Detail string `json:"detail,omitempty"`
}

// RuleCount is a number of volumes that fail one rule first.
type RuleCount struct {
	Rule  Rule `json:"rule"`
	Count int  `json:"count"`
}

// ProvisionerKind says who runs a provisioner.
type ProvisionerKind string

// The provisioner kinds.
const (
	// InTree: the controller provisions the volume itself.
	InTree ProvisionerKind = "in-tree"
	// External: an external provisioner (a CSI driver's
	// external-provisioner) provisions it; the controller hands the claim
	// over with the volume.kubernetes.io/storage-provisioner annotation.
	External ProvisionerKind = "external"
	// Migrated: an in-tree plugin migrated to CSI; CSIDriver's external
	// provisioner provisions it.
	Migrated ProvisionerKind = "migrated"
)

// Provisioner is who provisions a claim's volume.
type Provisioner struct {
	// Name is the class's provisioner.
	Name string          `json:"name"`
	Kind ProvisionerKind `json:"kind"`
	// CSIDriver is the driver of a Migrated provisioner.
	CSIDriver string `json:"csiDriver,omitempty"`
	// Node is the node the volume is provisioned for (the claim's
	// volume.kubernetes.io/selected-node annotation).
	Node string `json:"node,omitempty"`
}

// Consumer is a pod that uses a claim.
type Consumer struct {
	// Pod is "namespace/name"; Node is the node it is scheduled to, "" if
	// it is not.
	Pod  string `json:"pod"`
	Node string `json:"node,omitempty"`
}

// Alternative is a volume that may yet become the claim's first choice.
type Alternative struct {
	Volume string `json:"volume"`
	Reason string `json:"reason"`
}
