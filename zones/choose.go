package zones

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
)

// ChooseZones picks replicas zones out of available for a new volume of the
// claim named pvcName, with the same result as cloud-provider's
// ChooseZonesForVolume:
//
//   - A name ending in "-<ordinal>" (a StatefulSet claim,
//     "<claim>-<statefulset>-<ordinal>") is spread by its ordinal: replica
//     sets of consecutive ordinals take consecutive runs of the sorted zones,
//     starting at an offset hashed from the StatefulSet part of the name, so
//     every claim of one StatefulSet member lands in the same zones.
//   - Any other name starts at an offset hashed from the whole name.
//
// When replicas is at least the number of zones, every zone is returned;
// replicas 0 or no available zones give an empty set (as the helper does).
//
// Differences from the helper, all for inputs it cannot handle: an empty
// pvcName gives ErrNoClaimName (the helper picks a random zone), and an
// ordinal so large that the helper's uint32 arithmetic wraps round to an
// empty choice gives an error wrapping ErrNoZones instead of an empty set.
// available is not modified; the result is a new set owned by the caller.
func ChooseZones(available sets.Set[string], pvcName string, replicas uint32) (sets.Set[string], error) {
	if available.Len() == 0 || replicas == 0 {
		return sets.New[string](), nil
	}
	return chooseSorted(sets.List(available), pvcName, replicas)
}

// chooseSorted is ChooseZones over a non-empty, sorted zone list.
func chooseSorted(sorted []string, pvcName string, replicas uint32) (sets.Set[string], error) {
	if pvcName == "" {
		return nil, fmt.Errorf("%w: choosing %d zone(s) out of %q", ErrNoClaimName, replicas, strings.Join(sorted, ","))
	}
	hash, ordinal := claimHash(pvcName)
	n := uint32(len(sorted))
	// The arithmetic wraps in uint32 exactly as in the helper; the results
	// only agree if it does.
	start := ordinal * replicas
	end := start + replicas
	out := make(sets.Set[string], min(replicas, n))
	for i := start; i < end; i++ {
		out.Insert(sorted[(hash+i)%n])
		if uint32(len(out)) == n {
			break // every zone is chosen; more steps add nothing
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: claim %q: ordinal %d with %d replicas is out of range", ErrNoZones, pvcName, ordinal, replicas)
	}
	return out, nil
}

// claimHash returns the FNV-1 (32 bit) hash that spreads pvcName and its
// StatefulSet ordinal (0 when the name has none), as cloud-provider's
// getPVCNameHashAndIndexOffset does: for "<prefix>-<ordinal>" only the part
// of prefix after its last '-' is hashed, so all claims of one StatefulSet
// member hash alike.
func claimHash(pvcName string) (hash, ordinal uint32) {
	hashed := pvcName
	if dash := strings.LastIndexByte(pvcName, '-'); dash >= 0 && isDigits(pvcName[dash+1:]) {
		// ParseUint accepts only digits in base 10; checking first saves
		// allocating its error for the common names without an ordinal.
		if id, err := strconv.ParseUint(pvcName[dash+1:], 10, 32); err == nil {
			ordinal = uint32(id)
			hashed = pvcName[:dash]
			if d := strings.LastIndexByte(hashed, '-'); d >= 0 {
				hashed = hashed[d+1:]
			}
		}
	}
	const (
		offset32 = 2166136261
		prime32  = 16777619
	)
	hash = offset32
	for i := 0; i < len(hashed); i++ {
		hash *= prime32
		hash ^= uint32(hashed[i])
	}
	return hash, ordinal
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
