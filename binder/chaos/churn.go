package chaos

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
)

// churn makes one change a user would make while the Binder runs: create
// or delete a claim, create a volume, delete an unbound volume.
func (r *run) churn() error {
	ctx := r.ctx
	r.created++
	switch n := r.rng.IntN(20); {
	case n < 7:
		class := classNamesAll[r.rng.IntN(len(classNamesAll))]
		_, err := r.srv.CreateClaim(ctx, newClaim(fmt.Sprintf("new-claim-%d", r.created), class, 1+r.rng.IntN(8)))
		return err
	case n < 12:
		claims := slices.DeleteFunc(r.srv.Claims(), func(pvc *v1.PersistentVolumeClaim) bool {
			// A Pending claim of a provisioning class may be in the
			// middle of its provisioning (issue 14 point 2), which only
			// asynchronous events show.
			return r.c.Classes&ClaimGoneMidProvision == 0 && (r.c.Informers || r.c.Async) &&
				pvc.Status.Phase == v1.ClaimPending && provisions(ptr.Deref(pvc.Spec.StorageClassName, ""))
		})
		if len(claims) == 0 {
			return nil
		}
		pvc := claims[r.rng.IntN(len(claims))]
		return ignoreNotFound(r.srv.DeleteClaim(ctx, pvc.Namespace, pvc.Name))
	case n < 16:
		pv := newVolume(fmt.Sprintf("new-pv-%d", r.created), classNamesAll[r.rng.IntN(3)], 1+r.rng.IntN(10),
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
		r.userDeleted[pv.Name] = true
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
