package recycler

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DefaultDeleteTimeout bounds the deletion of the recycler pod when
// Config.DeleteTimeout is zero.
const DefaultDeleteTimeout = 30 * time.Second

// Config configures a Recycler. The zero value is valid.
type Config struct {
	// Clock times the recycler pod's timeout and the pauses between watch
	// re-establishments. Default clock.RealClock{}.
	Clock clock.Clock

	// PodTemplate is the pod to run. Recycle copies it and sets the name
	// (PodName), the annotations AnnVolume and AnnVolumeUID,
	// activeDeadlineSeconds (the timeout) and the source of the first volume
	// in Spec.Volumes (the recycled volume's NFS or HostPath source). It
	// must have a container, a container must mount that first volume and
	// the restart policy must not be Always (empty means Never); an empty
	// namespace means "default". New returns an ErrInvalidTemplate error
	// otherwise. Default DefaultPodTemplate(). New copies it.
	PodTemplate *v1.Pod

	// NFSTimeout is the time limit for NFS volumes; zero fields take
	// DefaultNFSMinimumTimeout and DefaultNFSTimeoutPerGiB.
	NFSTimeout Timeout
	// HostPathTimeout is the time limit for HostPath volumes; zero fields
	// take DefaultHostPathMinimumTimeout and DefaultHostPathTimeoutPerGiB.
	HostPathTimeout Timeout

	// DeleteTimeout bounds the call that deletes the recycler pod, which is
	// made even when the ctx of Recycle is done. Default DefaultDeleteTimeout.
	DeleteTimeout time.Duration
}

// Recycler scrubs released volumes with recycler pods. It holds no state
// between calls and is safe for concurrent use; callers must not recycle
// one volume in two calls at once (the second would adopt the first's pod).
type Recycler struct {
	pods          PodAPI
	clock         clock.Clock
	template      *v1.Pod
	nfs           Timeout
	hostPath      Timeout
	deleteTimeout time.Duration
}

// New returns a Recycler that manages pods through pods. It fails when pods
// is nil or the pod template cannot run as a recycler pod (an
// ErrInvalidTemplate error). It starts nothing.
func New(pods PodAPI, cfg Config) (*Recycler, error) {
	if pods == nil {
		return nil, errors.New("recycler: PodAPI is nil")
	}
	r := &Recycler{
		pods:          pods,
		clock:         cfg.Clock,
		nfs:           cfg.NFSTimeout.withDefaults(Timeout{DefaultNFSMinimumTimeout, DefaultNFSTimeoutPerGiB}),
		hostPath:      cfg.HostPathTimeout.withDefaults(Timeout{DefaultHostPathMinimumTimeout, DefaultHostPathTimeoutPerGiB}),
		deleteTimeout: cfg.DeleteTimeout,
	}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	if r.deleteTimeout <= 0 {
		r.deleteTimeout = DefaultDeleteTimeout
	}
	if cfg.PodTemplate == nil {
		r.template = DefaultPodTemplate()
	} else {
		if err := validateTemplate(cfg.PodTemplate); err != nil {
			return nil, err
		}
		r.template = cfg.PodTemplate.DeepCopy()
	}
	return r, nil
}

// Timeout returns how long Recycle waits for pv's recycler pod, or an
// ErrUnsupportedVolume error when pv cannot be recycled.
func (r *Recycler) Timeout(pv *v1.PersistentVolume) (time.Duration, error) {
	_, kind, err := volumeSource(pv)
	if err != nil {
		return 0, err
	}
	return r.timeoutFor(kind, pv), nil
}

func (r *Recycler) timeoutFor(kind sourceKind, pv *v1.PersistentVolume) time.Duration {
	if kind == kindHostPath {
		return r.hostPath.For(pv)
	}
	return r.nfs.For(pv)
}

// PodFor returns the recycler pod Recycle would create for pv: the template
// with name PodName(pv.Name), the annotations AnnVolume and AnnVolumeUID,
// pv's source on the first volume and the timeout as activeDeadlineSeconds.
// It fails like CanRecycle. It makes no API call; the caller owns the
// result.
func (r *Recycler) PodFor(pv *v1.PersistentVolume) (*v1.Pod, error) {
	src, kind, err := volumeSource(pv)
	if err != nil {
		return nil, err
	}
	return newPod(r.template, pv, src, deadlineSeconds(r.timeoutFor(kind, pv))), nil
}

// createAttempts bounds the create-or-adopt loop: a pod that exists when
// created but is gone when read is created again, at most this many times.
const createAttempts = 3

// Recycle scrubs pv and blocks until its recycler pod has finished, the
// timeout has passed or ctx is done. It creates the pod PodName(pv.Name),
// or adopts the pod a previous run created under that name (annotations
// with pv's name and UID, mounting pv's source); a pod of that name that
// does not belong to pv is neither adopted nor deleted (*ForeignPodError).
// It then follows the pod through WatchPod events, watching again and
// re-reading the pod whenever the watch ends early. The wait is bounded by
// the timeout of pv's kind (see Timeout and Config), measured on
// Config.Clock from the moment the pod was created or adopted.
//
// Once the pod was created or adopted, Recycle deletes it before returning,
// whatever the outcome, with a context that is not cancelled with ctx and
// is bounded by Config.DeleteTimeout; a pod of that name that has been
// replaced by another pod is left alone. When ctx ends during the create
// call, Recycle deletes the pod if it was created after all. A pod created
// despite another failed create call is adopted by the next Recycle.
//
// It returns nil when the pod succeeded and was deleted; a *PodFailedError
// (ErrPodFailed), a *TimeoutError (ErrTimeout), an ErrPodDeleted error or
// ctx's error otherwise, joined with the deletion's error if that failed
// too. Recycle does not modify pv and starts no goroutine of its own; the
// watch is stopped before it returns.
func (r *Recycler) Recycle(ctx context.Context, pv *v1.PersistentVolume) error {
	src, kind, err := volumeSource(pv)
	if err != nil {
		return err
	}
	timeout := r.timeoutFor(kind, pv)
	pod := newPod(r.template, pv, src, deadlineSeconds(timeout))
	w := &waiter{
		r:       r,
		volume:  pv.Name,
		key:     types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name},
		timeout: timeout,
		logger:  klog.FromContext(ctx).WithValues("pv", klog.KObj(pv), "pod", klog.KObj(pod)),
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("recycler: recycle volume %s: %w", pv.Name, err)
	}

	// Watch first, so that no change after the create or the adoption's
	// read is missed.
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := w.startWatch(watchCtx); err != nil {
		return fmt.Errorf("recycler: watch recycler pod %s for volume %s: %w", w.key, pv.Name, err)
	}
	defer w.stopWatch()

	current, err := r.createOrAdopt(ctx, w, pod, pv, src)
	if err != nil {
		return err
	}
	w.uid = current.UID

	waitErr := w.wait(watchCtx, current)
	w.stopWatch()
	var deleteErr error
	if !w.replaced {
		deleteErr = r.deletePod(ctx, w)
	}
	switch {
	case waitErr != nil && deleteErr != nil:
		return errors.Join(waitErr, deleteErr)
	case waitErr != nil:
		return waitErr
	case deleteErr != nil:
		return deleteErr
	}
	w.logger.V(2).Info("Recycled volume")
	return nil
}

// createOrAdopt creates pod or, when its name is taken, adopts the existing
// pod if it belongs to pv. It returns the pod to wait for.
func (r *Recycler) createOrAdopt(ctx context.Context, w *waiter, pod *v1.Pod, pv *v1.PersistentVolume, src v1.VolumeSource) (*v1.Pod, error) {
	for attempt := 1; ; attempt++ {
		created, err := r.pods.CreatePod(ctx, pod)
		switch {
		case err == nil:
			w.logger.V(2).Info("Created recycler pod", "timeout", w.timeout)
			return created, nil
		case !apierrors.IsAlreadyExists(err):
			if ctx.Err() != nil {
				r.deleteIfCreated(ctx, w, pv, src)
			}
			return nil, fmt.Errorf("recycler: create recycler pod %s for volume %s: %w", w.key, pv.Name, err)
		}

		current, err := r.pods.GetPod(ctx, w.key.Namespace, w.key.Name)
		if apierrors.IsNotFound(err) && attempt < createAttempts {
			w.logger.V(4).Info("Recycler pod vanished between create and read; creating it again")
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("recycler: recycler pod %s for volume %s exists but cannot be read: %w", w.key, pv.Name, err)
		}
		if err := checkOwner(current, pv, src); err != nil {
			w.logger.Info("Refusing to adopt a pod that does not belong to the volume", "err", err)
			return nil, err
		}
		if current.DeletionTimestamp != nil {
			return nil, fmt.Errorf("recycler: recycler pod %s for volume %s is being deleted; recycle again when it is gone: %w",
				w.key, pv.Name, ErrPodDeleted)
		}
		w.logger.V(2).Info("Adopted recycler pod of an earlier run", "phase", current.Status.Phase, "timeout", w.timeout)
		return current, nil
	}
}

// deleteIfCreated deletes the recycler pod after a create call that ended
// with ctx, in case the API server created it all the same. Only a pod that
// belongs to pv is deleted; errors are logged, the next Recycle adopts a pod
// left behind.
func (r *Recycler) deleteIfCreated(ctx context.Context, w *waiter, pv *v1.PersistentVolume, src v1.VolumeSource) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.deleteTimeout)
	defer cancel()
	pod, err := r.pods.GetPod(dctx, w.key.Namespace, w.key.Name)
	switch {
	case apierrors.IsNotFound(err):
		return
	case err != nil:
		w.logger.Error(err, "Failed to check for a recycler pod created by a cancelled create")
		return
	case checkOwner(pod, pv, src) != nil:
		return
	}
	if err := r.pods.DeletePod(dctx, w.key.Namespace, w.key.Name); err != nil && !apierrors.IsNotFound(err) {
		w.logger.Error(err, "Failed to delete a recycler pod created by a cancelled create")
	}
}

// deletePod deletes the recycler pod with a context detached from ctx's
// cancellation and bounded by the delete timeout. A pod already gone is
// not an error.
func (r *Recycler) deletePod(ctx context.Context, w *waiter) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.deleteTimeout)
	defer cancel()
	err := r.pods.DeletePod(dctx, w.key.Namespace, w.key.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		w.logger.Error(err, "Failed to delete recycler pod")
		return fmt.Errorf("recycler: delete recycler pod %s for volume %s: %w", w.key, w.volume, err)
	}
	w.logger.V(4).Info("Deleted recycler pod")
	return nil
}
