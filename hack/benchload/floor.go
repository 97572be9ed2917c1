package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// The floor binder (-floor) is the least a binder can do for this
// workload: it knows the pairs in advance (volume i binds claim i), learns
// from watches when both exist, and sends exactly the four writes of a
// binding, in Kubernetes' order, each built from the answer to the one
// before: the volume's claimRef and bound-by-controller annotation, its
// Bound phase, the claim's volumeName with the bind-completed and
// bound-by-controller annotations, its Bound status with the volume's
// access modes and capacity. It searches nothing, caches nothing but the
// informers' objects, retries nothing and records no events. With the same
// client limits, content type and number of workers as the binder it is
// compared with, its bindings/s are what the API server allows that
// binder at best.

// Annotations of a binding (k8s.io/component-helpers/storage/volume).
const (
	annBoundByController = "pv.kubernetes.io/bound-by-controller"
	annBindCompleted     = "pv.kubernetes.io/bind-completed"
)

// volumeName and claimName name pair i, as createPair creates it.
func volumeName(i int) string { return fmt.Sprintf("bench-pv-%05d", i) }
func claimName(i int) string  { return fmt.Sprintf("bench-pvc-%05d", i) }

// pairIndex returns i for the name of volume or claim i (prefix
// "bench-pv-" or "bench-pvc-"), or false.
func pairIndex(name, prefix string) (int, bool) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil && i >= 0
}

// floorOptions are the floor binder's flags.
type floorOptions struct {
	kubeconfig string
	n          int
	qps        float32
	burst      int
	workers    int
	namespace  string
}

// parseLimits parses "qps/burst".
func parseLimits(s string) (float32, int, error) {
	q, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("-limits %q: want qps/burst", s)
	}
	qps, err := strconv.ParseFloat(q, 32)
	if err != nil || qps <= 0 {
		return 0, 0, fmt.Errorf("-limits %q: bad qps", s)
	}
	burst, err := strconv.Atoi(b)
	if err != nil || burst <= 0 {
		return 0, 0, fmt.Errorf("-limits %q: bad burst", s)
	}
	return float32(qps), burst, nil
}

// floorClient returns the client of the floor binder: as volbind
// controller and kube-controller-manager talk to the API server, in
// protobuf, with the binder's client limits.
func floorClient(o floorOptions) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = o.qps, o.burst
	cfg.UserAgent = "volbind-floor-binder"
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return kubernetes.NewForConfig(cfg)
}

// floorBind binds the o.n pairs through cs as they appear, with o.workers
// workers, and returns once all are written (or on the first error, or
// when ctx is done). It logs to log when it is done.
func floorBind(ctx context.Context, cs kubernetes.Interface, o floorOptions, log io.Writer) error {
	p := newPairs(o.n, o.namespace)
	f := informers.NewSharedInformerFactory(cs, 0)
	pvs, pvcs := f.Core().V1().PersistentVolumes(), f.Core().V1().PersistentVolumeClaims()
	if _, err := pvs.Informer().AddEventHandler(p.handler(true)); err != nil {
		return err
	}
	if _, err := pvcs.Informer().AddEventHandler(p.handler(false)); err != nil {
		return err
	}
	stop := make(chan struct{})
	defer func() { close(stop); f.Shutdown() }()
	f.Start(stop)

	var wg sync.WaitGroup
	errs := make(chan error, o.workers)
	var start time.Time
	var startOnce sync.Once
	for range o.workers {
		wg.Go(func() {
			for i := range p.ready {
				startOnce.Do(func() { start = time.Now() })
				pv, err := pvs.Lister().Get(volumeName(i))
				if err == nil {
					var pvc *v1.PersistentVolumeClaim
					if pvc, err = pvcs.Lister().PersistentVolumeClaims(o.namespace).Get(claimName(i)); err == nil {
						err = bindPair(ctx, cs, pv, pvc)
					}
				}
				if err != nil {
					errs <- fmt.Errorf("pair %d: %w", i, err)
					return
				}
				p.done()
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case err := <-errs:
		p.abort()
		<-finished
		return err
	case <-finished:
	case <-ctx.Done():
		p.abort()
		<-finished
		return ctx.Err()
	}
	fmt.Fprintf(log, "benchload: floor binder: %d pairs written (4 writes each) %.1f s after the first pair appeared\n", o.n, time.Since(start).Seconds())
	return nil
}

// bindPair sends the four writes of binding pv and pvc, each built from the
// answer to the one before.
func bindPair(ctx context.Context, cs kubernetes.Interface, pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) error {
	volumes, claims := cs.CoreV1().PersistentVolumes(), cs.CoreV1().PersistentVolumeClaims(pvc.Namespace)
	name := pv.Name
	pv = pv.DeepCopy()
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
		Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion}
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, annBoundByController, "yes")
	pv, err := volumes.Update(ctx, pv, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("volume %s: %w", name, err)
	}
	pv.Status.Phase = v1.VolumeBound
	if pv, err = volumes.UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("volume %s status: %w", name, err)
	}
	claim := pvc.Namespace + "/" + pvc.Name
	pvc = pvc.DeepCopy()
	pvc.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, annBindCompleted, "yes")
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, annBoundByController, "yes")
	if pvc, err = claims.Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("claim %s: %w", claim, err)
	}
	pvc.Status.Phase = v1.ClaimBound
	pvc.Status.AccessModes = pv.Spec.AccessModes
	pvc.Status.Capacity = pv.Spec.Capacity
	if _, err = claims.UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("claim %s status: %w", claim, err)
	}
	return nil
}

// pairs tracks which volumes and claims of the n pairs exist and hands each
// pair whose volume and claim both exist to the workers, once.
type pairs struct {
	n         int
	namespace string
	// ready receives the index of each pair whose two objects exist; it
	// is closed when every pair is written (or on abort).
	ready chan int

	// mu guards the fields below.
	mu        sync.Mutex
	seen      []uint8 // bit 1: volume seen, bit 2: claim seen, bit 4: queued
	remaining int     // pairs not written yet
	closed    bool
}

func newPairs(n int, namespace string) *pairs {
	return &pairs{n: n, namespace: namespace, ready: make(chan int, n), seen: make([]uint8, n), remaining: n}
}

// handler observes the volumes (volumes=true) or the claims of the pairs.
func (p *pairs) handler(volumes bool) toolscache.ResourceEventHandler {
	observe := func(obj any) {
		var i int
		var ok bool
		var bit uint8
		switch o := obj.(type) {
		case *v1.PersistentVolume:
			i, ok = pairIndex(o.Name, "bench-pv-")
			bit = 1
		case *v1.PersistentVolumeClaim:
			i, ok = pairIndex(o.Name, "bench-pvc-")
			ok = ok && o.Namespace == p.namespace
			bit = 2
		}
		if !ok || i >= p.n {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.seen[i] |= bit
		if p.seen[i] == 3 && !p.closed {
			p.seen[i] |= 4
			p.ready <- i
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(obj) },
		UpdateFunc: func(_, obj any) { observe(obj) },
	}
}

// done counts one written pair and, after the last, closes ready so that
// the workers stop. It closes ready under mu, as abort does, so that the
// two never both close it.
func (p *pairs) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.remaining--
	if p.remaining == 0 && !p.closed {
		p.closed = true
		close(p.ready)
	}
}

// abort closes ready so that the workers stop.
func (p *pairs) abort() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.ready)
	}
}
