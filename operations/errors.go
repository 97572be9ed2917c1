package operations

import (
	"errors"
	"fmt"
	"time"
)

// ErrAlreadyRunning is returned by Map.Run when an operation with the same
// name is still running. It is a preallocated sentinel: refusing a duplicate
// costs no allocation. Test for it with errors.Is.
var ErrAlreadyRunning = errors.New("operations: an operation with this name is already running")

// ErrBackoff matches (errors.Is) the *BackoffError returned by Map.Run while
// a name that failed is backing off.
var ErrBackoff = errors.New("operations: operation is backing off after a failure")

// ErrShutdown is returned by Map.Run after Map.Shutdown.
var ErrShutdown = errors.New("operations: map is shut down")

// ErrNilContext is returned by Map.Run when its context is nil; use
// context.Background() for an operation that needs no caller values.
var ErrNilContext = errors.New("operations: Run needs a non-nil context")

// BackoffError is returned by Map.Run when the last operation under Name
// failed and its backoff has not passed yet. errors.Is(err, ErrBackoff) is
// true for it; use errors.As to read the fields.
type BackoffError struct {
	// Name is the refused operation name.
	Name string
	// Until is when the backoff ends: Run for Name is refused until the
	// clock is past Until.
	Until time.Time
	// LastError is the failure that started (or extended) the backoff.
	LastError error
}

// Error describes the refusal, naming the operation, when it may run again
// and the last failure.
func (e *BackoffError) Error() string {
	return fmt.Sprintf("operations: %q failed, no retries permitted until %s: %v",
		e.Name, e.Until.Format(time.RFC3339Nano), e.LastError)
}

// Is reports whether target is ErrBackoff.
func (e *BackoffError) Is(target error) bool { return target == ErrBackoff }

// Unwrap returns the last failure, so errors.Is and errors.As also see it.
func (e *BackoffError) Unwrap() error { return e.LastError }

// IsBackoff reports whether err is (or wraps) a *BackoffError.
func IsBackoff(err error) bool { return errors.Is(err, ErrBackoff) }

// PanicError is the failure recorded for an operation that panicked. The
// panic is recovered; the name backs off as for any other failure.
type PanicError struct {
	// Name is the operation that panicked.
	Name string
	// Value is the value passed to panic.
	Value any
	// Stack is the goroutine's stack at the time of the panic.
	Stack []byte
}

// Error names the operation and the panic value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("operations: %q panicked: %v", e.Name, e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
