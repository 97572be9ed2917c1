package scheduling

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalidArgument reports a nil pod, node, volumes or dependency, or
	// volumes decided for another node.
	ErrInvalidArgument = errors.New("scheduling: invalid argument")
	// ErrClaimNotFound reports a claim of the pod that is not in the cache.
	ErrClaimNotFound = errors.New("scheduling: claim not found")
	// ErrClaimDeleting reports a claim of the pod that is being deleted.
	ErrClaimDeleting = errors.New("scheduling: claim is being deleted")
	// ErrVolumeNotFound reports a volume of a binding that is gone.
	ErrVolumeNotFound = errors.New("scheduling: volume not found")
	// ErrClassNotFound reports a claim to provision whose StorageClass
	// cannot be read, or a claim to provision without a class.
	ErrClassNotFound = errors.New("scheduling: storage class not found")
	// ErrBindingLost reports a binding undone or taken over while Bind
	// waited: the volume's claimRef was reset or names another claim, or
	// the claim was bound to another volume.
	ErrBindingLost = errors.New("scheduling: binding lost")
	// ErrProvisioningFailed reports a claim whose selected-node annotation
	// was removed or changed while Bind waited: the provisioner gave up.
	ErrProvisioningFailed = errors.New("scheduling: provisioning failed")
	// ErrNodeConflict reports a volume whose placement no longer fits the
	// pod's node while Bind waited.
	ErrNodeConflict = errors.New("scheduling: volume node affinity conflict")
	// ErrBindTimeout reports that the Binder did not complete a binding
	// within Config.BindTimeout.
	ErrBindTimeout = errors.New("scheduling: timed out waiting for binding")
)

// BindError is the error of a failed Bind: which claim (and volume, for a
// binding to an existing volume) failed and why. Err wraps a sentinel
// above, an API error (apierrors.IsConflict works through it) or the
// context's error.
type BindError struct {
	// Pod is the pod's "namespace/name".
	Pod string
	// Claim is the failed claim's "namespace/name".
	Claim string
	// Volume is the volume the claim was to be bound to; "" when the claim
	// was to be provisioned.
	Volume string
	// Err is the cause.
	Err error
}

// Error names the pod, the claim, the volume and the cause.
func (e *BindError) Error() string {
	if e.Volume == "" {
		return fmt.Sprintf("scheduling: bind volumes of pod %s: provision claim %s: %v", e.Pod, e.Claim, e.Err)
	}
	return fmt.Sprintf("scheduling: bind volumes of pod %s: bind claim %s to volume %s: %v", e.Pod, e.Claim, e.Volume, e.Err)
}

// Unwrap returns the cause.
func (e *BindError) Unwrap() error { return e.Err }

// IsBindError reports whether err is or wraps a *BindError.
func IsBindError(err error) bool {
	var be *BindError
	return errors.As(err, &be)
}
