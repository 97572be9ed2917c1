package scheduling

import (
	"slices"
	"strconv"
	"strings"
)

// ReasonKind classifies why a pod's volumes do not fit a node, or no node
// at all.
type ReasonKind int

// The kinds of Reason. Message gives Kubernetes' text for each.
// UnboundImmediateClaim and the kinds from ClaimMissing to VolumeMissing
// are pod-level (PodLevel): they fail every node alike and are the answer
// of kube-scheduler's PreFilter; the others are the answer of its Filter
// for one node.
const (
	// VolumeNodeAffinityConflict: a bound claim's volume cannot be used
	// from the node: its required node affinity (translated to its CSI
	// driver's topology when the node's CSINode lists the volume's in-tree
	// plugin as migrated) does not select the node.
	VolumeNodeAffinityConflict ReasonKind = iota + 1
	// NoMatchingVolume: an unbound claim whose class cannot provision has
	// no available volume that fits it and the node.
	NoMatchingVolume
	// CannotProvision: an unbound claim has no matching volume and its
	// class cannot provision one for the node (its allowedTopologies
	// exclude the node's labels).
	CannotProvision
	// SelectedNodeConflict: a claim is already being provisioned for
	// another node (its volume.kubernetes.io/selected-node annotation).
	SelectedNodeConflict
	// NotEnoughSpace: the CapacityChecker found no room for a claim to
	// provision.
	NotEnoughSpace
	// VolumeNotExist: a bound claim's volume is not in the cache.
	VolumeNotExist
	// UnboundImmediateClaim (pod-level): the pod has an unbound claim with
	// immediate binding (or pre-bound by name, or of a class that does not
	// exist), which the Binder, not the scheduler, must bind first.
	UnboundImmediateClaim
	// ClaimMissing (pod-level): a claim of the pod does not exist (for a
	// generic ephemeral volume: not yet).
	ClaimMissing
	// ClaimLost (pod-level): a claim of the pod is Lost: its volume is
	// gone.
	ClaimLost
	// ClaimDeleting (pod-level): a claim of the pod is being deleted.
	ClaimDeleting
	// ClaimNotOwned (pod-level): the claim of a generic ephemeral volume
	// of the pod was not created for the pod.
	ClaimNotOwned
	// VolumeMissing (pod-level, with Config.VolumeZone): the volume a
	// claim is bound to does not exist, as the VolumeZone plugin's
	// PreFilter reports it.
	VolumeMissing
	// VolumeZoneConflict (with Config.VolumeZone): the zone or region
	// labels of a bound claim's volume exclude the node, as the VolumeZone
	// plugin's Filter reports it.
	VolumeZoneConflict
	// ClassZoneConflict (with Config.ClassZoneParameters): the zone or
	// zones parameter of the class of a claim to provision excludes the
	// node's zone. Kubernetes has no such check; the text is volbind's.
	ClassZoneConflict
)

// Kubernetes v1.37.2's texts for the node-level reasons: the
// VolumeBinding plugin's ErrReasonNodeConflict, ErrReasonBindConflict,
// ErrReasonNotEnoughSpace and ErrReasonPVNotExist, its PreFilter's reason
// for unbound immediate claims, and the VolumeZone plugin's
// ErrReasonConflict. The scheduler module's tests compare them with the
// in-tree constants.
const (
	msgNodeConflict     = "node(s) didn't match PersistentVolume's node affinity"
	msgBindConflict     = "node(s) didn't find available persistent volumes to bind"
	msgNotEnoughSpace   = "node(s) did not have enough free storage"
	msgPVNotExist       = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	msgUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
	msgVolumeZone       = "node(s) had no available volume zone"
	// msgClassZone is volbind's own: Kubernetes does not check class
	// parameters when scheduling.
	msgClassZone = "node(s) not in the zones allowed by the StorageClass's zone or zones parameter"
)

var kindNames = map[ReasonKind]string{
	VolumeNodeAffinityConflict: "VolumeNodeAffinityConflict",
	NoMatchingVolume:           "NoMatchingVolume",
	CannotProvision:            "CannotProvision",
	SelectedNodeConflict:       "SelectedNodeConflict",
	NotEnoughSpace:             "NotEnoughSpace",
	VolumeNotExist:             "VolumeNotExist",
	UnboundImmediateClaim:      "UnboundImmediateClaim",
	ClaimMissing:               "ClaimMissing",
	ClaimLost:                  "ClaimLost",
	ClaimDeleting:              "ClaimDeleting",
	ClaimNotOwned:              "ClaimNotOwned",
	VolumeMissing:              "VolumeMissing",
	VolumeZoneConflict:         "VolumeZoneConflict",
	ClassZoneConflict:          "ClassZoneConflict",
}

// String returns the kind's name, e.g. "NoMatchingVolume".
func (k ReasonKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "ReasonKind(" + strconv.Itoa(int(k)) + ")"
}

// PodLevel reports whether the kind fails the pod on every node, as
// kube-scheduler's PreFilter does, rather than one node.
func (k ReasonKind) PodLevel() bool {
	switch k {
	case UnboundImmediateClaim, ClaimMissing, ClaimLost, ClaimDeleting, ClaimNotOwned, VolumeMissing:
		return true
	}
	return false
}

// Message returns kube-scheduler's text for a node-level kind, which
// scheduler events aggregate over nodes ("3 node(s) didn't match
// PersistentVolume's node affinity"). NoMatchingVolume, CannotProvision and
// SelectedNodeConflict share Kubernetes' ErrReasonBindConflict text. The
// texts of pod-level kinds other than UnboundImmediateClaim name the claim:
// use Reason.Message; here they are the kind's name.
func (k ReasonKind) Message() string {
	switch k {
	case VolumeNodeAffinityConflict:
		return msgNodeConflict
	case NoMatchingVolume, CannotProvision, SelectedNodeConflict:
		return msgBindConflict
	case NotEnoughSpace:
		return msgNotEnoughSpace
	case VolumeNotExist:
		return msgPVNotExist
	case UnboundImmediateClaim:
		return msgUnboundImmediate
	case VolumeZoneConflict:
		return msgVolumeZone
	case ClassZoneConflict:
		return msgClassZone
	}
	return k.String()
}

// order is the position of a node-level kind's text in kube-scheduler's
// list of a node's reasons (FindPodVolumes appends node affinity, bind
// conflict, storage, missing volume, in that order; VolumeZone runs after
// VolumeBinding). Pod-level kinds come last.
func (k ReasonKind) order() int {
	switch k {
	case VolumeNodeAffinityConflict:
		return 0
	case NoMatchingVolume, CannotProvision, SelectedNodeConflict:
		return 1
	case ClassZoneConflict:
		return 2
	case NotEnoughSpace:
		return 3
	case VolumeNotExist:
		return 4
	case VolumeZoneConflict:
		return 5
	}
	return 6
}

// Code is the kube-scheduler framework status code that an answer of this
// package stands for. Every Reason is UnschedulableAndUnresolvable, as
// every reason of the VolumeBinding and VolumeZone plugins is (preempting
// pods frees no volume); an error of Find or Check is an Error.
type Code int

const (
	// CodeUnschedulableAndUnresolvable means the node (or, for a
	// pod-level reason, every node) cannot take the pod until the
	// cluster's volumes, claims, classes or nodes change.
	CodeUnschedulableAndUnresolvable Code = iota + 1
	// CodeError means the pod could not be evaluated.
	CodeError
)

// String returns the framework's name of the code.
func (c Code) String() string {
	switch c {
	case CodeUnschedulableAndUnresolvable:
		return "UnschedulableAndUnresolvable"
	case CodeError:
		return "Error"
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Reason is one reason why a node does not fit a pod's volumes, or, for a
// pod-level kind, why no node does.
type Reason struct {
	// Kind classifies the reason.
	Kind ReasonKind
	// Claim is the "namespace/name" of the claim at fault.
	Claim string
	// Volume is the volume at fault, if any.
	Volume string
	// Detail says why, for logs and events.
	Detail string

	// text is Kubernetes' message of a pod-level reason, which names the
	// claim, its volume or the pod; "" for the other kinds.
	text string
}

// Message returns Kubernetes' text for the reason: its kind's for a
// node-level reason, the PreFilter's message naming the claim for a
// pod-level one (for example `persistentvolumeclaim "data" bound to
// non-existent persistentvolume "pv-1"`).
func (r Reason) Message() string {
	if r.text != "" {
		return r.text
	}
	return r.Kind.Message()
}

// Code returns the framework status code of the reason:
// CodeUnschedulableAndUnresolvable for every kind.
func (r Reason) Code() Code { return CodeUnschedulableAndUnresolvable }

// String describes the reason with its claim, volume and detail.
func (r Reason) String() string {
	var b strings.Builder
	b.WriteString(r.Kind.String())
	if r.Claim != "" {
		b.WriteString(": claim ")
		b.WriteString(r.Claim)
	}
	if r.Volume != "" {
		b.WriteString(", volume ")
		b.WriteString(r.Volume)
	}
	if r.Detail != "" {
		b.WriteString(": ")
		b.WriteString(r.Detail)
	}
	return b.String()
}

// Messages returns the distinct Kubernetes texts of reasons in the order
// kube-scheduler's status for a node lists them: node affinity, bind
// conflict (then volbind's ClassZoneConflict text), storage, missing
// volume, then the VolumeZone plugin's text and the texts of pod-level
// reasons.
func Messages(reasons []Reason) []string {
	sorted := slices.Clone(reasons)
	slices.SortStableFunc(sorted, func(a, b Reason) int { return a.Kind.order() - b.Kind.order() })
	out := make([]string, 0, len(sorted))
	for _, r := range sorted {
		if m := r.Message(); !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// HasKind reports whether reasons contain one of kind.
func HasKind(reasons []Reason, kind ReasonKind) bool {
	return slices.ContainsFunc(reasons, func(r Reason) bool { return r.Kind == kind })
}

// PodReason returns the pod-level reason among reasons, if any: the answer
// for every node.
func PodReason(reasons []Reason) (Reason, bool) {
	i := slices.IndexFunc(reasons, func(r Reason) bool { return r.Kind.PodLevel() })
	if i < 0 {
		return Reason{}, false
	}
	return reasons[i], true
}
