package recycler

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Pauses before watching again. A watch is productive when it delivered a
// version of the pod not seen before it started, or stayed open at least
// rewatchMaxDelay. After a productive watch, and after the first
// unproductive one (or failure to watch), the next watch starts at once;
// after further unproductive ones it waits rewatchInitialDelay, doubling up
// to rewatchMaxDelay. A server that ends every watch right after replaying
// the pod's unchanged state thus gets no tight loop of watches.
const (
	rewatchInitialDelay = 500 * time.Millisecond
	rewatchMaxDelay     = 30 * time.Second
)

// waiter follows one recycler pod until it finishes. It is used by one
// goroutine, the one running Recycle.
type waiter struct {
	r       *Recycler
	volume  string
	key     types.NamespacedName
	timeout time.Duration
	logger  klog.Logger

	// uid is the pod's UID once created or adopted; empty when the API
	// returned none, then UIDs are not compared.
	uid types.UID
	// w is the open watch, nil between a closed watch and the next one.
	w watch.Interface
	// delivered is true once w delivered a version of the pod other than
	// startRV, or an event other than a pod's.
	delivered bool
	// started is when w was opened, on the Recycler's clock.
	started time.Time
	// startRV is lastRV when w was opened.
	startRV string
	// lastRV is the resourceVersion of the last version of the pod seen.
	lastRV string
	// quiet counts consecutive unproductive watches (including failures to
	// open one).
	quiet int
	// phase is the last phase seen.
	phase v1.PodPhase
	// lastErr is the last error met while watching again.
	lastErr error
	// replaced is set when the pod of our name is another pod (other UID):
	// it must not be deleted.
	replaced bool
}

func (w *waiter) startWatch(ctx context.Context) error {
	wi, err := w.r.pods.WatchPod(ctx, w.key.Namespace, w.key.Name)
	if err != nil {
		return err
	}
	w.w, w.delivered = wi, false
	w.started, w.startRV = w.r.clock.Now(), w.lastRV
	return nil
}

func (w *waiter) stopWatch() {
	if w.w != nil {
		w.w.Stop()
		w.w = nil
	}
}

// wait blocks until the pod finishes, is deleted or replaced, the timeout
// passes or ctx is done. pod is the pod as created or adopted.
func (w *waiter) wait(ctx context.Context, pod *v1.Pod) error {
	if done, err := w.observe(pod); done {
		return err
	}
	timer := w.r.clock.NewTimer(w.timeout)
	defer timer.Stop()
	// pause delays the next watch after watches that ended quietly or
	// failed; nil when no pause is armed.
	var pause clock.Timer
	defer func() {
		if pause != nil {
			pause.Stop()
		}
	}()

	for {
		if w.w == nil && pause == nil {
			if d := w.rewatchDelay(); d > 0 {
				pause = w.r.clock.NewTimer(d)
			} else if done, err := w.rewatch(ctx); done {
				return err
			} else if w.w == nil {
				continue // failed; the next try pauses
			}
		}
		var events <-chan watch.Event
		if w.w != nil {
			events = w.w.ResultChan()
		}
		var pauseC <-chan time.Time
		if pause != nil {
			pauseC = pause.C()
		}

		select {
		case <-ctx.Done():
			return w.cancelled(ctx)

		case <-timer.C():
			w.logger.Info("Recycler pod did not finish in time", "timeout", w.timeout, "phase", w.phase)
			return &TimeoutError{Volume: w.volume, Pod: w.key, Timeout: w.timeout, Phase: w.phase, LastError: w.lastErr}

		case <-pauseC:
			pause = nil
			if done, err := w.rewatch(ctx); done {
				return err
			}

		case ev, ok := <-events:
			if ok && ev.Type != watch.Error {
				if pod, isPod := ev.Object.(*v1.Pod); !isPod || pod.ResourceVersion == "" || pod.ResourceVersion != w.startRV {
					w.delivered = true
				}
				if done, err := w.handle(ev); done {
					return err
				}
				continue
			}
			if ok {
				w.lastErr = apierrors.FromObject(ev.Object)
				w.logger.V(2).Info("Recycler pod watch reported an error; watching again", "err", w.lastErr)
			} else {
				w.logger.V(4).Info("Recycler pod watch ended; watching again")
			}
			if w.delivered || w.r.clock.Since(w.started) >= rewatchMaxDelay {
				w.quiet = 0
			} else {
				w.quiet++
			}
			w.stopWatch()
		}
	}
}

// rewatchDelay is the pause before the next watch: none after a productive
// watch or the first unproductive one, then doubling.
func (w *waiter) rewatchDelay() time.Duration {
	if w.quiet <= 1 {
		return 0
	}
	d := rewatchInitialDelay
	for i := 2; i < w.quiet && d < rewatchMaxDelay; i++ {
		d *= 2
	}
	return min(d, rewatchMaxDelay)
}

// rewatch opens a new watch and then reads the pod, so that changes made
// while no watch was open are seen. On an API failure it leaves no watch
// open (w.w == nil) and counts the failure, so the caller pauses before
// the next try; a pod that is gone ends the wait.
func (w *waiter) rewatch(ctx context.Context) (bool, error) {
	if ctx.Err() != nil {
		return true, w.cancelled(ctx)
	}
	var pod *v1.Pod
	err := w.startWatch(ctx)
	if err == nil {
		pod, err = w.r.pods.GetPod(ctx, w.key.Namespace, w.key.Name)
	}
	switch {
	case apierrors.IsNotFound(err):
		return true, w.deleted()
	case err != nil:
		if ctx.Err() != nil {
			return true, w.cancelled(ctx)
		}
		w.lastErr = err
		w.quiet++
		w.stopWatch()
		w.logger.V(2).Info("Failed to watch recycler pod again; retrying", "err", err)
		return false, nil
	}
	return w.observe(pod)
}

func (w *waiter) cancelled(ctx context.Context) error {
	return fmt.Errorf("recycler: recycle volume %s: wait for recycler pod %s: %w", w.volume, w.key, ctx.Err())
}

// handle processes one watch event other than an error.
func (w *waiter) handle(ev watch.Event) (bool, error) {
	pod, ok := ev.Object.(*v1.Pod)
	if !ok || pod.Namespace != w.key.Namespace || pod.Name != w.key.Name {
		return false, nil
	}
	switch ev.Type {
	case watch.Added, watch.Modified:
		return w.observe(pod)
	case watch.Deleted:
		if w.uid != "" && pod.UID != "" && pod.UID != w.uid {
			return false, nil
		}
		return true, w.deleted()
	default:
		return false, nil
	}
}

// observe checks one version of the pod.
func (w *waiter) observe(pod *v1.Pod) (bool, error) {
	if pod.Namespace != w.key.Namespace || pod.Name != w.key.Name {
		return false, nil
	}
	if w.uid != "" && pod.UID != "" && pod.UID != w.uid {
		w.replaced = true
		w.logger.Info("Recycler pod was replaced by another pod of the same name", "uid", pod.UID, "want", w.uid)
		return true, fmt.Errorf("recycler: recycler pod %s for volume %s was replaced by another pod (UID %s, want %s): %w",
			w.key, w.volume, pod.UID, w.uid, ErrPodDeleted)
	}
	w.phase = pod.Status.Phase
	if pod.ResourceVersion != "" {
		w.lastRV = pod.ResourceVersion
	}
	switch pod.Status.Phase {
	case v1.PodSucceeded:
		w.logger.V(2).Info("Recycler pod succeeded")
		return true, nil
	case v1.PodFailed:
		err := newPodFailedError(w.volume, pod)
		w.logger.Info("Recycler pod failed", "reason", err.Reason, "message", err.Message)
		return true, err
	default:
		w.logger.V(4).Info("Recycler pod changed", "phase", pod.Status.Phase)
		return false, nil
	}
}

func (w *waiter) deleted() error {
	w.logger.Info("Recycler pod was deleted before it finished")
	return fmt.Errorf("recycler: recycler pod %s for volume %s: %w", w.key, w.volume, ErrPodDeleted)
}
