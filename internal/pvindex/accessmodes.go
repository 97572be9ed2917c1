package pvindex

import (
	"math/bits"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// modeSet is a set of access modes as a bit mask. Kubernetes indexes volumes by
// the string form of their known access modes ("RWO,ROX"); modeSet is the same
// key, with unknown modes dropped as Kubernetes drops them.
type modeSet uint8

const (
	modeRWO  modeSet = 1 << iota // ReadWriteOnce
	modeROX                      // ReadOnlyMany
	modeRWX                      // ReadWriteMany
	modeRWOP                     // ReadWriteOncePod

	numModeSets = 16
)

// modeBit returns the bit of one access mode, or false for an unknown mode.
func modeBit(m v1.PersistentVolumeAccessMode) (modeSet, bool) {
	switch m {
	case v1.ReadWriteOnce:
		return modeRWO, true
	case v1.ReadOnlyMany:
		return modeROX, true
	case v1.ReadWriteMany:
		return modeRWX, true
	case v1.ReadWriteOncePod:
		return modeRWOP, true
	}
	return 0, false
}

// ModeSet is the access-mode key of the Index, for other packages of this
// repository that group or order volumes as the Index does
// (internal/explain).
type ModeSet = modeSet

// AccessModes returns the set of known modes of a list and whether the list
// has unknown ones (claimModes).
func AccessModes(modes []v1.PersistentVolumeAccessMode) (ModeSet, bool) { return claimModes(modes) }

// KnownMode reports whether m is one of the four access modes the Index
// knows.
func KnownMode(m v1.PersistentVolumeAccessMode) bool {
	_, known := modeBit(m)
	return known
}

// Rank orders sets as FindBestMatch searches them (searchOrder): fewest
// modes first, then by bit value.
func (s modeSet) Rank() int { return bits.OnesCount8(uint8(s))<<8 | int(s) }

// volumeModes is the index key of a volume: its known access modes.
func volumeModes(modes []v1.PersistentVolumeAccessMode) modeSet {
	var s modeSet
	for _, m := range modes {
		b, _ := modeBit(m)
		s |= b
	}
	return s
}

// claimModes is the set of known modes a claim asks for. unknown is true
// when the claim also asks for a mode no volume can be indexed under, so that
// no access-mode set matches.
func claimModes(modes []v1.PersistentVolumeAccessMode) (s modeSet, unknown bool) {
	for _, m := range modes {
		b, known := modeBit(m)
		unknown = unknown || !known
		s |= b
	}
	return s, unknown
}

// searchOrder lists, for every requested set, the sets that contain it in the
// order FindBestMatch searches them: fewest modes first, then by bit value.
// It is computed once and never written again.
var searchOrder = buildSearchOrder()

func buildSearchOrder() [numModeSets][]modeSet {
	var order [numModeSets][]modeSet
	for want := range modeSet(numModeSets) {
		for s := range modeSet(numModeSets) {
			if s&want == want {
				order[want] = append(order[want], s)
			}
		}
		slices.SortStableFunc(order[want], func(a, b modeSet) int {
			return bits.OnesCount8(uint8(a)) - bits.OnesCount8(uint8(b))
		})
	}
	return order
}
