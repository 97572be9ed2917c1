// Command benchload is the workload of hack/bench-real.sh: while a binder
// (kube-controller-manager's PV binder or "volbind controller") runs against
// a real API server, it creates N PersistentVolume/PersistentVolumeClaim
// pairs as fast as the server accepts them, waits until every volume and
// claim is Bound, and prints one Markdown table row: the time from the first
// create until all are Bound, bindings per second, the binder's API writes
// per pair and the 409 Conflicts (both from the API server's
// apiserver_request_total metric, read before and after), and the binder's
// peak RSS (VmHWM of -pid).
//
//	benchload -kubeconfig DIR/kubeconfig -n 1000 -pid PID -name kcm -limits 20/30
//	benchload -kubeconfig DIR/kubeconfig -n 5000 -create-only    the API server's create rate, no binder
//	benchload -kubeconfig DIR/kubeconfig -n 1000 -provisioner csi.e2e.volbind.io -name volbind
//	    claims only, of an Immediate StorageClass of that provisioner, whose
//	    external provisioner makes the volumes (hack/bench-provisioner.sh)
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// options are benchload's flags.
type options struct {
	kubeconfig string
	n          int
	workers    int
	pid        int
	name       string
	limits     string
	namespace  string
	timeout    time.Duration
	header     bool
	createOnly bool
	// provisioner, when set, makes the workload claims only, of the
	// Immediate StorageClass "bench-provisioned" of this provisioner.
	provisioner string
}

func main() {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (admin)")
	flag.IntVar(&o.n, "n", 1000, "number of volume/claim pairs")
	flag.IntVar(&o.workers, "workers", 32, "concurrent creates")
	flag.IntVar(&o.pid, "pid", 0, "PID of the binder process, for its peak RSS (0: not reported)")
	flag.StringVar(&o.name, "name", "binder", "binder name for the table")
	flag.StringVar(&o.limits, "limits", "", "the binder's client limits (qps/burst) for the table")
	flag.StringVar(&o.namespace, "namespace", "bench", "namespace of the claims")
	flag.DurationVar(&o.timeout, "timeout", 40*time.Minute, "give up after this long")
	flag.BoolVar(&o.header, "header", false, "print only the table header and exit")
	flag.BoolVar(&o.createOnly, "create-only", false, "only create the pairs (no binder runs) and print how fast the API server took them")
	flag.StringVar(&o.provisioner, "provisioner", "", "create claims only, of an Immediate StorageClass of this (external) provisioner, which makes the volumes")
	flag.Parse()
	if o.header {
		fmt.Println(header)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	err := run(ctx, o, os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchload:", err)
		os.Exit(1)
	}
}

const header = "| binder | client qps/burst | pairs | time to all Bound | bindings/s | binder writes/pair | 409 conflicts | peak RSS |\n" +
	"| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"

func run(ctx context.Context, o options, out io.Writer) error {
	if o.n < 1 || o.workers < 1 {
		return fmt.Errorf("-n and -workers must be positive, got %d and %d", o.n, o.workers)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 5000, 10000
	cfg.UserAgent = "volbind-benchload"
	// Protobuf, as both binders use by default: the workload's own
	// requests and watches cost the API server as little as they can.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace: %w", err)
	}

	if o.provisioner != "" {
		if err := createProvisionedClass(ctx, cs, o.provisioner); err != nil {
			return err
		}
	}
	w := newWaiter(o.n)
	f := informers.NewSharedInformerFactory(cs, 0)
	if _, err := f.Core().V1().PersistentVolumes().Informer().AddEventHandler(w.handler(true)); err != nil {
		return err
	}
	if _, err := f.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(w.handler(false)); err != nil {
		return err
	}
	stop := make(chan struct{})
	defer func() { close(stop); f.Shutdown() }()
	f.Start(stop)
	f.WaitForCacheSync(stop)

	before, err := scrape(ctx, cs)
	if err != nil {
		return err
	}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.workers)
	for i := range o.n {
		g.Go(func() error {
			if o.provisioner != "" {
				return createClaim(gctx, cs, o.namespace, provisionedClass, i)
			}
			return createPair(gctx, cs, o.namespace, i)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	created := time.Since(start)
	if o.createOnly {
		_, err := fmt.Fprintf(out, "API server alone: %d creates in %.1f s (%.0f requests/s)\n", 2*o.n, created.Seconds(), float64(2*o.n)/created.Seconds())
		return err
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		pv, pvc := w.counts()
		return fmt.Errorf("timed out: %d of %d volumes and %d claims Bound: %w", pv, o.n, pvc, ctx.Err())
	}
	elapsed := w.finished().Sub(start)
	after, err := settledScrape(ctx, cs)
	if err != nil {
		return err
	}
	d := after.minus(before)
	rss := "n/a"
	if o.pid > 0 {
		if rss, err = peakRSS(o.pid); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "benchload: %s %s n=%d: created in %.1fs, all Bound after %.1fs; creates %d, binder writes %d (pv %d, pvc %d), events %d, 409s %d\n",
		o.name, o.limits, o.n, created.Seconds(), elapsed.Seconds(), d.creates, d.writes, d.pvWrites, d.pvcWrites, d.events, d.conflicts)
	_, err = fmt.Fprintf(out, "| %s | %s | %d | %.1f s | %.0f | %.2f | %d | %s |\n", o.name, o.limits, o.n, elapsed.Seconds(),
		float64(o.n)/elapsed.Seconds(), float64(d.writes)/float64(o.n), d.conflicts, rss)
	return err
}

// createPair creates volume i and claim i: 1Gi, ReadWriteOnce, class
// "bench" (no StorageClass object: Kubernetes binds such claims to volumes
// of the same class name without provisioning).
func createPair(ctx context.Context, cs kubernetes.Interface, ns string, i int) error {
	size := resource.MustParse("1Gi")
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-pv-%05d", i)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              "bench",
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: fmt.Sprintf("/tmp/bench/%d", i)}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create volume %s: %w", pv.Name, err)
	}
	return createClaim(ctx, cs, ns, "bench", i)
}

// provisionedClass is the StorageClass of the claims of -provisioner.
const provisionedClass = "bench-provisioned"

// createProvisionedClass creates provisionedClass: Immediate, Delete, of
// the provisioner.
func createProvisionedClass(ctx context.Context, cs kubernetes.Interface, provisioner string) error {
	mode := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: provisionedClass}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create StorageClass %s: %w", provisionedClass, err)
	}
	return nil
}

// createClaim creates claim i of class: 1Gi, ReadWriteOnce.
func createClaim(ctx context.Context, cs kubernetes.Interface, ns, class string, i int) error {
	size := resource.MustParse("1Gi")
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("bench-pvc-%05d", i)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create claim %s/%s: %w", ns, pvc.Name, err)
	}
	return nil
}

// waiter counts Bound volumes and claims and closes done when n of each are.
type waiter struct {
	n    int
	done chan struct{}

	// mu guards the fields below.
	mu       sync.Mutex
	pvBound  map[string]bool
	pvcBound map[string]bool
	end      time.Time
}

func newWaiter(n int) *waiter {
	return &waiter{n: n, done: make(chan struct{}), pvBound: map[string]bool{}, pvcBound: map[string]bool{}}
}

func (w *waiter) handler(volumes bool) toolscache.ResourceEventHandler {
	observe := func(obj any) {
		var key string
		var bound bool
		switch o := obj.(type) {
		case *v1.PersistentVolume:
			key, bound = o.Name, o.Status.Phase == v1.VolumeBound
		case *v1.PersistentVolumeClaim:
			key, bound = o.Namespace+"/"+o.Name, o.Status.Phase == v1.ClaimBound
		default:
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		m := w.pvcBound
		if volumes {
			m = w.pvBound
		}
		if bound {
			m[key] = true
		} else {
			delete(m, key)
		}
		if w.end.IsZero() && len(w.pvBound) >= w.n && len(w.pvcBound) >= w.n {
			w.end = time.Now()
			close(w.done)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(obj) },
		UpdateFunc: func(_, obj any) { observe(obj) },
	}
}

func (w *waiter) counts() (int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pvBound), len(w.pvcBound)
}

func (w *waiter) finished() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.end
}

// requests are sums of apiserver_request_total samples.
type requests struct {
	creates, writes, pvWrites, pvcWrites, events, conflicts int64
}

func (r requests) minus(s requests) requests {
	return requests{r.creates - s.creates, r.writes - s.writes, r.pvWrites - s.pvWrites, r.pvcWrites - s.pvcWrites, r.events - s.events, r.conflicts - s.conflicts}
}

// settledScrape scrapes until two scrapes 200 ms apart agree: the API
// server counts a request once its answer is written, so the last writes
// of a binding may show in the objects before they show in the metric.
func settledScrape(ctx context.Context, cs kubernetes.Interface) (requests, error) {
	last, err := scrape(ctx, cs)
	for i := 0; err == nil && i < 25; i++ {
		select {
		case <-ctx.Done():
			return requests{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		var next requests
		if next, err = scrape(ctx, cs); err == nil && next == last {
			return next, nil
		}
		last = next
	}
	return last, err
}

// scrape reads the API server's /metrics and sums apiserver_request_total:
// creates (POST) of volumes and claims are the workload's; updates and
// patches (PUT, PATCH, of the objects and their status) are the binder's;
// events (POST, PATCH) are counted apart; 409s over every resource.
func scrape(ctx context.Context, cs kubernetes.Interface) (requests, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return requests{}, fmt.Errorf("scrape /metrics: %w", err)
	}
	return sumRequests(string(raw))
}

// sumRequests sums the apiserver_request_total samples of a /metrics text.
func sumRequests(metrics string) (requests, error) {
	var r requests
	sc := bufio.NewScanner(strings.NewReader(metrics))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		labels, value, err := parseSample(line)
		if err != nil {
			return requests{}, err
		}
		if labels["code"] == "409" {
			r.conflicts += value
		}
		verb, res := labels["verb"], labels["resource"]
		write := verb == "PUT" || verb == "PATCH"
		switch {
		case (res == "persistentvolumes" || res == "persistentvolumeclaims") && verb == "POST":
			r.creates += value
		case res == "persistentvolumes" && write:
			r.pvWrites += value
			r.writes += value
		case res == "persistentvolumeclaims" && write:
			r.pvcWrites += value
			r.writes += value
		case res == "events" && (verb == "POST" || write):
			r.events += value
		}
	}
	return r, sc.Err()
}

// parseSample parses `name{k="v",...} value` (label values without escaped
// quotes, as apiserver_request_total's are).
func parseSample(line string) (map[string]string, int64, error) {
	open, end := strings.IndexByte(line, '{'), strings.LastIndexByte(line, '}')
	if open < 0 || end < open {
		return nil, 0, fmt.Errorf("malformed sample %q", line)
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(line[open+1:end], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		labels[k] = strings.Trim(v, `"`)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
	if err != nil {
		return nil, 0, fmt.Errorf("malformed value in %q: %w", line, err)
	}
	return labels, int64(f), nil
}

// peakRSS returns VmHWM of process pid, e.g. "123 MiB".
func peakRSS(pid int) (string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", fmt.Errorf("peak RSS: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return "", fmt.Errorf("peak RSS: %q: %w", line, err)
			}
			return fmt.Sprintf("%d MiB", kb/1024), nil
		}
	}
	return "", errors.New("peak RSS: no VmHWM in /proc/PID/status")
}
