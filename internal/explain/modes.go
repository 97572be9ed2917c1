package explain

import (
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/volbind/volbind/internal/pvindex"
)

// modeSet is internal/pvindex's access-mode key, by which the PV
// controller groups and orders volumes.
type modeSet = pvindex.ModeSet

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
