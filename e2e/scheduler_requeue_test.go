//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// Requeue test sizes: lanes run the sequence at once, each rounds times.
const (
	requeueLanes  = 4
	requeueRounds = 5
	// requeueDeadline is how long a pod may stay unschedulable once its
	// class and a matching volume exist. kube-scheduler moves a pod that no
	// event requeued back only after 5 minutes; retries after the events
	// themselves take a few seconds of backoff.
	requeueDeadline = 30 * time.Second
)

// TestSchedulerRequeue runs, on the real API server with volbind's
// kube-scheduler and "volbind controller", the sequence in which a
// requeue used to be lost: a pod whose WaitForFirstConsumer claim names a
// StorageClass that does not exist is unschedulable; then the class is
// created and, right after it, a matching local volume on one of the nodes
// (a static provisioner at work). The scheduling queue retries the pod
// when its own informer handlers see the class and the volume; the
// plugin must see them too at that moment. Each pod must be scheduled
// within requeueDeadline, on the volume's node with its claim Bound to the
// volume. The sequence runs requeueRounds times in requeueLanes lanes at
// once, while the scheduler places a stream of pods without claims and
// busy goroutines compete for the CPU, so that the scheduler's goroutines
// are delayed as on a loaded machine.
func TestSchedulerRequeue(t *testing.T) {
	sched := buildScheduler(t)
	bin := buildVolbind(t)
	f := newFixture(t)
	nodes := f.createNodes(3)
	startProcess(t, "volbind-controller", bin, "controller", "--kubeconfig", testCluster.kubeconfig,
		"--kube-api-qps", "100", "--kube-api-burst", "200", "--metrics-addr", "", "--leader-elect=false")
	// One processor, as in a container with a 1-CPU limit (Go sizes
	// GOMAXPROCS by the cgroup's CPU limit): the goroutines of the
	// scheduling queue, its informer handlers and the plugin's take turns,
	// the order in which a handler that came later used to lose.
	startScheduler(t, sched, "GOMAXPROCS=1")
	t.Cleanup(func() {
		_ = f.cs.CoreV1().Pods(f.ns).DeleteCollection(context.Background(), deleteNow(), metav1.ListOptions{})
	})

	ctx, cancel := context.WithCancel(t.Context())
	load := startLoad(ctx, t, f)
	defer func() { cancel(); load.Wait() }()

	var (
		g       errgroup.Group
		slowest [requeueLanes]time.Duration // per lane
	)
	for lane := range requeueLanes {
		g.Go(func() error {
			for round := range requeueRounds {
				took, err := f.requeueRound(ctx, fmt.Sprintf("%d-%d", lane, round), nodes[(lane+round)%len(nodes)])
				if err != nil {
					return err
				}
				slowest[lane] = max(slowest[lane], took)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sequences scheduled, the slowest %v after its class and volume were created; %d claimless pods placed meanwhile",
		requeueLanes*requeueRounds, slices.Max(slowest[:]).Round(10*time.Millisecond), load.placed.Load())
}

// requeueRound runs the sequence once with names ending in id and the
// volume on node, and returns how long the pod took to be scheduled once
// its class and volume existed.
func (f *fixture) requeueRound(ctx context.Context, id string, node *v1.Node) (time.Duration, error) {
	class, podName := f.ns+"-late-"+id, "late-"+id
	f.t.Cleanup(func() { _ = f.cs.StorageV1().StorageClasses().Delete(context.Background(), class, deleteNow()) })
	claim := f.claim("data-"+id, 1)
	claim.Spec.StorageClassName = ptr.To(class)
	f.create(claim)
	pod := f.podUsing(podName, claim.Name)
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	if _, err := f.cs.CoreV1().Pods(f.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("create pod %s: %w", podName, err)
	}
	if err := f.pollPod(ctx, podName, time.Minute, func(p *v1.Pod) bool { return unschedulable(p) }); err != nil {
		return 0, fmt.Errorf("pod %s never reported unschedulable: %w", podName, err)
	}

	mode := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: volume.NotSupportedProvisioner, VolumeBindingMode: &mode}
	if _, err := f.cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("create StorageClass %s: %w", class, err)
	}
	pv := f.volume("local-"+f.ns+"-"+id, 1)
	pv.Spec.StorageClassName, pv.Spec.NodeAffinity = class, hostAffinity(node.Labels[v1.LabelHostname])
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + id}}
	if _, err := f.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("create volume %s: %w", pv.Name, err)
	}
	created := time.Now()

	last := pod
	err := f.pollPod(ctx, podName, requeueDeadline, func(p *v1.Pod) bool { last = p; return p.Spec.NodeName != "" })
	if err != nil {
		return 0, fmt.Errorf("pod %s still unscheduled %v after its class and volume were created (conditions %+v): %w",
			podName, requeueDeadline, last.Status.Conditions, err)
	}
	if last.Spec.NodeName != node.Name {
		return 0, fmt.Errorf("pod %s on node %s, want %s, where its only volume is", podName, last.Spec.NodeName, node.Name)
	}
	took := time.Since(created)
	// The scheduler binds the pod once the claim names the volume; the
	// volume controller writes the claim's Bound status right after.
	got := &v1.PersistentVolumeClaim{}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = c
		return c.Status.Phase == v1.ClaimBound, nil
	})
	if err != nil || got.Spec.VolumeName != pv.Name {
		return 0, fmt.Errorf("claim %s of the scheduled pod: %s to %q, want Bound to %s: %v", claim.Name, got.Status.Phase, got.Spec.VolumeName, pv.Name, err)
	}
	return took, nil
}

// pollPod polls the pod until done holds or timeout passes.
func (f *fixture) pollPod(ctx context.Context, name string, timeout time.Duration, done func(*v1.Pod) bool) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := f.cs.CoreV1().Pods(f.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return done(p), nil
	})
}

// unschedulable reports whether the scheduler marked the pod Unschedulable.
func unschedulable(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// load keeps the scheduler and the machine busy without events that
// requeue pods the volume plugin rejected: pods without claims are
// created and deleted in a loop (the scheduler places them), and busy
// goroutines take the CPU.
type load struct {
	g      errgroup.Group
	placed atomic.Int64
}

func startLoad(ctx context.Context, t *testing.T, f *fixture) *load {
	l := &load{}
	for range 2 * runtime.NumCPU() {
		l.g.Go(func() error {
			for n := 0; ctx.Err() == nil; n++ {
				if n%(1<<16) == 0 {
					runtime.Gosched()
				}
			}
			return nil
		})
	}
	for w := range 2 {
		l.g.Go(func() error {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("busy-%d-%d", w, i)
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
					Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}, TerminationGracePeriodSeconds: ptr.To[int64](0)}}
				if _, err := f.cs.CoreV1().Pods(f.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					return ignoreCancel(ctx, err)
				}
				err := f.pollPod(ctx, name, time.Minute, func(p *v1.Pod) bool { return p.Spec.NodeName != "" })
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("claimless pod %s not scheduled: %v", name, err)
					}
					return ignoreCancel(ctx, err)
				}
				l.placed.Add(1)
				if err := f.cs.CoreV1().Pods(f.ns).Delete(ctx, name, deleteNow()); err != nil && !apierrors.IsNotFound(err) {
					return ignoreCancel(ctx, err)
				}
			}
			return nil
		})
	}
	return l
}

// Wait waits for the load's goroutines, which end with the context.
func (l *load) Wait() { _ = l.g.Wait() }

func ignoreCancel(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
