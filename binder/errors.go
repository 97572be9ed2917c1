package binder

import (
	"errors"
	"fmt"

	"github.com/volbind/volbind/cache"
)

// ErrInvalidConfig is wrapped by New's error for a Config it cannot use.
var ErrInvalidConfig = errors.New("binder: invalid config")

// ErrAlreadyRunning is returned by a second call of Run on the same Binder.
var ErrAlreadyRunning = errors.New("binder: Run was already called")

// ErrInvalidObject is matched (errors.Is) by an *InvalidObjectError. It is
// cache.ErrInvalidObject, so one sentinel answers "is this object unusable as
// given" for the Binder's errors and for the cache's (nil or nameless
// objects) alike.
var ErrInvalidObject = cache.ErrInvalidObject

// InvalidObjectError reports a volume or claim the Binder cannot bind
// because it is malformed. SyncClaim and SyncVolume return it; the workers
// record an event and do not retry until the object changes.
type InvalidObjectError struct {
	// Kind is "PersistentVolume" or "PersistentVolumeClaim".
	Kind string
	// Key is the object's "name" or "namespace/name".
	Key string
	// Problem says what is wrong, e.g. "no storage capacity".
	Problem string
}

// Error names the object and the problem.
func (e *InvalidObjectError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Kind, e.Key, e.Problem)
}

// Is reports whether target is ErrInvalidObject.
func (e *InvalidObjectError) Is(target error) bool { return target == ErrInvalidObject }

// IsInvalidObject reports whether err is or wraps an *InvalidObjectError.
func IsInvalidObject(err error) bool { return errors.Is(err, ErrInvalidObject) }
