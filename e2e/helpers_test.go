//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/volbind/volbind/binder"
)

// testLabel marks the volumes of a test with the test's namespace.
const testLabel = "e2e.volbind.io/namespace"

// newClient returns a clientset of the test cluster with the given limits.
func newClient(t *testing.T, qps float32, burst int) kubernetes.Interface {
	t.Helper()
	return newClientAs(t, qps, burst, "volbind-e2e")
}

// newClientAs is newClient with the given user agent, which the API server
// records as the field manager of the client's writes.
func newClientAs(t *testing.T, qps float32, burst int, userAgent string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(testCluster.cfg)
	cfg.QPS, cfg.Burst = qps, burst
	cfg.UserAgent = userAgent
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}

// fixture is one test's namespace, StorageClass name and client. Its
// cleanup deletes the test's claims and volumes (the namespace stays:
// without a namespace controller it would never finish terminating).
type fixture struct {
	t     *testing.T
	cs    kubernetes.Interface
	ns    string
	class string
}

// newFixture creates a namespace for t. Objects are created and read
// through a client with high limits so that the workload never waits on
// the client side.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	cs := newClient(t, 2000, 4000)
	ns := strings.ToLower(fmt.Sprintf("e2e-%s-%s", strings.ReplaceAll(t.Name(), "/", "-"), utilrand.String(5)))
	if len(ns) > 63 {
		ns = ns[len(ns)-63:]
		ns = strings.TrimLeft(ns, "-")
	}
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	f := &fixture{t: t, cs: cs, ns: ns, class: ns}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cs.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Errorf("delete the claims of %s: %v", ns, err)
		}
		if err := cs.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: testLabel + "=" + ns}); err != nil {
			t.Errorf("delete the volumes of %s: %v", ns, err)
		}
	})
	return f
}

// volume returns a volume of the fixture's class with the given size in
// GiB, Retain policy, ReadWriteOnce, labelled for cleanup.
func (f *fixture) volume(name string, gib int64) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: f.ns + "-" + name, Labels: map[string]string{testLabel: f.ns}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(gib<<30, resource.BinarySI)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              f.class,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + f.ns + "/" + name}},
		},
	}
}

// claim returns a claim of the fixture's class asking for gib GiB,
// ReadWriteOnce.
func (f *fixture) claim(name string, gib int64) *v1.PersistentVolumeClaim {
	class := f.class
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(gib<<30, resource.BinarySI)}},
		},
	}
}

// create creates the objects (volumes and claims), 32 at a time, and
// fails the test on the first error.
func (f *fixture) create(objs ...runtime.Object) {
	f.t.Helper()
	g, ctx := errgroup.WithContext(f.t.Context())
	g.SetLimit(32)
	for _, obj := range objs {
		g.Go(func() error {
			var err error
			switch o := obj.(type) {
			case *v1.PersistentVolume:
				_, err = f.cs.CoreV1().PersistentVolumes().Create(ctx, o, metav1.CreateOptions{})
			case *v1.PersistentVolumeClaim:
				_, err = f.cs.CoreV1().PersistentVolumeClaims(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			default:
				err = fmt.Errorf("cannot create a %T", obj)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		f.t.Fatalf("create: %v", err)
	}
}

// createAvailable creates the volumes and waits until the Binder has made
// each Available, so that a claim created afterwards finds them at its
// first sync (a claim that finds no volume waits for the next resync, as
// in Kubernetes).
func (f *fixture) createAvailable(pvs ...*v1.PersistentVolume) {
	f.t.Helper()
	objs := make([]runtime.Object, len(pvs))
	for i, pv := range pvs {
		objs[i] = pv
	}
	f.create(objs...)
	for _, pv := range pvs {
		f.eventually(time.Minute, "volume "+pv.Name+" to be Available", func(context.Context) (bool, error) {
			return f.getVolume(pv.Name).Status.Phase == v1.VolumeAvailable, nil
		})
	}
}

// settle waits until b has handled every volume event the API server sent
// before the call, and then until b is quiescent. It creates a volume of a
// class no claim of the test asks for and waits until b has made it
// Available: the volume informer delivers events in order, so the events
// before it were handled too.
func (f *fixture) settle(b *binder.Binder) {
	f.t.Helper()
	barrier := f.volume("barrier-"+utilrand.String(5), 1)
	barrier.Spec.StorageClassName = f.class + "-barrier"
	f.createAvailable(barrier)
	ctx, cancel := context.WithTimeout(f.t.Context(), time.Minute)
	defer cancel()
	if err := b.WaitForQuiescence(ctx); err != nil {
		f.t.Fatalf("WaitForQuiescence: %v", err)
	}
}

// getVolume reads a volume back from the API server.
func (f *fixture) getVolume(name string) *v1.PersistentVolume {
	f.t.Helper()
	pv, err := f.cs.CoreV1().PersistentVolumes().Get(f.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("get volume %s: %v", name, err)
	}
	return pv
}

// getClaim reads a claim of the fixture's namespace back from the API
// server.
func (f *fixture) getClaim(name string) *v1.PersistentVolumeClaim {
	f.t.Helper()
	pvc, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Get(f.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("get claim %s/%s: %v", f.ns, name, err)
	}
	return pvc
}

// eventually polls cond every 100 ms until it is true, failing the test
// with what after timeout.
func (f *fixture) eventually(timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	f.t.Helper()
	if err := wait.PollUntilContextTimeout(f.t.Context(), 100*time.Millisecond, timeout, true, cond); err != nil {
		f.t.Fatalf("waiting %v for %s: %v", timeout, what, err)
	}
}

// boundClaims counts the Bound claims of the namespace.
func (f *fixture) boundClaims(ctx context.Context) (int, error) {
	list, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		if list.Items[i].Status.Phase == v1.ClaimBound {
			n++
		}
	}
	return n, nil
}

// waitBound waits until n claims of the namespace are Bound.
func (f *fixture) waitBound(n int, timeout time.Duration) {
	f.t.Helper()
	var got int
	err := wait.PollUntilContextTimeout(f.t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = f.boundClaims(ctx)
		return got >= n, err
	})
	if err != nil {
		f.t.Fatalf("waiting %v for %d Bound claims in %s: %v; %d Bound; %s", timeout, n, f.ns, err, got, f.describeUnbound())
	}
}

// describeUnbound summarizes the unbound claims and volumes of the test,
// for failure messages.
func (f *fixture) describeUnbound() string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	claims, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "list claims: " + err.Error()
	}
	vols, err := f.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + f.ns})
	if err != nil {
		return "list volumes: " + err.Error()
	}
	var b strings.Builder
	phases := map[string]int{}
	for _, c := range claims.Items {
		phases["claim "+string(c.Status.Phase)]++
		if c.Status.Phase != v1.ClaimBound && phases["claim "+string(c.Status.Phase)] <= 5 {
			fmt.Fprintf(&b, "claim %s: phase %s, volumeName %q, request %s, annotations %v; ", c.Name, c.Status.Phase,
				c.Spec.VolumeName, c.Spec.Resources.Requests.Storage(), c.Annotations)
		}
	}
	for _, pv := range vols.Items {
		phases["volume "+string(pv.Status.Phase)]++
		if pv.Status.Phase != v1.VolumeBound && phases["volume "+string(pv.Status.Phase)] <= 5 {
			fmt.Fprintf(&b, "volume %s: phase %s, capacity %s, claimRef %v; ", pv.Name, pv.Status.Phase, pv.Spec.Capacity.Storage(), pv.Spec.ClaimRef)
		}
	}
	fmt.Fprintf(&b, "counts %v", phases)
	return b.String()
}

// checkBindings reads every claim of the namespace and every volume of the
// test back and checks the binding invariants: each Bound claim names a
// Bound volume whose claimRef is that claim (namespace, name and UID),
// which satisfies the claim (class, access modes, size) and which no other
// claim names; each volume with a claimRef UID is Bound to an existing
// claim that names it. It returns the volume name of each claim name.
func (f *fixture) checkBindings() map[string]string {
	f.t.Helper()
	ctx := f.t.Context()
	claims, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatalf("list claims: %v", err)
	}
	vols, err := f.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + f.ns})
	if err != nil {
		f.t.Fatalf("list volumes: %v", err)
	}
	byName := map[string]*v1.PersistentVolume{}
	for i := range vols.Items {
		byName[vols.Items[i].Name] = &vols.Items[i]
	}
	bound := map[string]string{}
	owner := map[string]string{} // volume name -> claim name
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.Status.Phase != v1.ClaimBound {
			continue
		}
		pv, ok := byName[c.Spec.VolumeName]
		switch {
		case !ok:
			f.t.Errorf("claim %s is Bound to volume %q, which does not exist", c.Name, c.Spec.VolumeName)
			continue
		case owner[pv.Name] != "":
			f.t.Errorf("volume %s is named by claims %s and %s", pv.Name, owner[pv.Name], c.Name)
		case pv.Status.Phase != v1.VolumeBound:
			f.t.Errorf("volume %s of Bound claim %s is %s, want Bound", pv.Name, c.Name, pv.Status.Phase)
		case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Namespace != c.Namespace || pv.Spec.ClaimRef.Name != c.Name || pv.Spec.ClaimRef.UID != c.UID:
			f.t.Errorf("volume %s claimRef = %+v, want claim %s/%s uid %s", pv.Name, pv.Spec.ClaimRef, c.Namespace, c.Name, c.UID)
		}
		owner[pv.Name] = c.Name
		bound[c.Name] = pv.Name
		if want := c.Spec.Resources.Requests[v1.ResourceStorage]; pv.Spec.Capacity.Storage().Cmp(want) < 0 {
			f.t.Errorf("claim %s asks for %s but is Bound to %s of %s", c.Name, want.String(), pv.Name, pv.Spec.Capacity.Storage())
		}
		if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != pv.Spec.StorageClassName {
			f.t.Errorf("claim %s of class %v is Bound to %s of class %q", c.Name, c.Spec.StorageClassName, pv.Name, pv.Spec.StorageClassName)
		}
		if got := c.Status.Capacity[v1.ResourceStorage]; got.Cmp(*pv.Spec.Capacity.Storage()) != 0 {
			f.t.Errorf("claim %s status capacity = %s, want %s of %s", c.Name, got.String(), pv.Spec.Capacity.Storage(), pv.Name)
		}
		if c.Annotations["pv.kubernetes.io/bind-completed"] != "yes" {
			f.t.Errorf("claim %s has no bind-completed annotation: %v", c.Name, c.Annotations)
		}
	}
	for _, pv := range vols.Items {
		if pv.Status.Phase == v1.VolumeBound && owner[pv.Name] == "" {
			f.t.Errorf("volume %s is Bound (claimRef %+v) but no Bound claim names it", pv.Name, pv.Spec.ClaimRef)
		}
	}
	return bound
}

// events returns the events of the namespace about object name with the
// given reason.
func (f *fixture) events(ctx context.Context, name, reason string) ([]v1.Event, error) {
	return f.eventsIn(ctx, f.ns, name, reason)
}

// eventsIn returns the events of namespace about object name with the
// given reason.
func (f *fixture) eventsIn(ctx context.Context, namespace, name, reason string) ([]v1.Event, error) {
	sel := fields.Set{"involvedObject.name": name, "reason": reason}.AsSelector().String()
	list, err := f.cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// deleteNow are the options of an immediate delete.
func deleteNow() metav1.DeleteOptions {
	var zero int64
	return metav1.DeleteOptions{GracePeriodSeconds: &zero}
}
