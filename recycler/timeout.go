package recycler

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Timeout is how long a recycler pod may run for one kind of volume source:
// Minimum plus PerGiB for every whole GiB of the volume's capacity
// (capacity rounded down to whole GiB).
//
// kube-controller-manager takes the same two values from its flags but
// allows the larger of Minimum and PerGiB times the capacity
// (CalculateTimeoutForVolume); the sum used here is never shorter, so a pod
// that would finish in time under kube-controller-manager finishes in time
// here too.
type Timeout struct {
	// Minimum is the time allowed for an empty volume. Zero means the
	// default of the volume's kind.
	Minimum time.Duration
	// PerGiB is the time added per whole GiB of capacity. Zero means the
	// default of the volume's kind.
	PerGiB time.Duration
}

// Kubernetes' defaults: kube-controller-manager's flags
// --pv-recycler-minimum-timeout-nfs (300 s),
// --pv-recycler-increment-timeout-nfs (30 s),
// --pv-recycler-minimum-timeout-hostpath (60 s) and
// --pv-recycler-timeout-increment-hostpath (30 s).
const (
	DefaultNFSMinimumTimeout      = 300 * time.Second
	DefaultNFSTimeoutPerGiB       = 30 * time.Second
	DefaultHostPathMinimumTimeout = 60 * time.Second
	DefaultHostPathTimeoutPerGiB  = 30 * time.Second
)

// withDefaults fills zero (or negative) fields from def.
func (t Timeout) withDefaults(def Timeout) Timeout {
	if t.Minimum <= 0 {
		t.Minimum = def.Minimum
	}
	if t.PerGiB <= 0 {
		t.PerGiB = def.PerGiB
	}
	return t
}

// For returns the time limit for recycling pv: Minimum plus PerGiB per
// whole GiB of pv's storage capacity. A nil pv, or one without capacity,
// gets Minimum; negative fields count as zero. It never overflows: huge capacities get the largest
// time.Duration.
func (t Timeout) For(pv *v1.PersistentVolume) time.Duration {
	var bytes int64
	if pv != nil {
		q := pv.Spec.Capacity[v1.ResourceStorage]
		bytes = q.Value()
	}
	minimum := max(t.Minimum, 0)
	gib := bytes / (1 << 30)
	if gib <= 0 || t.PerGiB <= 0 {
		return minimum
	}
	if gib > int64((math.MaxInt64-minimum)/t.PerGiB) {
		return time.Duration(math.MaxInt64)
	}
	return minimum + time.Duration(gib)*t.PerGiB
}

// deadlineSeconds converts d into the pod's activeDeadlineSeconds, rounded
// up and at least one second.
func deadlineSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return max(s, 1)
}
