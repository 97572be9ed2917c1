package chaos

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// churn makes one change a user would make while the Binder runs: create
// or delete a claim, create a volume, delete an unbound volume (Churn), or
// delete a claim or an unbound volume and create it again under the same
// name (Recreate).
func (r *run) churn() error {
	r.created++
	if r.c.Classes&Recreate != 0 && (r.c.Classes&Churn == 0 || r.rng.IntN(3) == 0) {
		if r.rng.IntN(2) == 0 {
			return r.recreateClaim()
		}
		return r.recreateVolume()
	}
	ctx := r.ctx
	switch n := r.rng.IntN(20); {
	case n < 7:
		_, err := r.srv.CreateClaim(ctx, r.newClaim(fmt.Sprintf("new-claim-%d", r.created), 1+r.rng.IntN(8)))
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
		pv := r.unboundVolume()
		if pv == nil {
			return nil
		}
		return r.deleteVolume(pv.Name)
	}
}

// recreateClaim deletes a claim, bound or not, and creates a claim of the
// same name with a new UID and another size and class.
func (r *run) recreateClaim() error {
	claims := r.srv.Claims()
	if len(claims) == 0 {
		return nil
	}
	old := claims[r.rng.IntN(len(claims))]
	if err := ignoreNotFound(r.srv.DeleteClaim(r.ctx, old.Namespace, old.Name)); err != nil {
		return err
	}
	_, err := r.srv.CreateClaim(r.ctx, r.newClaim(old.Name, 1+r.rng.IntN(8)))
	return err
}

// recreateVolume deletes an unbound volume and creates a volume of the
// same name with a new UID, its own storage and another size, class and
// reclaim policy.
func (r *run) recreateVolume() error {
	old := r.unboundVolume()
	if old == nil {
		return nil
	}
	if err := r.deleteVolume(old.Name); err != nil {
		return err
	}
	pv := newVolume(old.Name, r.staticClass(), 1+r.rng.IntN(10), r.policy())
	pv.UID = types.UID(fmt.Sprintf("uid-%s-%d", old.Name, r.created))
	withHandle(pv, fmt.Sprintf("%s-%d", old.Name, r.created))
	r.addedVolume(pv)
	return r.srv.Seed(r.ctx, pv)
}

// unboundVolume returns a volume without claimRef, or nil.
func (r *run) unboundVolume() *v1.PersistentVolume {
	vols := slices.DeleteFunc(r.srv.Volumes(), func(pv *v1.PersistentVolume) bool { return pv.Spec.ClaimRef != nil })
	if len(vols) == 0 {
		return nil
	}
	return vols[r.rng.IntN(len(vols))]
}

// deleteVolume deletes the named volume as a user does: faults meant for
// the Binder hit this delete too, so it is retried.
func (r *run) deleteVolume(name string) error {
	ctx := r.ctx
	delete(r.retained, name)
	for range 100 {
		if err := ignoreNotFound(r.srv.DeleteVolume(ctx, name)); err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("chaos: delete volume %s failed 100 times", name)
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

// newClaim returns a Pending claim of a drawn class: "", "manual", or
// (where claims may be provisioned) "fast" or "keep"; with DefaultClass,
// one in four has no class.
func (r *run) newClaim(name string, size int) *v1.PersistentVolumeClaim {
	n := 2
	if !r.asyncProvisioningOff() {
		n = len(classNamesAll)
	}
	pvc := newClaim(name, classNamesAll[r.rng.IntN(n)], size)
	if r.defaultClass != "" && r.rng.IntN(4) == 0 {
		pvc.Spec.StorageClassName = nil
	}
	return pvc
}

// pickDefaultClass draws the default class of a DefaultClass run: "manual"
// or, where claims may be provisioned, "fast".
func (r *run) pickDefaultClass() string {
	if r.c.Classes&DefaultClass == 0 {
		return ""
	}
	if r.asyncProvisioningOff() || r.rng.IntN(2) == 0 {
		return "manual"
	}
	return "fast"
}
