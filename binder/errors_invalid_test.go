package binder

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/volbind/volbind/cache"
)

// TestErrInvalidObjectIsOneSentinel: a malformed object is matched by the
// same sentinel whether the Binder or a cache refused it.
func TestErrInvalidObjectIsOneSentinel(t *testing.T) {
	_, cacheErr := cache.NewLatest[*v1.PersistentVolume]().Store(&v1.PersistentVolume{})
	if !errors.Is(cacheErr, ErrInvalidObject) {
		t.Errorf("cache error %v does not match binder.ErrInvalidObject", cacheErr)
	}
	binderErr := &InvalidObjectError{Kind: "PersistentVolume", Key: "pv1", Problem: "no storage capacity"}
	if !errors.Is(binderErr, cache.ErrInvalidObject) || !IsInvalidObject(binderErr) {
		t.Errorf("binder error %v does not match cache.ErrInvalidObject", binderErr)
	}
}
