package pvindex

import (
	"sync/atomic"
	"unique"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// claimKey names a claim without allocating a "namespace/name" string.
type claimKey struct {
	namespace, name string
}

// Group is what a claim and a volume must share exactly to match: the
// storage class (beta annotation first, as Kubernetes reads it), the
// VolumeAttributesClass and the volume mode (unset means Filesystem). It is
// comparable, for use as a map key.
type Group struct {
	class, vac string
	mode       v1.PersistentVolumeMode
}

// VolumeGroup returns the Group of a volume.
func VolumeGroup(pv *v1.PersistentVolume) Group {
	return Group{
		class: volume.GetPersistentVolumeClass(pv),
		vac:   ptr.Deref(pv.Spec.VolumeAttributesClassName, ""),
		mode:  modeOrDefault(pv.Spec.VolumeMode),
	}
}

// ClaimGroup returns the Group of a claim.
func ClaimGroup(claim *v1.PersistentVolumeClaim) Group {
	return Group{
		class: volume.GetPersistentVolumeClaimClass(claim),
		vac:   ptr.Deref(claim.Spec.VolumeAttributesClassName, ""),
		mode:  modeOrDefault(claim.Spec.VolumeMode),
	}
}

func modeOrDefault(m *v1.PersistentVolumeMode) v1.PersistentVolumeMode {
	if m == nil {
		return v1.PersistentVolumeFilesystem
	}
	return *m
}

// record is what the Index derives from one volume when it is upserted, so
// that FindBestMatch reads precomputed fields only.
type record struct {
	pv *v1.PersistentVolume // shared with the caller; read-only

	// affinity is the parsed spec.nodeAffinity.required, built on first use.
	affinity atomic.Pointer[nodeaffinity.LazyErrorNodeSelector]

	derived

	// The claimRef is read from pv, not copied here, and the group is
	// interned: there is one record per volume, and with the small fields
	// last a record takes 64 bytes (TestRecordSize) instead of 176.
}

// derived is what a record derives from its volume, apart from the parsed
// node affinity.
type derived struct {
	key key
	// group is interned: 8 bytes instead of a Group's 48 take a record
	// from the 112-byte size class to the 64-byte one (48 bytes less per
	// volume: 11 % of the Binder's memory per bound pair).
	group unique.Handle[Group]

	modes    modeSet
	deleting bool // deletionTimestamp is set
	// candidate: unbound, Available (or not marked yet, when the Index
	// allows it) and not being deleted, so the record sits in the tree of
	// its group and mode set.
	candidate bool
}

// groupCache interns the records' groups. It remembers the last Group
// interned, so that new volumes of a cluster with few groups (the usual
// case: one per class) skip unique.Make's lookup; the Index's lock
// guards it.
type groupCache struct {
	last unique.Handle[Group] // the zero Handle until the first Make
}

// handleLocked returns the interned handle of g, old's when old (the
// record g's volume replaces, or nil) has that group.
func (c *groupCache) handleLocked(g Group, old *record) unique.Handle[Group] {
	if old != nil && old.group.Value() == g {
		return old.group
	}
	if c.last != (unique.Handle[Group]{}) && c.last.Value() == g {
		return c.last
	}
	c.last = unique.Make(g)
	return c.last
}

// derive returns what a record of pv derives but its interned group, and
// that group; unmarked makes a volume
// whose phase is empty or Pending a candidate too
// (Options.UnmarkedCandidates).
func derive(pv *v1.PersistentVolume, unmarked bool) (derived, Group) {
	d := derived{
		key:      key{cap: storageOf(pv.Spec.Capacity), name: pv.Name},
		modes:    volumeModes(pv.Spec.AccessModes),
		deleting: pv.DeletionTimestamp != nil,
	}
	phase := pv.Status.Phase
	d.candidate = pv.Spec.ClaimRef == nil && !d.deleting &&
		(phase == v1.VolumeAvailable || unmarked && (phase == "" || phase == v1.VolumePending))
	return d, VolumeGroup(pv)
}

// same reports whether d and e place a volume alike in the Index: same
// key, group, access modes, deletion and candidacy.
func (d *derived) same(e *derived) bool {
	return d.key.name == e.key.name && d.key.cap.compare(e.key.cap) == 0 && d.group == e.group &&
		d.modes == e.modes && d.deleting == e.deleting && d.candidate == e.candidate
}

// sameClaimKey reports whether a and b have no claimRef, or claimRefs
// that name the same claim: the key the Index lists them under.
func sameClaimKey(a, b *v1.PersistentVolume) bool {
	ra, rb := a.Spec.ClaimRef, b.Spec.ClaimRef
	return ra == nil && rb == nil || ra != nil && rb != nil && ra.Namespace == rb.Namespace && ra.Name == rb.Name
}

// hasClaim reports whether the volume has a claimRef.
func (r *record) hasClaim() bool { return r.pv.Spec.ClaimRef != nil }

// claim returns the namespace and name of the volume's claimRef; only for
// a record that hasClaim.
func (r *record) claim() claimKey {
	ref := r.pv.Spec.ClaimRef
	return claimKey{namespace: ref.Namespace, name: ref.Name}
}

// boundTo reports whether the volume is pre-bound or bound to the claim, as
// component-helpers' IsVolumeBoundToClaim does; the namespace and name are
// already equal because the record was found under the claim's key.
func (r *record) boundTo(claim *v1.PersistentVolumeClaim) bool {
	uid := r.pv.Spec.ClaimRef.UID
	return uid == "" || uid == claim.UID
}

// fitsNode reports whether the volume may be used on the node: the caller's
// NodeMatches when set (an error counts as no), else the volume's required
// node affinity evaluated on the node's labels only, exactly as
// component-helpers' CheckNodeAffinity does.
func (r *record) fitsNode(f *finder) bool {
	if f.opts.NodeMatches != nil {
		ok, err := f.opts.NodeMatches(r.pv, f.opts.Node)
		return err == nil && ok
	}
	na := r.pv.Spec.NodeAffinity
	if na == nil || na.Required == nil {
		return true
	}
	sel := r.affinity.Load()
	if sel == nil {
		sel = nodeaffinity.NewLazyErrorNodeSelector(na.Required)
		r.affinity.Store(sel)
	}
	ok, err := sel.Match(&f.labelsNode)
	return err == nil && ok
}
