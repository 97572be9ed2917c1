// Package testhelp holds the small test helpers this repository's test
// packages share: assertions of the command packages (internal/simulate,
// internal/controller) and WaitArmed for tests that step a fake clock. It
// is for this repository's tests only.
package testhelp

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// WantContains fails t, without stopping it, for each of wants that got
// (called what in the message) does not contain.
func WantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}

// Parsed checks the error of a flag parser (called fn in the messages)
// given args: with wantErr set, it must contain wantErr; without, there
// must be none. It stops the test on a mismatch and reports whether the
// parsed options are left to check.
func Parsed(t *testing.T, fn string, args []string, err error, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s(%q) error = %v, want one containing %q", fn, args, err, wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatalf("%s(%q): %v", fn, args, err)
	}
	return true
}

// Poll waits, up to wait.ForeverTestTimeout, until cond holds; it stops
// the test with what when it does not.
func Poll(t *testing.T, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, wait.ForeverTestTimeout, true,
		func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Waiters is the part of a fake clock WaitArmed reads
// (k8s.io/utils/clock/testing.FakeClock).
type Waiters interface {
	Waiters() int
}

// WaitArmed waits until the goroutines that set timers on fc (workqueue
// delays, resyncs, backoffs) have armed them, so that a step of fc fires
// them: until the number of fc's waiters has stayed the same for five
// polls in a row, or 50ms have passed. A timer armed after a step counts
// from the new time and may never catch up with a loop that keeps
// stepping.
func WaitArmed(fc Waiters) {
	last, same := fc.Waiters(), 0
	_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Microsecond, 50*time.Millisecond, false,
		func(context.Context) (bool, error) {
			if n := fc.Waiters(); n != last {
				last, same = n, 0
				return false, nil
			}
			same++
			return same >= 5, nil
		})
}
