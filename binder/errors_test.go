package binder

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/volbind/volbind/cache"
)

// One sentinel: a malformed object is ErrInvalidObject whether the Binder
// (an *InvalidObjectError) or its cache (a nameless object) refused it.
func TestErrInvalidObjectIsOneSentinel(t *testing.T) {
	t.Parallel()
	l := cache.NewLatest[*v1.PersistentVolume]()
	_, err := l.Store(newPV("", "1Gi"))
	if !IsInvalidObject(err) {
		t.Errorf("cache's error for a nameless volume: IsInvalidObject(%v) = false, want true", err)
	}
	if err := validateVolume(newPV("pv1", "1Gi", pvNoCapacity)); !errors.Is(err, cache.ErrInvalidObject) {
		t.Errorf("Binder's error for a volume without capacity: errors.Is(%v, cache.ErrInvalidObject) = false, want true", err)
	}
}
