package chaos

import (
	"context"
	"slices"
)

// shrinkAttempts is how often Shrink runs a candidate: interleavings vary,
// so a candidate counts as failing when one of its runs fails.
const shrinkAttempts = 3

// shrinkBudget bounds the runs of one Shrink.
const shrinkBudget = 60

// Shrink looks for a smaller case than c that still breaks one of the
// invariants res (c's failing result) names: fewer objects, less churn,
// fewer disturbance classes, no crash, fewer workers. It returns the
// smallest it found with its result (c and res when nothing smaller
// fails). It blocks while it runs the candidates.
func Shrink(ctx context.Context, c Case, res Result) (Case, Result) {
	return shrink(ctx, c, res, Run, shrinkBudget)
}

// shrink is Shrink with the function that runs a case.
func shrink(ctx context.Context, c Case, res Result, run func(context.Context, Case) (Result, error), budget int) (Case, Result) {
	want := res.Invariants()
	runs := 0
	fails := func(cand Case) (Result, bool) {
		for range shrinkAttempts {
			if runs++; runs > budget {
				return Result{}, false
			}
			r, err := run(ctx, cand)
			if err != nil {
				return r, false
			}
			for _, inv := range r.Invariants() {
				if slices.Contains(want, inv) {
					return r, true
				}
			}
		}
		return Result{}, false
	}
	for progress := true; progress && ctx.Err() == nil; {
		progress = false
		for _, cand := range candidates(c) {
			if r, ok := fails(cand); ok {
				c, res, progress = cand, r, true
				break
			}
		}
	}
	return c, res
}

// candidates returns the one-step reductions of c, biggest cut first.
func candidates(c Case) []Case {
	var out []Case
	add := func(f func(*Case)) {
		n := c
		f(&n)
		if n != c {
			out = append(out, n)
		}
	}
	add(func(n *Case) { n.Objects /= 2 })
	add(func(n *Case) { n.Churn /= 2 })
	add(func(n *Case) {
		if n.Objects > 1 {
			n.Objects--
		}
	})
	add(func(n *Case) {
		if n.Churn > 0 {
			n.Churn--
		}
	})
	for i := range numClasses {
		cl := Class(1 << i)
		add(func(n *Case) {
			n.Classes &^= cl
			if cl == Crash {
				n.CrashAt, n.CrashApplied = 0, false
			}
			if n.Classes&(Churn|Recreate) == 0 {
				n.Churn = 0
			}
		})
	}
	add(func(n *Case) { n.CrashAt, n.CrashApplied = 0, false })
	add(func(n *Case) { n.Workers = 1 })
	add(func(n *Case) { n.AvailableDelay = false })
	add(func(n *Case) { n.Async = false })
	return out
}
