package explain

import (
	"math/bits"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// modeSet is a set of the four known access modes as bits, the key the PV
// controller groups volumes by (internal/pvindex keeps the same key).
type modeSet uint8

const (
	modeRWO  modeSet = 1 << iota // ReadWriteOnce
	modeROX                      // ReadOnlyMany
	modeRWX                      // ReadWriteMany
	modeRWOP                     // ReadWriteOncePod
)

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

// modesOf returns the known modes of a list and whether it has unknown
// ones.
func modesOf(modes []v1.PersistentVolumeAccessMode) (s modeSet, unknown bool) {
	for _, m := range modes {
		b, known := modeBit(m)
		unknown = unknown || !known
		s |= b
	}
	return s, unknown
}

// rank orders access-mode sets as the PV controller searches them: fewest
// modes first, then by bit value (internal/pvindex's tie-break).
func (s modeSet) rank() int {
	return bits.OnesCount8(uint8(s))<<8 | int(s)
}

// abbreviations are kubectl's short names of the access modes.
var abbreviations = map[v1.PersistentVolumeAccessMode]string{
	v1.ReadWriteOnce: "RWO", v1.ReadOnlyMany: "ROX", v1.ReadWriteMany: "RWX", v1.ReadWriteOncePod: "RWOP",
}

// modeNames returns the modes as kubectl prints them ("RWO", "RWX").
func modeNames(modes []v1.PersistentVolumeAccessMode) []string {
	out := make([]string, 0, len(modes))
	for _, m := range modes {
		if a, ok := abbreviations[m]; ok {
			out = append(out, a)
		} else {
			out = append(out, string(m))
		}
	}
	return out
}

func joinModes(modes []v1.PersistentVolumeAccessMode) string {
	if len(modes) == 0 {
		return "none"
	}
	return strings.Join(modeNames(modes), ",")
}
