package chaos

import (
	"context"
	"testing"
)

// TestShrink: the shrinker cuts a case down to the smallest one that still
// breaks the same invariant, and ignores candidates that break another.
func TestShrink(t *testing.T) {
	c := Case{Seed: 3, Objects: 150, Workers: 32, AvailableDelay: true, Classes: Errors | Watch | Churn | Crash,
		Churn: 40, CrashAt: 17, CrashApplied: true}
	runs := 0
	fake := func(_ context.Context, c Case) (Result, error) {
		runs++
		switch {
		case c.Objects >= 7 && c.Classes&Errors != 0:
			return Result{Case: c, Violations: []Violation{{Invariant: DoubleBind}}}, nil
		case c.Objects < 7:
			return Result{Case: c, Violations: []Violation{{Invariant: NotSettled}}}, nil
		}
		return Result{Case: c}, nil
	}
	res, _ := fake(context.Background(), c)
	got, gres := shrink(context.Background(), c, res, fake, 1000)
	want := Case{Seed: 3, Objects: 7, Workers: 1, Classes: Errors}
	if got != want {
		t.Errorf("shrink = %s, want %s", got, want)
	}
	if !gres.Failed() || gres.Violations[0].Invariant != DoubleBind {
		t.Errorf("shrunk result = %+v, want the double bind", gres)
	}
	t.Logf("%d runs", runs)
}
