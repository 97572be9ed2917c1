package nodepool

import "errors"

// Errors reported for pods in Round.Unbound and by the Dispenser; test with
// errors.Is.
var (
	// ErrShapeUnavailable: the pod needs a node of a shape the BootLimiter
	// holds as unavailable, so no node is booted for it this round.
	ErrShapeUnavailable = errors.New("nodepool: node shape unavailable")
	// ErrBootLimit: the per-round boot cap was reached; the pod gets a node
	// in a later round.
	ErrBootLimit = errors.New("nodepool: boot limit for this round reached")
	// ErrUnsatisfiable: no node spec can be derived from the pod's
	// requirements (for example an Exists or Gt requirement, or no instance
	// type and no Config.DefaultInstanceType).
	ErrUnsatisfiable = errors.New("nodepool: cannot derive a node for the pod's requirements")
	// ErrInvalidPod: the pod's node selector or affinity cannot be parsed.
	ErrInvalidPod = errors.New("nodepool: invalid pod requirements")
	// ErrInvalidInput: Compute got a nil object or duplicate names.
	ErrInvalidInput = errors.New("nodepool: invalid input")
	// ErrInvalidConfig: New got a Config it cannot use.
	ErrInvalidConfig = errors.New("nodepool: invalid config")
)
