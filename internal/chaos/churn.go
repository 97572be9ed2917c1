package chaos

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// churn makes one change a user would make while the Binder runs: create
// or delete a claim, create a volume, delete an unbound volume.
func (r *run) churn() error {
	ctx := r.ctx
	r.created++
	switch n := r.rng.IntN(20); {
	case n < 7:
		_, err := r.srv.CreateClaim(ctx, newClaim(fmt.Sprintf("new-claim-%d", r.created), r.claimClass(), 1+r.rng.IntN(8)))
		return err
	case n < 12:
		claims := r.srv.Claims()
		if len(claims) == 0 {
			return nil
		}
		pvc := claims[r.rng.IntN(len(claims))]
		return ignoreNotFound(r.srv.DeleteClaim(ctx, pvc.Namespace, pvc.Name))
	case n < 16:
		pv := newVolume(fmt.Sprintf("new-pv-%d", r.created), r.staticClass(), 1+r.rng.IntN(10),
			r.policy())
		r.addedVolume(pv)
		// Seeding is a create that no fault meant for the Binder hits.
		return r.srv.Seed(ctx, pv)
	default:
		vols := slices.DeleteFunc(r.srv.Volumes(), func(pv *v1.PersistentVolume) bool { return pv.Spec.ClaimRef != nil })
		if len(vols) == 0 {
			return nil
		}
		pv := vols[r.rng.IntN(len(vols))]
		delete(r.retained, pv.Name)
		// Faults meant for the Binder hit this delete too: retry it as
		// a user would.
		for range 100 {
			if err := ignoreNotFound(r.srv.DeleteVolume(ctx, pv.Name)); err == nil || ctx.Err() != nil {
				return ctx.Err()
			}
		}
		return fmt.Errorf("chaos: delete volume %s failed 100 times", pv.Name)
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// policy draws a reclaim policy: Recycle only where it does not make a
// known bug show (see RecycleErrors).
func (r *run) policy() v1.PersistentVolumeReclaimPolicy {
	p := policies[r.rng.IntN(len(policies))]
	if p == v1.PersistentVolumeReclaimRecycle && r.c.Classes&RecycleErrors == 0 && r.c.Classes&(Errors|Applied) != 0 {
		return v1.PersistentVolumeReclaimDelete
	}
	return p
}

// asyncProvisioningOff reports whether claims must not be provisioned
// (see AsyncProvisioning).
func (r *run) asyncProvisioningOff() bool {
	return r.c.Classes&AsyncProvisioning == 0 && (r.c.Informers || r.c.Async)
}

// staticClass draws the class of a static volume: "", "manual" or "fast"
// (the last only where claims of it may be provisioned).
func (r *run) staticClass() string {
	if r.asyncProvisioningOff() {
		return classNamesAll[r.rng.IntN(2)]
	}
	return classNamesAll[r.rng.IntN(3)]
}

// claimClass draws the class of a claim: "", "manual", or (where claims
// may be provisioned) "fast" or "keep".
func (r *run) claimClass() string {
	if r.asyncProvisioningOff() {
		return classNamesAll[r.rng.IntN(2)]
	}
	return classNamesAll[r.rng.IntN(len(classNamesAll))]
}
