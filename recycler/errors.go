package recycler

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Sentinels for errors.Is. The errors Recycle returns wrap one of them and
// name the volume and the pod.
var (
	// ErrUnsupportedVolume means the volume's source is not one the recycler
	// pod can mount (only NFS and HostPath are), or the volume is otherwise
	// unusable (nil, no name, a name too long for the pod name).
	ErrUnsupportedVolume = errors.New("recycler: volume cannot be recycled")

	// ErrInvalidTemplate means Config.PodTemplate cannot run as a recycler
	// pod; New returns it wrapped with the problem.
	ErrInvalidTemplate = errors.New("recycler: invalid pod template")

	// ErrForeignPod means a pod with the recycler pod's name exists but was
	// not created for this volume. It is neither adopted nor deleted; the
	// returned error is a *ForeignPodError.
	ErrForeignPod = errors.New("recycler: pod with the recycler pod's name does not belong to the volume")

	// ErrPodFailed means the recycler pod ended in phase Failed; the returned
	// error is a *PodFailedError.
	ErrPodFailed = errors.New("recycler: recycler pod failed")

	// ErrTimeout means the recycler pod did not finish within the volume's
	// timeout; the returned error is a *TimeoutError.
	ErrTimeout = errors.New("recycler: recycler pod did not finish in time")

	// ErrPodDeleted means the recycler pod was deleted, or replaced by another
	// pod of the same name, before it finished. Recycling may be retried.
	ErrPodDeleted = errors.New("recycler: recycler pod deleted before it finished")
)

// PodFailedError reports a recycler pod that ended in phase Failed. Reason
// and Message are the pod's status reason and message; when the pod has
// none (a scrub script that exits non-zero leaves them empty), they come
// from the first terminated container.
type PodFailedError struct {
	// Volume is the name of the PersistentVolume being recycled.
	Volume string
	// Pod is the recycler pod.
	Pod types.NamespacedName
	// Reason is the machine-readable reason, e.g. "DeadlineExceeded" or "Error".
	Reason string
	// Message is the human-readable message, possibly empty.
	Message string
	// ExitCode is the first terminated container's exit code; nil when no
	// container status reports one.
	ExitCode *int32
}

// Error implements error.
func (e *PodFailedError) Error() string {
	s := fmt.Sprintf("recycler pod %s for volume %s failed", e.Pod, e.Volume)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.ExitCode != nil {
		s += fmt.Sprintf(" (exit code %d)", *e.ExitCode)
	}
	if e.Reason == "" && e.Message == "" && e.ExitCode == nil {
		s += " without a reason"
	}
	return s
}

// Is reports whether target is ErrPodFailed.
func (e *PodFailedError) Is(target error) bool { return target == ErrPodFailed }

// IsPodFailed reports whether err is or wraps a *PodFailedError.
func IsPodFailed(err error) bool {
	var pf *PodFailedError
	return errors.As(err, &pf)
}

// newPodFailedError builds the error for a pod in phase Failed.
func newPodFailedError(volume string, pod *v1.Pod) *PodFailedError {
	e := &PodFailedError{
		Volume:  volume,
		Pod:     types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name},
		Reason:  pod.Status.Reason,
		Message: pod.Status.Message,
	}
	for _, cs := range pod.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil {
			continue
		}
		code := t.ExitCode
		e.ExitCode = &code
		if e.Reason == "" && e.Message == "" {
			e.Reason, e.Message = t.Reason, t.Message
		}
		break
	}
	return e
}

// TimeoutError reports a recycler pod that did not finish within Timeout.
// The pod has been deleted (or its deletion attempted) when Recycle returns.
type TimeoutError struct {
	// Volume is the name of the PersistentVolume being recycled.
	Volume string
	// Pod is the recycler pod.
	Pod types.NamespacedName
	// Timeout is the time the recycler waited.
	Timeout time.Duration
	// Phase is the last phase seen, empty when none was seen.
	Phase v1.PodPhase
	// LastError is the last error met while re-establishing the watch, nil
	// when the watch worked.
	LastError error
}

// Error implements error.
func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("recycler pod %s for volume %s did not finish within %v", e.Pod, e.Volume, e.Timeout)
	if e.Phase != "" {
		s += fmt.Sprintf(" (last phase %s)", e.Phase)
	}
	if e.LastError != nil {
		s += fmt.Sprintf(": last watch error: %v", e.LastError)
	}
	return s
}

// Is reports whether target is ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// Unwrap returns LastError.
func (e *TimeoutError) Unwrap() error { return e.LastError }

// IsTimeout reports whether err is or wraps a *TimeoutError.
func IsTimeout(err error) bool {
	var te *TimeoutError
	return errors.As(err, &te)
}

// ForeignPodError reports a pod that has the recycler pod's name but was not
// created by a recycler for this volume (another volume of the same name
// with a different UID, a user's pod, or a pod mounting something else).
type ForeignPodError struct {
	// Volume is the name of the PersistentVolume being recycled.
	Volume string
	// Pod is the pod found.
	Pod types.NamespacedName
	// Reason says which check failed.
	Reason string
}

// Error implements error.
func (e *ForeignPodError) Error() string {
	return fmt.Sprintf("pod %s exists but is not the recycler pod of volume %s: %s; delete it to let the volume be recycled",
		e.Pod, e.Volume, e.Reason)
}

// Is reports whether target is ErrForeignPod.
func (e *ForeignPodError) Is(target error) bool { return target == ErrForeignPod }

// IsForeignPod reports whether err is or wraps a *ForeignPodError.
func IsForeignPod(err error) bool {
	var fe *ForeignPodError
	return errors.As(err, &fe)
}
