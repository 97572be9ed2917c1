package chaos

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/volbind/volbind/binder/bindertest"
)

// injectFaults arms the Server with the request and watch faults of the
// case's classes; r.undo removes them before the run settles.
func (r *run) injectFaults() {
	cl := r.c.Classes
	kinds := []bindertest.Kind{bindertest.KindVolume, bindertest.KindClaim}
	verbs := []bindertest.Verb{bindertest.VerbCreate, bindertest.VerbUpdate, bindertest.VerbUpdateStatus,
		bindertest.VerbDelete, bindertest.VerbGet}
	for _, kind := range kinds {
		for _, verb := range verbs {
			if !r.faultAllowed(verb, kind) {
				continue
			}
			if cl&Errors != 0 {
				f := r.randomError()
				f.Verb, f.Kind, f.Fraction = verb, kind, 0.02+0.13*r.rng.Float64()
				r.undo = append(r.undo, r.srv.InjectFault(f))
			}
			if cl&Applied != 0 && verb != bindertest.VerbGet {
				f := r.randomError()
				f.Conflict = false
				f.Verb, f.Kind, f.Applied, f.Fraction = verb, kind, true, 0.02+0.08*r.rng.Float64()
				r.undo = append(r.undo, r.srv.InjectFault(f))
			}
		}
	}
	if cl&Errors != 0 && r.c.Objects > 0 {
		// Deterministic faults: a queue of different faults on the first
		// updates of a few objects.
		for range 1 + r.rng.IntN(3) {
			kind, name := bindertest.KindVolume, fmt.Sprintf("pv-%d", r.rng.IntN(r.c.Objects))
			if r.rng.IntN(2) == 0 {
				kind, name = bindertest.KindClaim, fmt.Sprintf("claim-%d", r.rng.IntN(r.c.Objects))
			}
			verb := []bindertest.Verb{bindertest.VerbUpdate, bindertest.VerbUpdateStatus}[r.rng.IntN(2)]
			var queue []bindertest.Fault
			for range 1 + r.rng.IntN(3) {
				f := r.randomError()
				f.Verb, f.Kind, f.Name, f.Nth = verb, kind, name, 1+r.rng.IntN(2)
				queue = append(queue, f)
			}
			r.undo = append(r.undo, r.srv.ArmFaults(queue...))
		}
	}
	if cl&Watch != 0 {
		actions := []bindertest.WatchAction{bindertest.WatchDuplicate, bindertest.WatchDelay, bindertest.WatchReorder}
		if r.c.Informers {
			// Handlers never relist, so only informers recover from a
			// lost event.
			actions = append(actions, bindertest.WatchDrop)
		}
		for range 1 + r.rng.IntN(3) {
			f := bindertest.WatchFault{Kind: kinds[r.rng.IntN(2)], Action: actions[r.rng.IntN(len(actions))],
				Delay: 1 + r.rng.IntN(5), Fraction: 0.05 + 0.15*r.rng.Float64()}
			r.undo = append(r.undo, r.srv.InjectWatchFault(f))
		}
	}
}

// faultAllowed keeps the request faults that make known bugs show off
// unless their class is enabled.
func (r *run) faultAllowed(verb bindertest.Verb, kind bindertest.Kind) bool {
	switch {
	case kind == bindertest.KindClaim && (verb == bindertest.VerbCreate || verb == bindertest.VerbDelete):
		// Only the driver, playing the user, creates and deletes claims.
		return false
	case verb == bindertest.VerbCreate && kind == bindertest.KindVolume:
		// The Binder creates only provisioned volumes.
		return r.c.Classes&ProvisionErrors != 0
	}
	return true
}

// randomError returns a fault failing with a conflict, an internal error
// or a timeout.
func (r *run) randomError() bindertest.Fault {
	switch r.rng.IntN(3) {
	case 0:
		return bindertest.Fault{Conflict: true}
	case 1:
		return bindertest.Fault{Err: apierrors.NewInternalError(errors.New("chaos: injected"))}
	}
	return bindertest.Fault{Timeout: true}
}
