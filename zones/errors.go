package zones

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps one of them,
// so callers can tell the classes apart with errors.Is.
var (
	// ErrInvalidZones reports a malformed zone label value, zone list or
	// placement: an empty value or element, whitespace, or a zone or region
	// that is not a valid label value.
	ErrInvalidZones = errors.New("zones: invalid zones")

	// ErrInvalidPlacement reports a volume whose placement (zone or region
	// labels, spec.nodeAffinity) cannot be evaluated.
	ErrInvalidPlacement = errors.New("zones: invalid volume placement")

	// ErrConflict reports placement labels or node affinity already on a
	// volume that disagree with the placement being written. The error is a
	// *ConflictError.
	ErrConflict = errors.New("zones: conflicting placement")

	// ErrInvalidClass reports StorageClass zone settings that cannot be used
	// together or with the request (zone and zones together, zone[s] with a
	// selected node or with allowedTopologies, unsupported allowedTopologies
	// keys).
	ErrInvalidClass = errors.New("zones: invalid StorageClass zone settings")

	// ErrNoZones reports that no zone could be chosen: there are not enough
	// zones for the replicas, no zone has nodes, or the selected node has no
	// zone or one outside the allowed zones.
	ErrNoZones = errors.New("zones: no zone available")

	// ErrNoClaimName reports a zone choice that needs the claim's name to
	// spread volumes but was given none.
	ErrNoClaimName = errors.New("zones: claim name required")

	// ErrNilObject reports a nil volume, node or claim argument.
	ErrNilObject = errors.New("zones: nil object")

	// ErrOverflow reports a size that does not fit the integer type of its
	// allocation unit.
	ErrOverflow = errors.New("zones: size overflows")

	// ErrInvalidSize reports a negative requested size or a negative
	// allocation unit.
	ErrInvalidSize = errors.New("zones: invalid size")
)

// ConflictError reports a label or node-affinity expression already on a
// volume that disagrees with the placement being written. It matches
// ErrConflict with errors.Is.
type ConflictError struct {
	// Volume is the name of the volume.
	Volume string
	// Field is where the conflicting value is: "metadata.labels" or the
	// path of a node-affinity expression, such as
	// "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[1]".
	Field string
	// Key is the label key or node-affinity key in conflict.
	Key string
	// Existing is the value already on the volume.
	Existing string
	// Wanted is the value that would have been written.
	Wanted string
}

// Error implements error.
func (e *ConflictError) Error() string {
	field := e.Key
	if e.Field != "" {
		field = e.Field + "[" + e.Key + "]"
	}
	return fmt.Sprintf("volume %q: %s is %q, want %q: %v", e.Volume, field, e.Existing, e.Wanted, ErrConflict)
}

// Is reports whether target is ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// IsConflict reports whether err is or wraps a *ConflictError.
func IsConflict(err error) bool {
	var ce *ConflictError
	return errors.As(err, &ce)
}
