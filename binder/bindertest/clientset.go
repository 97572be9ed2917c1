package bindertest

import (
	"errors"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// Clientset is the part of client-go's fake clientset (*fake.Clientset of
// k8s.io/client-go/kubernetes/fake) that AdvanceVersions uses.
type Clientset interface {
	PrependReactor(verb, resource string, reaction k8stesting.ReactionFunc)
	Tracker() k8stesting.ObjectTracker
}

// AdvanceVersions makes client-go's fake clientset keep resourceVersions
// as kube-apiserver does, for tests that run a binder.Binder on it (the
// Server of this package does so already). The fake stores objects with
// the resourceVersion they were sent with, so the answer to an update
// carries the version of the object it replaced and a stale update
// succeeds: a Binder, which keeps the newest version of every object,
// cannot tell its own write's answer from the version before it and
// writes a binding again. After AdvanceVersions, every create and update
// through cs (status updates too) stores the object with a version
// greater than every version it has seen: set, sent, replaced or deleted
// (so a name re-created after a deletion gets a newer version than the
// deleted object, as the Binder's ordering of deletions needs). An update
// whose non-empty resourceVersion is not the stored one fails with a
// Conflict, as kube-apiserver's optimistic concurrency does.
//
// Objects given to fake.NewClientset are stored as given, without going
// through cs: give each one an integer resourceVersion. Patches, and
// writes made on cs.Tracker() directly, keep the fake's own behaviour.
// Call it before the first request; it is safe for concurrent requests.
func AdvanceVersions(cs Clientset) {
	v := &versioner{react: k8stesting.ObjectReaction(cs.Tracker()), tracker: cs.Tracker()}
	cs.PrependReactor("create", "*", v.write)
	cs.PrependReactor("update", "*", v.write)
	cs.PrependReactor("delete", "*", v.delete)
}

// versioner stamps versions on the writes of one fake clientset. Its lock
// makes the check of an update's version and the store one step.
type versioner struct {
	mu      sync.Mutex
	last    uint64
	react   k8stesting.ReactionFunc
	tracker k8stesting.ObjectTracker
}

func (v *versioner) write(action k8stesting.Action) (bool, runtime.Object, error) {
	action = action.DeepCopy() // the action holds the caller's object
	a, ok := action.(interface{ GetObject() runtime.Object })
	if !ok {
		return false, nil, nil
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return false, nil, nil // not an object with metadata: the fake decides
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	next := max(v.last, rvNumber(obj.GetResourceVersion()))
	if action.GetVerb() == "update" {
		stored, err := v.tracker.Get(action.GetResource(), action.GetNamespace(), obj.GetName())
		if err != nil {
			return true, nil, err
		}
		sm, err := meta.Accessor(stored)
		if err != nil {
			return true, nil, err
		}
		if rv := obj.GetResourceVersion(); rv != "" && rv != sm.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(action.GetResource().GroupResource(), obj.GetName(), errors.New(optimisticLockMsg))
		}
		next = max(next, rvNumber(sm.GetResourceVersion()))
	}
	next++
	obj.SetResourceVersion(formatRV(next))
	handled, out, err := v.react(action)
	if err == nil {
		v.last = next
	}
	return handled, out, err
}

// delete raises the versions above the deleted object's and lets the
// fake delete it.
func (v *versioner) delete(action k8stesting.Action) (bool, runtime.Object, error) {
	d, ok := action.(k8stesting.DeleteAction)
	if !ok {
		return false, nil, nil
	}
	stored, err := v.tracker.Get(action.GetResource(), action.GetNamespace(), d.GetName())
	if err != nil {
		return false, nil, nil // the fake answers NotFound
	}
	if m, err := meta.Accessor(stored); err == nil {
		v.mu.Lock()
		v.last = max(v.last, rvNumber(m.GetResourceVersion()))
		v.mu.Unlock()
	}
	return false, nil, nil
}
