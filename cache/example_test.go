package cache_test

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/cache"
)

func volume(name, class, rv, claim string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv},
		Spec:       v1.PersistentVolumeSpec{StorageClassName: class},
	}
	if claim != "" {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: claim}
	}
	return pv
}

func claimOf(pv *v1.PersistentVolume) string {
	if pv.Spec.ClaimRef == nil {
		return "-"
	}
	return pv.Spec.ClaimRef.Name
}

// A binder writes a volume, assumes the API server's answer so that its
// next decision sees it, and the informer later catches up.
func ExampleAssume() {
	pvs := cache.NewAssume(cache.AssumeConfig[*v1.PersistentVolume]{Description: "PersistentVolume"})
	// In a program: informer.AddEventHandler(pvs). Here: fed by hand.
	pvs.OnAdd(volume("pv1", "gold", "10", ""), false)
	pvs.OnAdd(volume("pv2", "gold", "11", ""), false)

	// The API server accepted our write of pv1 and returned version 12.
	if err := pvs.Assume(volume("pv1", "gold", "12", "claim-a")); err != nil {
		fmt.Println(err)
	}
	latest, _ := pvs.Get("pv1")
	api, _ := pvs.GetAPIObj("pv1")
	fmt.Println("latest:", latest.ResourceVersion, claimOf(latest), "informer:", api.ResourceVersion, claimOf(api))

	// Versions older than the cached one are refused, naming both.
	err := pvs.Assume(volume("pv1", "gold", "9", ""))
	fmt.Println(cache.IsStale(err), err)
	err = pvs.Assume(volume("pv9", "gold", "1", ""))
	fmt.Println(errors.Is(err, cache.ErrNotFound), err)

	// The informer delivers our write: the assumption is done.
	pvs.OnUpdate(api, volume("pv1", "gold", "12", "claim-a"))
	fmt.Println("assumed:", pvs.IsAssumed("pv1"))

	// A write we give up on is dropped with Restore.
	_ = pvs.Assume(volume("pv2", "gold", "11", "claim-b"))
	pvs.Restore("pv2")
	pv2, _ := pvs.Get("pv2")
	fmt.Println("pv2 after restore:", pv2.ResourceVersion, claimOf(pv2))
	// Output:
	// latest: 12 claim-a informer: 10 -
	// true cache: assume: PersistentVolume "pv1": version 9 is older than the cached version 12
	// true cache: assume PersistentVolume "pv9" at version 1: cache: object not found
	// assumed: false
	// pv2 after restore: 11 -
}

// The controller stores the API server's answer right after its own
// write, so a stale informer event cannot take the cache back to a version
// older than that write.
func ExampleLatest() {
	latest := cache.NewLatest[*v1.PersistentVolume]()
	informerPV := volume("pv1", "gold", "10", "")
	_, _ = latest.Store(informerPV) // from the informer; versions here are valid, so no error

	// Our write succeeds; the API server returns version 11.
	written := volume("pv1", "gold", "11", "claim-a")
	stored, _ := latest.Store(written)
	fmt.Println("stored our write:", stored)

	// The informer is behind and delivers version 10 again.
	stored, _ = latest.Store(informerPV)
	fmt.Println("stored stale event:", stored)

	pv, _ := latest.Get("pv1")
	fmt.Println("cache has:", pv.ResourceVersion, claimOf(pv), pv == written)
	// Output:
	// stored our write: true
	// stored stale event: false
	// cache has: 11 claim-a true
}
