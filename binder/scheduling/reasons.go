package scheduling

import (
	"slices"
	"strconv"
	"strings"
)

// ReasonKind classifies why a node does not fit a pod's volumes.
type ReasonKind int

// The kinds of Reason. Message gives Kubernetes' text for each.
const (
	// VolumeNodeAffinityConflict: a bound claim's volume cannot be used
	// from the node (zone labels or node affinity).
	VolumeNodeAffinityConflict ReasonKind = iota + 1
	// NoMatchingVolume: an unbound claim whose class cannot provision has
	// no available volume that fits it and the node.
	NoMatchingVolume
	// CannotProvision: an unbound claim has no matching volume and its
	// class cannot provision one for the node (allowedTopologies or zone
	// parameters exclude the node's labels).
	CannotProvision
	// SelectedNodeConflict: a claim is already being provisioned for
	// another node (its volume.kubernetes.io/selected-node annotation).
	SelectedNodeConflict
	// NotEnoughSpace: the CapacityChecker found no room for a claim to
	// provision.
	NotEnoughSpace
	// VolumeNotExist: a bound claim's volume is not in the cache.
	VolumeNotExist
	// UnboundImmediateClaim: the pod has an unbound claim with immediate
	// binding (or pre-bound by name), which the Binder, not the scheduler,
	// must bind first. It fails every node alike.
	UnboundImmediateClaim
)

// Kubernetes' texts for the reasons.
const (
	msgNodeConflict     = "node(s) had volume node affinity conflict"
	msgBindConflict     = "node(s) didn't find available persistent volumes to bind"
	msgNotEnoughSpace   = "node(s) did not have enough free storage"
	msgPVNotExist       = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	msgUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
)

var kindNames = map[ReasonKind]string{
	VolumeNodeAffinityConflict: "VolumeNodeAffinityConflict",
	NoMatchingVolume:           "NoMatchingVolume",
	CannotProvision:            "CannotProvision",
	SelectedNodeConflict:       "SelectedNodeConflict",
	NotEnoughSpace:             "NotEnoughSpace",
	VolumeNotExist:             "VolumeNotExist",
	UnboundImmediateClaim:      "UnboundImmediateClaim",
}

// String returns the kind's name, e.g. "NoMatchingVolume".
func (k ReasonKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "ReasonKind(" + strconv.Itoa(int(k)) + ")"
}

// Message returns kube-scheduler's text for the kind, which scheduler
// events aggregate over nodes ("3 node(s) had volume node affinity
// conflict"). NoMatchingVolume, CannotProvision and SelectedNodeConflict
// share Kubernetes' ErrReasonBindConflict text.
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
	}
	return k.String()
}

// Reason is one reason why a node does not fit a pod's volumes.
type Reason struct {
	// Kind classifies the reason.
	Kind ReasonKind
	// Claim is the "namespace/name" of the claim at fault.
	Claim string
	// Volume is the volume at fault, if any.
	Volume string
	// Detail says why, for logs and events.
	Detail string
}

// Message returns Kubernetes' text for the reason's kind.
func (r Reason) Message() string { return r.Kind.Message() }

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

// Messages returns the distinct Kubernetes texts of reasons, sorted, as
// kube-scheduler reports them for a node.
func Messages(reasons []Reason) []string {
	out := make([]string, 0, len(reasons))
	for _, r := range reasons {
		out = append(out, r.Message())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// HasKind reports whether reasons contain one of kind.
func HasKind(reasons []Reason, kind ReasonKind) bool {
	return slices.ContainsFunc(reasons, func(r Reason) bool { return r.Kind == kind })
}
