//go:build e2e && linux

package suite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolswatch "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/volbind/volbind/e2e/provisioner"
)

const (
	// testDriver is the CSI driver name of the test provisioner.
	testDriver = "csi.e2e.volbind.io"
	// testLabel marks the volumes of a case with the case's namespace.
	testLabel = "e2e.volbind.io/namespace"
	// libFinalizer is the finalizer of the external-provisioner library.
	libFinalizer = "external-provisioner.volume.kubernetes.io/finalizer"
)

// env is one case on one binder's cluster: a namespace, a test
// provisioner (the library's controller, seeing only the namespace's
// claims and the volumes labelled with it) and the history of every
// version of the case's claims and volumes, as watched from the API server.
type env struct {
	t      *testing.T
	binder *binderProc
	cs     kubernetes.Interface
	ns     string
	prov   *provisioner.Provisioner
	hist   *history
}

// caseSetup is what a case needs built before any case runs: its
// namespace's name, its test provisioner and the library's controller for
// it (see provisioner.NewController: building one writes client-go's
// global scheme, which no client may read meanwhile).
type caseSetup struct {
	c      *cluster
	ns     string
	prov   *provisioner.Provisioner
	ctrl   *provisioner.Controller
	ctx    context.Context
	cancel context.CancelFunc
}

// setUpCases builds the setup of every case for every binder, in this
// order, before any of them runs. top's cleanup ends the setups no case
// used (a case that did not run after a failure).
func setUpCases(top *testing.T, names []string) map[string][]*caseSetup {
	top.Helper()
	out := map[string][]*caseSetup{}
	for _, name := range names {
		for _, tc := range cases {
			driver := tc.driver
			if driver == "" {
				driver = testDriver
			}
			out[name] = append(out[name], setUpCase(top, clusters[name], name+"-"+tc.name, driver, tc.migratedFrom))
		}
	}
	return out
}

// setUpCase builds a case of cluster c: a namespace name (prefix-random:
// short enough for the name of the case's node, ns-node, to be a hostname
// label value too), the test provisioner of driver (with migratedFrom, see
// provisioner.Config) and the library's controller for it, seeing only the
// namespace's claims and the volumes labelled with it. Its log goes to top,
// with the namespace.
func setUpCase(top *testing.T, c *cluster, prefix, driver, migratedFrom string) *caseSetup {
	top.Helper()
	ns := strings.ToLower(prefix + "-" + utilrand.String(5))
	pcfg := rest.CopyConfig(c.cfg)
	pcfg.UserAgent = "volbind-e2e-provisioner"
	pcs, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		top.Fatalf("clientset: %v", err)
	}
	prov, err := provisioner.New(provisioner.Config{Driver: driver, MigratedFrom: migratedFrom,
		Nodes: pcs.CoreV1().Nodes(), Labels: map[string]string{testLabel: ns}})
	if err != nil {
		top.Fatal(err)
	}
	logger := ktesting.NewLogger(top, ktesting.NewConfig(ktesting.Verbosity(2))).WithValues("namespace", ns)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	top.Cleanup(cancel)
	// A failed Provision is retried after 200 ms, then 400 ms: the
	// library's 15 s would make the case wait for minutes.
	ctrl, err := provisioner.NewController(ctx, pcs, prov, provisioner.ControllerConfig{Namespace: ns,
		VolumeSelector: testLabel + "=" + ns, RetryBase: 200 * time.Millisecond, RetryMax: 5 * time.Second})
	if err != nil {
		top.Fatalf("provisioner: %v", err)
	}
	return &caseSetup{c: c, ns: ns, prov: prov, ctrl: ctrl, ctx: ctx, cancel: cancel}
}

// newEnv starts the case of s with binder b: its namespace, watches of its
// claims and volumes, and its provisioner's controller. The cleanup stops
// the controller and deletes the case's claims and volumes.
func newEnv(t *testing.T, b *binderProc, s *caseSetup) *env {
	t.Helper()
	cfg := rest.CopyConfig(s.c.cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.UserAgent = "volbind-e2e"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", s.ns, err)
	}
	e := &env{t: t, binder: b, cs: cs, ns: s.ns, prov: s.prov, hist: newHistory()}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		s.cancel()
		wg.Wait()
		e.cleanup()
	})
	e.watch(s.ctx, &wg)
	wg.Go(func() { s.ctrl.Run(s.ctx) })
	return e
}

// watch records every version of the namespace's claims and of the
// volumes labelled with it, from now until ctx is done.
func (e *env) watch(ctx context.Context, wg *sync.WaitGroup) {
	e.t.Helper()
	claims := e.cs.CoreV1().PersistentVolumeClaims(e.ns)
	volumes := e.cs.CoreV1().PersistentVolumes()
	sel := metav1.ListOptions{LabelSelector: testLabel + "=" + e.ns}
	claimList, err := claims.List(e.t.Context(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("list claims: %v", err)
	}
	volumeList, err := volumes.List(e.t.Context(), sel)
	if err != nil {
		e.t.Fatalf("list volumes: %v", err)
	}
	for _, w := range []struct {
		rv string
		f  func(context.Context, metav1.ListOptions) (watch.Interface, error)
	}{
		{claimList.ResourceVersion, claims.Watch},
		{volumeList.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel.LabelSelector
			return volumes.Watch(ctx, o)
		}},
	} {
		rw, err := toolswatch.NewRetryWatcherWithContext(ctx, w.rv, &watchFunc{w.f})
		if err != nil {
			e.t.Fatalf("watch: %v", err)
		}
		wg.Go(func() {
			defer rw.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-rw.ResultChan():
					if !ok {
						return
					}
					e.hist.add(ev)
				}
			}
		})
	}
}

// watchFunc adapts a watch function to toolswatch's Watcher.
type watchFunc struct {
	f func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

func (w *watchFunc) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return w.f(ctx, o)
}

// cleanup deletes the case's claims and volumes (their finalizers first,
// as nothing is left to remove them).
func (e *env) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		e.t.Errorf("delete the claims of %s: %v", e.ns, err)
	}
	list, err := e.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + e.ns})
	if err != nil {
		e.t.Errorf("list volumes: %v", err)
		return
	}
	for i := range list.Items {
		pv := &list.Items[i]
		if err := e.cs.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			e.t.Errorf("delete volume %s: %v", pv.Name, err)
		}
		// The binder may write the volume meanwhile: retry on Conflict.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pv, err := e.cs.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
			if err != nil || len(pv.Finalizers) == 0 {
				return err
			}
			pv.Finalizers = nil
			_, err = e.cs.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
			return err
		})
		if err != nil && !apierrors.IsNotFound(err) {
			e.t.Errorf("remove the finalizers of %s: %v", pv.Name, err)
		}
	}
}

// key is the namespace/name key of claim name.
func (e *env) key(name string) string { return e.ns + "/" + name }

// createClass creates a StorageClass named after the namespace (plus
// suffix) of the provisioner, binding mode and reclaim policy, and returns
// its name; the cleanup deletes it.
//
// The class is created while the binder is stopped. A running binder learns
// of a class and of a claim created right after it from two watches, in
// either order; when the claim comes first, volbind and
// kube-controller-manager alike find its class missing and report it
// (Warning ProvisioningFailed "storageclass.storage.k8s.io ... not found"),
// so the compared events would depend on the race. Both binders list
// every informer before their first sync, so a class created while the
// binder is down is known before any claim of it.
func (e *env) createClass(suffix, provisionerName string, mode storagev1.VolumeBindingMode, policy v1.PersistentVolumeReclaimPolicy) string {
	e.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: e.ns + suffix}, Provisioner: provisionerName,
		VolumeBindingMode: &mode, ReclaimPolicy: &policy}
	e.binder.restart(e.t, func() {
		if _, err := e.cs.StorageV1().StorageClasses().Create(e.t.Context(), sc, metav1.CreateOptions{}); err != nil {
			e.t.Fatalf("create StorageClass: %v", err)
		}
	})
	e.t.Cleanup(func() {
		if err := e.cs.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{}); err != nil {
			e.t.Errorf("delete StorageClass %s: %v", sc.Name, err)
		}
	})
	return sc.Name
}

// createClaim creates claim name of class asking for 1 GiB, ReadWriteOnce.
func (e *env) createClaim(name, class string) *v1.PersistentVolumeClaim {
	e.t.Helper()
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	got, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Create(e.t.Context(), pvc, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create claim %s: %v", name, err)
	}
	return got
}

// deleteClaim deletes claim name and waits until it is gone.
func (e *env) deleteClaim(name string) {
	e.t.Helper()
	if err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Delete(e.t.Context(), name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete claim %s: %v", name, err)
	}
	e.eventually(time.Minute, "claim "+name+" to be gone", func(ctx context.Context) (bool, error) {
		_, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// claim reads claim name back from the API server.
func (e *env) claim(name string) *v1.PersistentVolumeClaim {
	e.t.Helper()
	pvc, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get claim %s: %v", name, err)
	}
	return pvc
}

// volume reads volume name back from the API server.
func (e *env) volume(name string) *v1.PersistentVolume {
	e.t.Helper()
	pv, err := e.cs.CoreV1().PersistentVolumes().Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get volume %s: %v", name, err)
	}
	return pv
}

// eventually polls cond every 100 ms until it is true, failing the case
// with what (and the binder's log) after timeout.
func (e *env) eventually(timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	e.t.Helper()
	if err := wait.PollUntilContextTimeout(e.t.Context(), 100*time.Millisecond, timeout, true, cond); err != nil {
		e.t.Fatalf("waiting %v for %s: %v\nclaims and volumes: %s\nend of the %s log:\n%s", timeout, what, err, e.describe(), e.binder.name, e.binder.logTail())
	}
}

// waitClaimPhase waits until claim name has the phase.
func (e *env) waitClaimPhase(name string, phase v1.PersistentVolumeClaimPhase) *v1.PersistentVolumeClaim {
	e.t.Helper()
	var pvc *v1.PersistentVolumeClaim
	e.eventually(time.Minute, fmt.Sprintf("claim %s to be %s", name, phase), func(ctx context.Context) (bool, error) {
		var err error
		pvc, err = e.cs.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && pvc.Status.Phase == phase, nil
	})
	return pvc
}

// waitVolumePhase waits until volume name has the phase.
func (e *env) waitVolumePhase(name string, phase v1.PersistentVolumePhase) *v1.PersistentVolume {
	e.t.Helper()
	var pv *v1.PersistentVolume
	e.eventually(time.Minute, fmt.Sprintf("volume %s to be %s", name, phase), func(ctx context.Context) (bool, error) {
		var err error
		pv, err = e.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && pv.Status.Phase == phase, nil
	})
	return pv
}

// waitGone waits until volume name no longer exists.
func (e *env) waitGone(name string) {
	e.t.Helper()
	e.eventually(time.Minute, "volume "+name+" to be gone", func(ctx context.Context) (bool, error) {
		_, err := e.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// events returns the events of namespace about object name with reason.
func (e *env) events(ctx context.Context, namespace, name, reason string) ([]v1.Event, error) {
	list, err := e.cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []v1.Event
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == name && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out, nil
}

// waitEvent waits for an event of the namespace about object name with the
// type and reason.
func (e *env) waitEvent(namespace, name, eventType, reason string) {
	e.t.Helper()
	e.eventually(time.Minute, fmt.Sprintf("a %s %s event on %s", eventType, reason, name), func(ctx context.Context) (bool, error) {
		evs, err := e.events(ctx, namespace, name, reason)
		return slices.ContainsFunc(evs, func(ev v1.Event) bool { return ev.Type == eventType }), err
	})
}

// waitGate waits until the held call of g has started.
func (e *env) waitGate(g *provisioner.Gate, what string) {
	e.t.Helper()
	select {
	case <-g.Reached():
	case <-time.After(time.Minute):
		e.t.Fatalf("waiting a minute for %s\nclaims and volumes: %s\nend of the %s log:\n%s", what, e.describe(), e.binder.name, e.binder.logTail())
	case <-e.t.Context().Done():
		e.t.Fatal("test ended")
	}
}

// describe summarizes the case's claims and volumes for failure messages.
func (e *env) describe() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	if claims, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, c := range claims.Items {
			fmt.Fprintf(&b, "claim %s: %s volume %q annotations %v; ", c.Name, c.Status.Phase, c.Spec.VolumeName, c.Annotations)
		}
	}
	if vols, err := e.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + e.ns}); err == nil {
		for _, pv := range vols.Items {
			fmt.Fprintf(&b, "volume %s: %s claimRef %v finalizers %v annotations %v; ", pv.Name, pv.Status.Phase, pv.Spec.ClaimRef, pv.Finalizers, pv.Annotations)
		}
	}
	return b.String()
}
