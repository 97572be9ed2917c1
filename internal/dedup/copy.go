package dedup

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// The Copy methods are for values the caller does not own, such as the
// maps of a client's request that an in-memory API server builds a new
// version from: they return a value equal to their argument that the
// Table shares, either one it holds already (no copy is made) or a copy
// that it holds from then on. The argument itself is never retained, so
// the caller may modify it afterwards; the result must not be modified.
// Values too large to be shared (more than maxInternedEntries entries)
// are copied and not kept. A nil or empty argument is copied as it is.
//
// Sharing at the copy skips a copy that Share would drop again: in the
// in-memory API server's four writes of a binding, the two annotation
// maps and the claim's status capacity a client sends are equal to ones
// stored before (BenchmarkBindingWrites in binder/bindertest).

// CopyStrings returns a labels or annotations map equal to m.
func (t *Table) CopyStrings(m map[string]string) map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.interner().stringMapOf(m, false)
}

// CopyResources returns a ResourceList equal to l.
func (t *Table) CopyResources(l v1.ResourceList) v1.ResourceList {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.interner().resourceListOf(l, false)
}

// CopyAccessModes returns an access-mode list equal to modes.
func (t *Table) CopyAccessModes(modes []v1.PersistentVolumeAccessMode) []v1.PersistentVolumeAccessMode {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.interner().accessModesOf(modes, false)
}

// CopyNodeAffinity returns a volume node affinity equal to a.
func (t *Table) CopyNodeAffinity(a *v1.VolumeNodeAffinity) *v1.VolumeNodeAffinity {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.interner().nodeAffinityOf(a, false)
}

// interner returns the Table's state, made on first use. The caller holds
// t.mu.
func (t *Table) interner() *interner {
	if t.in.resources == nil {
		t.in = newInterner()
	}
	return &t.in
}

// cloneResources deep-copies l (nil stays nil).
func cloneResources(l v1.ResourceList) v1.ResourceList {
	if l == nil {
		return nil
	}
	return l.DeepCopy()
}

// cloneModes copies modes (nil stays nil).
func cloneModes(modes []v1.PersistentVolumeAccessMode) []v1.PersistentVolumeAccessMode {
	return slices.Clone(modes)
}

// cloneStrings copies m (nil stays nil).
func cloneStrings(m map[string]string) map[string]string { return maps.Clone(m) }
