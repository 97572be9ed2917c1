package explain

import (
	"cmp"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/pvindex"
)

// volumeInfo is what a scan reads of one volume, derived once by New and
// laid out in one array, so that checking a volume against the usual
// rules (class, claimRef, phase, size) reads no other memory.
type volumeInfo struct {
	pv    *v1.PersistentVolume
	class string
	vac   string
	mode  v1.PersistentVolumeMode
	phase v1.PersistentVolumePhase
	// ref is the claimRef's claim and UID; hasRef tells whether there is
	// one.
	ref    claimName
	refUID types.UID
	hasRef bool
	// capacity is the storage capacity; bytes its value rounded up, for
	// distances.
	capacity size
	bytes    int64
	modes    modeSet
	deleting bool
	// invalid says why the Binder keeps the volume out of its index, or "".
	invalid string
	// rolledBack is set when a PV controller's search bound the volume to
	// a claim that it no longer satisfies and that has not completed the
	// binding: the claim's next sync rolls the binding back and makes the
	// volume Available (rollBackSearched). Until then it is that claim's.
	rolledBack bool
}

func infoOf(pv *v1.PersistentVolume) volumeInfo {
	q := pv.Spec.Capacity[v1.ResourceStorage]
	m, _ := pvindex.AccessModes(pv.Spec.AccessModes)
	v := volumeInfo{pv: pv, class: volume.GetPersistentVolumeClass(pv), vac: ptr.Deref(pv.Spec.VolumeAttributesClassName, ""),
		mode: modeOrDefault(pv.Spec.VolumeMode), phase: pv.Status.Phase, capacity: sizeOf(q), bytes: q.Value(), modes: m,
		deleting: pv.DeletionTimestamp != nil, invalid: invalidVolume(pv)}
	if ref := pv.Spec.ClaimRef; ref != nil {
		v.ref, v.refUID, v.hasRef = claimName{ref.Namespace, ref.Name}, ref.UID, true
	}
	return v
}

// capacityText is the volume's capacity as its object writes it.
func (v *volumeInfo) capacityText() string {
	q := v.pv.Spec.Capacity[v1.ResourceStorage]
	return q.String()
}

// size is an exact, cheaply comparable storage size: whole numbers of
// bytes that fit an int64 (every real size) compare as integers, anything
// else with its Quantity, so that the order is Kubernetes' Quantity.Cmp.
type size struct {
	n int64
	q *resource.Quantity // set when the size is not an int64 of bytes; read-only
}

func sizeOf(q resource.Quantity) size {
	if n, exact := q.AsInt64(); exact {
		return size{n: n}
	}
	c := q.DeepCopy()
	return size{q: &c}
}

func (s size) quantity() resource.Quantity {
	if s.q != nil {
		return *s.q
	}
	return *resource.NewQuantity(s.n, resource.BinarySI)
}

// cmp returns -1, 0 or +1 as s is smaller than, equal to or larger than o.
func (s size) cmp(o size) int {
	if s.q == nil && o.q == nil {
		return cmp.Compare(s.n, o.n)
	}
	q := s.quantity()
	return q.Cmp(o.quantity())
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
	reqSize size
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
	want, unknown := pvindex.AccessModes(claim.Spec.AccessModes)
	req := claim.Spec.Resources.Requests[v1.ResourceStorage]
	m := &matcher{
		claim: claim, class: volume.GetPersistentVolumeClaimClass(claim), want: want, unknown: unknown,
		mode: modeOrDefault(claim.Spec.VolumeMode), vac: ptr.Deref(claim.Spec.VolumeAttributesClassName, ""),
		request: req, reqSize: sizeOf(req), reqB: req.Value(), scheduler: scheduler, node: node, unmarked: unmarked && !scheduler,
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

// preboundTo reports whether v's claimRef names the claim with its UID or
// none (component-helpers' IsVolumeBoundToClaim).
func (m *matcher) preboundTo(v *volumeInfo) bool {
	return v.hasRef && v.ref.name == m.claim.Name && v.ref.namespace == m.claim.Namespace &&
		(v.refUID == "" || v.refUID == m.claim.UID)
}

// check returns the first rule v fails, or Fits.
func (m *matcher) check(v *volumeInfo) Rule {
	if v.invalid != "" {
		return Invalid
	}
	if m.preboundTo(v) {
		if !m.scheduler && m.chosenBySearch(v) {
			return m.checkChosen(v)
		}
		return m.checkPrebound(v)
	}
	switch {
	case v.class != m.class:
		return StorageClass
	case v.hasRef:
		return BoundElsewhere
	case v.deleting:
		return Deleting
	case !m.available(v.phase):
		return NotAvailable
	}
	return m.checkSpec(v)
}

// checkSpec checks what an unbound, available volume must still pass.
func (m *matcher) checkSpec(v *volumeInfo) Rule {
	switch {
	case !m.modesFit(v):
		return AccessModes
	case v.mode != m.mode:
		return VolumeMode
	case v.capacity.cmp(m.reqSize) < 0:
		return Capacity
	case m.selector != nil && !m.selector.Matches(labels.Set(v.pv.Labels)):
		return Selector
	case v.vac != m.vac:
		return VolumeAttributesClass
	case m.node != nil && volume.CheckNodeAffinity(v.pv, m.node.Labels) != nil:
		return NodeAffinity
	}
	return Fits
}

// chosenBySearch reports whether v is bound to the claim's UID by a PV
// controller's search (bound-by-controller, not provisioned for it): the
// Binder completes such a binding only while the volume still satisfies
// the claim, and rolls it back otherwise.
func (m *matcher) chosenBySearch(v *volumeInfo) bool {
	return v.refUID != "" && v.refUID == m.claim.UID &&
		metav1.HasAnnotation(v.pv.ObjectMeta, volume.AnnBoundByController) &&
		!metav1.HasAnnotation(v.pv.ObjectMeta, volume.AnnDynamicallyProvisioned)
}

// checkChosen checks a volume a search bound to the claim as the Binder
// does before it completes that binding: every matching rule but phase and
// node affinity; one being deleted is not taken, as by FindMatchingVolume.
func (m *matcher) checkChosen(v *volumeInfo) Rule {
	switch {
	case v.class != m.class:
		return StorageClass
	case v.deleting:
		return Deleting
	}
	return m.checkSpec(v) // m has no node: the PV controller's matcher
}

// checkPrebound checks a volume pre-bound to the claim. FindMatchingVolume
// returns such a volume before it looks at phase, selector or class; the
// PV controller finds it only among the access-mode sets that contain the
// claim's modes, and kube-scheduler only among the volumes of the claim's
// class.
func (m *matcher) checkPrebound(v *volumeInfo) Rule {
	switch {
	case m.scheduler && v.class != m.class:
		return StorageClass
	case v.deleting:
		return Deleting
	case !m.scheduler && (m.unknown || v.modes&m.want != m.want):
		return AccessModes
	case v.mode != m.mode:
		return VolumeMode
	case v.capacity.cmp(m.reqSize) < 0:
		return Capacity
	case v.vac != m.vac:
		return VolumeAttributesClass
	case m.node != nil && volume.CheckNodeAffinity(v.pv, m.node.Labels) != nil:
		return NodeAffinity
	}
	return Fits
}

// available reports whether an unbound volume's phase lets it be bound.
func (m *matcher) available(phase v1.PersistentVolumePhase) bool {
	switch phase {
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
