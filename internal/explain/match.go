package explain

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// volumeInfo is what a scan reads of one volume, derived once by New.
type volumeInfo struct {
	pv    *v1.PersistentVolume
	class string
	// capacity is the storage capacity; bytes its value rounded up, for
	// distances.
	capacity resource.Quantity
	bytes    int64
	modes    modeSet
	// invalid says why the Binder keeps the volume out of its index, or "".
	invalid string
}

func infoOf(pv *v1.PersistentVolume) volumeInfo {
	q := pv.Spec.Capacity[v1.ResourceStorage]
	m, _ := modesOf(pv.Spec.AccessModes)
	return volumeInfo{pv: pv, class: volume.GetPersistentVolumeClass(pv), capacity: q, bytes: q.Value(), modes: m,
		invalid: invalidVolume(pv)}
}

// matcher checks volumes against one claim with the rules of one search.
// It reproduces component-helpers' FindMatchingVolume as the PV controller
// runs it (per access-mode set, no node) or as kube-scheduler does (all
// volumes of the class, on a node), rule by rule, so that it can say which
// rule a volume fails first; the choice itself comes from internal/pvindex,
// the Binder's own index.
type matcher struct {
	claim   *v1.PersistentVolumeClaim
	class   string
	want    modeSet
	unknown bool // the claim asks for an unknown access mode
	mode    v1.PersistentVolumeMode
	vac     string
	request resource.Quantity
	reqB    int64
	// selector is nil when the claim has none.
	selector labels.Selector
	// scheduler selects kube-scheduler's rules; node, when set, is the
	// node whose labels the volumes' node affinity must admit.
	scheduler bool
	node      *v1.Node
	// unmarked: unbound volumes whose phase is empty or Pending are
	// candidates (Config.UnmarkedCandidates; never for the scheduler).
	unmarked bool
}

// newMatcher returns the matcher of claim, whose selector must parse
// (invalidClaim checks that first).
func newMatcher(claim *v1.PersistentVolumeClaim, scheduler bool, node *v1.Node, unmarked bool) *matcher {
	want, unknown := modesOf(claim.Spec.AccessModes)
	req := claim.Spec.Resources.Requests[v1.ResourceStorage]
	m := &matcher{
		claim: claim, class: volume.GetPersistentVolumeClaimClass(claim), want: want, unknown: unknown,
		mode: modeOrDefault(claim.Spec.VolumeMode), vac: ptr.Deref(claim.Spec.VolumeAttributesClassName, ""),
		request: req, reqB: req.Value(), scheduler: scheduler, node: node, unmarked: unmarked && !scheduler,
	}
	if claim.Spec.Selector != nil {
		m.selector, _ = metav1.LabelSelectorAsSelector(claim.Spec.Selector)
	}
	return m
}

func modeOrDefault(m *v1.PersistentVolumeMode) v1.PersistentVolumeMode {
	if m == nil {
		return v1.PersistentVolumeFilesystem
	}
	return *m
}

// preboundTo reports whether pv's claimRef names the claim with its UID or
// none (component-helpers' IsVolumeBoundToClaim).
func (m *matcher) preboundTo(pv *v1.PersistentVolume) bool {
	ref := pv.Spec.ClaimRef
	return ref != nil && ref.Namespace == m.claim.Namespace && ref.Name == m.claim.Name &&
		(ref.UID == "" || ref.UID == m.claim.UID)
}

// check returns the first rule v fails, or Fits.
func (m *matcher) check(v *volumeInfo) Rule {
	pv := v.pv
	if v.invalid != "" {
		return Invalid
	}
	if m.preboundTo(pv) {
		return m.checkPrebound(v)
	}
	switch {
	case v.class != m.class:
		return StorageClass
	case pv.Spec.ClaimRef != nil:
		return BoundElsewhere
	case pv.DeletionTimestamp != nil:
		return Deleting
	case !m.available(pv):
		return NotAvailable
	}
	return m.checkSpec(v)
}

// checkSpec checks what an unbound, available volume must still pass.
func (m *matcher) checkSpec(v *volumeInfo) Rule {
	pv := v.pv
	switch {
	case !m.modesFit(v):
		return AccessModes
	case modeOrDefault(pv.Spec.VolumeMode) != m.mode:
		return VolumeMode
	case v.capacity.Cmp(m.request) < 0:
		return Capacity
	case m.selector != nil && !m.selector.Matches(labels.Set(pv.Labels)):
		return Selector
	case ptr.Deref(pv.Spec.VolumeAttributesClassName, "") != m.vac:
		return VolumeAttributesClass
	case m.node != nil && volume.CheckNodeAffinity(pv, m.node.Labels) != nil:
		return NodeAffinity
	}
	return Fits
}

// checkPrebound checks a volume pre-bound to the claim. FindMatchingVolume
// returns such a volume before it looks at phase, selector or class; the
// PV controller finds it only among the access-mode sets that contain the
// claim's modes, and kube-scheduler only among the volumes of the claim's
// class.
func (m *matcher) checkPrebound(v *volumeInfo) Rule {
	pv := v.pv
	switch {
	case m.scheduler && v.class != m.class:
		return StorageClass
	case pv.DeletionTimestamp != nil:
		return Deleting
	case !m.scheduler && (m.unknown || v.modes&m.want != m.want):
		return AccessModes
	case modeOrDefault(pv.Spec.VolumeMode) != m.mode:
		return VolumeMode
	case v.capacity.Cmp(m.request) < 0:
		return Capacity
	case ptr.Deref(pv.Spec.VolumeAttributesClassName, "") != m.vac:
		return VolumeAttributesClass
	case m.node != nil && volume.CheckNodeAffinity(pv, m.node.Labels) != nil:
		return NodeAffinity
	}
	return Fits
}

// available reports whether an unbound volume's phase lets it be bound.
func (m *matcher) available(pv *v1.PersistentVolume) bool {
	switch pv.Status.Phase {
	case v1.VolumeAvailable:
		return true
	case "", v1.VolumePending:
		return m.unmarked
	}
	return false
}

// modesFit is the access-mode rule for unbound volumes: the PV controller
// searches the sets of known modes that contain the claim's (none when the
// claim asks for an unknown mode); kube-scheduler checks on a node that
// the volume lists every mode the claim asks for (CheckAccessModes).
func (m *matcher) modesFit(v *volumeInfo) bool {
	if !m.scheduler {
		return !m.unknown && v.modes&m.want == m.want
	}
	for _, want := range m.claim.Spec.AccessModes {
		found := false
		for _, have := range v.pv.Spec.AccessModes {
			if have == want {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// distance is how far v is from the claim's request, in bytes, for
// ordering volumes that fail the same rule: for Capacity the shortfall,
// otherwise the absolute difference.
func (m *matcher) distance(v *volumeInfo) int64 {
	d := v.bytes - m.reqB
	if d < 0 {
		d = -d
	}
	return d
}
