package cli

import (
	"errors"
	"fmt"
)

// ExitError is the exit status of a command that ran to the end but must
// report failure (broken invariants, a deadline passed). The command has
// already printed why; the program exits with Code and prints nothing.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// FlagError is a command-line syntax error that the flag package reported
// and printed with the usage: the program exits with status 2.
type FlagError struct{ Err error }

func (e FlagError) Error() string { return e.Err.Error() }
func (e FlagError) Unwrap() error { return e.Err }

// IsFlagError reports whether err is, or wraps, a FlagError.
func IsFlagError(err error) bool {
	var fe FlagError
	return errors.As(err, &fe)
}
