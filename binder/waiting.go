package binder

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/pvindex"
)

// waitingClaim is what the tracker remembers of a claim in the claim queue.
type waitingClaim struct {
	group   pvindex.Group
	request int64 // bytes, rounded up
	// volumeName is the volume the claim asks for by name; empty for a
	// claim that takes the best match.
	volumeName string
}

// waitingFor returns what the tracker remembers of a queued claim, and
// false for a claim that cannot take an unbound volume (gone, bound
// already, or of a WaitForFirstConsumer class: delayed).
func waitingFor(pvc *v1.PersistentVolumeClaim, delayed bool) (waitingClaim, bool) {
	if pvc == nil || delayed || metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted) {
		return waitingClaim{}, false
	}
	request := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	return waitingClaim{
		group:      pvindex.ClaimGroup(pvc),
		request:    request.Value(),
		volumeName: pvc.Spec.VolumeName,
	}, true
}

// waitingClaims are the claims queued, being synced or waiting for their
// retry that might take an unbound volume, counted by group and request
// and by the volume they name, so that a volume sync asks "might a waiting
// claim take this volume?" in time proportional to the distinct requests
// of its group. It has no lock: its owner (the tracker) guards it.
type waitingClaims struct {
	// claims holds the waiting claims by key; sizes counts them by group
	// and request, byVolume by the volume they ask for.
	claims   map[string]waitingClaim
	sizes    map[pvindex.Group]map[int64]int
	byVolume map[string]int
}

func newWaitingClaims() waitingClaims {
	return waitingClaims{
		claims:   make(map[string]waitingClaim),
		sizes:    make(map[pvindex.Group]map[int64]int),
		byVolume: make(map[string]int),
	}
}

// grow makes room for n waiting claims (Run queues every claim at once).
func (wc *waitingClaims) grow(n int) {
	if len(wc.claims) == 0 {
		wc.claims = make(map[string]waitingClaim, n)
	}
}

// queued records that the claim with key is in the claim queue, as w when
// ok (see waitingFor); otherwise it is forgotten.
func (wc *waitingClaims) queued(key string, w waitingClaim, ok bool) {
	wc.done(key)
	if !ok {
		return
	}
	wc.claims[key] = w
	if w.volumeName != "" {
		wc.byVolume[w.volumeName]++
		return
	}
	m := wc.sizes[w.group]
	if m == nil {
		m = make(map[int64]int)
		wc.sizes[w.group] = m
	}
	m[w.request]++
}

// done forgets a claim whose sync has finished and that is not queued
// again.
func (wc *waitingClaims) done(key string) {
	w, ok := wc.claims[key]
	if !ok {
		return
	}
	delete(wc.claims, key)
	if w.volumeName != "" {
		if wc.byVolume[w.volumeName]--; wc.byVolume[w.volumeName] <= 0 {
			delete(wc.byVolume, w.volumeName)
		}
		return
	}
	m := wc.sizes[w.group]
	if m[w.request]--; m[w.request] <= 0 {
		delete(m, w.request)
		if len(m) == 0 {
			delete(wc.sizes, w.group)
		}
	}
}

// mayTake reports whether a waiting claim might take pv: the claim it is
// pre-bound to, a claim that asks for it by name, or a claim of its class,
// VolumeAttributesClass and volume mode that requests no more than its
// capacity (access modes and selectors are not checked: holding a volume a
// little longer than needed is harmless).
func (wc *waitingClaims) mayTake(pv *v1.PersistentVolume) bool {
	if ref := pv.Spec.ClaimRef; ref != nil {
		_, ok := wc.claims[cache.ClaimKey(ref.Namespace, ref.Name)]
		return ok
	}
	if wc.byVolume[pv.Name] > 0 {
		return true
	}
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	c := capacity.Value()
	for request := range wc.sizes[pvindex.VolumeGroup(pv)] {
		if request <= c {
			return true
		}
	}
	return false
}

// reset forgets every claim (Run stopped; the queues are gone).
func (wc *waitingClaims) reset() {
	clear(wc.claims)
	clear(wc.sizes)
	clear(wc.byVolume)
}
