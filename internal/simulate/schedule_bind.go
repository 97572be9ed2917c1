package simulate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/scheduling"
)

// The binding cycle of the simulated scheduler: a Bind per pod on a
// goroutine of its own, ended when the Binder has settled without binding
// its claims, then the pod's binding to its node.

// errSimulationSettled ends the Binds still waiting when the Binder has
// nothing left to do: their claims will not be bound.
var errSimulationSettled = errors.New("the Binder had nothing left to do and the claims are not bound (without -provision, simulate runs no provisioner)")

// bindPod binds pod to node in the API and records the outcome.
func (s *podScheduler) bindPod(ctx context.Context, pod *v1.Pod, node string) {
	key := pod.Namespace + "/" + pod.Name
	err := s.srv.BindPod(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	})
	if err != nil {
		s.podsOn[node]--
		s.retry++
		s.outcomes[key] = fmt.Sprintf(`binding rejected: running Bind plugin "DefaultBinder": %v`, err)
		return
	}
	s.outcomes[key] = ""
	s.scheduled++
}

// podBind is a Bind under way.
type podBind struct {
	pod *v1.Pod
	// pv is Bind's to update until done is closed.
	pv *scheduling.PodVolumes
	// node is the chosen node; claims are the pod's claims Bind writes,
	// as namespace and name.
	node   string
	claims [][2]string
	cancel context.CancelCauseFunc
	done   chan struct{}
	err    error // Bind's, once done is closed
	// writes counts the API writes Bind has made (countingAPI); it is
	// complete at len(StaticBindings)+len(DynamicProvisions).
	writes atomic.Int32
	want   int32
}

// bindKey is the context key of the podBind whose writes countingAPI counts.
type bindKey struct{}

// startBind runs Bind for pod on a goroutine of its own.
func (s *podScheduler) startBind(ctx context.Context, pod *v1.Pod, pv *scheduling.PodVolumes) *podBind {
	pb := &podBind{pod: pod, pv: pv, node: pv.Node.Name, done: make(chan struct{}), want: int32(len(pv.StaticBindings) + len(pv.DynamicProvisions))}
	for _, bi := range pv.StaticBindings {
		pb.claims = append(pb.claims, [2]string{bi.PVC.Namespace, bi.PVC.Name})
	}
	for _, c := range pv.DynamicProvisions {
		pb.claims = append(pb.claims, [2]string{c.Namespace, c.Name})
	}
	bctx, cancel := context.WithCancelCause(context.WithValue(ctx, bindKey{}, pb))
	pb.cancel = cancel
	go func() {
		defer close(pb.done)
		pb.err = s.vb.Bind(bctx, pod, pv)
	}()
	return pb
}

// written reports whether the Bind has returned or made all its writes.
func (pb *podBind) written() bool {
	select {
	case <-pb.done:
		return true
	default:
		return pb.writes.Load() >= pb.want
	}
}

// finishBinds waits for binds: once every Bind has made its writes, it
// lets the Binder settle, ends the Binds whose claims are still not bound
// (they would wait forever) and binds the pods of the others.
func (s *podScheduler) finishBinds(ctx context.Context, binds []*podBind, settle func(context.Context) error) error {
	if len(binds) == 0 {
		return nil
	}
	err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
		return !slices.ContainsFunc(binds, func(pb *podBind) bool { return !pb.written() }), nil
	})
	if err == nil {
		err = settle(ctx)
	}
	for _, pb := range binds {
		if err != nil || !s.claimsBound(pb.claims) {
			pb.cancel(errSimulationSettled)
		}
	}
	for _, pb := range binds {
		<-pb.done
		pb.cancel(nil)
		key := pb.pod.Namespace + "/" + pb.pod.Name
		if pb.err != nil {
			s.podsOn[pb.node]--
			if !errors.Is(pb.err, errSimulationSettled) {
				s.retry++
			}
			s.outcomes[key] = prebindPrefix + pb.err.Error()
			continue
		}
		s.bindPod(ctx, pb.pod, pb.node)
	}
	return err
}

// claimsBound reports whether every claim is bound (volumeName and the
// bind-completed annotation) in the scheduler's cache.
func (s *podScheduler) claimsBound(claims [][2]string) bool {
	for _, c := range claims {
		got, ok := s.vb.Claim(c[0], c[1])
		if !ok {
			return false
		}
		if _, done := got.Annotations[volume.AnnBindCompleted]; !done || got.Spec.VolumeName == "" {
			return false
		}
	}
	return true
}

// countingAPI is the scheduler's API: srv's writes, counted on the
// podBind of the context they are made in.
type countingAPI struct {
	api scheduling.API
	// sem lets one write through at a time: a thousand Binds writing at
	// once left the in-memory API's lock handing off between goroutines.
	sem chan struct{}
}

var _ scheduling.API = (*countingAPI)(nil)

// acquire waits for the write slot, or until ctx is done.
func (c *countingAPI) acquire(ctx context.Context) error {
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func count(ctx context.Context) {
	if pb, ok := ctx.Value(bindKey{}).(*podBind); ok {
		pb.writes.Add(1)
	}
}

// UpdateVolume writes pv through the wrapped API and counts the write.
func (c *countingAPI) UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	defer count(ctx)
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	defer func() { <-c.sem }()
	return c.api.UpdateVolume(ctx, pv)
}

// UpdateClaim writes pvc through the wrapped API and counts the write.
func (c *countingAPI) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	defer count(ctx)
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	defer func() { <-c.sem }()
	return c.api.UpdateClaim(ctx, pvc)
}
