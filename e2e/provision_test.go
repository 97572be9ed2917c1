//go:build e2e && linux

package e2e

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
)

// testProvisioner is the provisioner name of the tests' StorageClasses.
const testProvisioner = "e2e.volbind.io/fake"

// fakeProvisioner is a binder.Provisioner that "creates" host-path storage
// and records its requests.
type fakeProvisioner struct {
	ns string
	// mu guards reqs.
	mu   sync.Mutex
	reqs []*binder.ProvisionRequest
}

var _ binder.Provisioner = (*fakeProvisioner)(nil)

func (p *fakeProvisioner) Provision(_ context.Context, req *binder.ProvisionRequest) (*v1.PersistentVolume, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{testLabel: p.ns}},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + p.ns + "/" + req.VolumeName}},
		},
	}, nil
}

func (p *fakeProvisioner) requests() []*binder.ProvisionRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

// createClass creates the fixture's StorageClass with the given binding
// mode and testProvisioner; the cleanup deletes it.
func (f *fixture) createClass(mode storagev1.VolumeBindingMode) {
	f.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: f.class}, Provisioner: testProvisioner, VolumeBindingMode: &mode}
	if _, err := f.cs.StorageV1().StorageClasses().Create(f.t.Context(), sc, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("create StorageClass: %v", err)
	}
	f.t.Cleanup(func() {
		if err := f.cs.StorageV1().StorageClasses().Delete(context.Background(), f.class, deleteNow()); err != nil {
			f.t.Errorf("delete StorageClass: %v", err)
		}
	})
}

// TestProvisioning provisions a volume for a claim of a class with an
// internal provisioner, binds the claim to it, and deletes it (Delete is
// the class's default reclaim policy) through the Deleter registered under
// the provisioner's name once the claim is deleted.
func TestProvisioning(t *testing.T) {
	f := newFixture(t)
	f.createClass(storagev1.VolumeBindingImmediate)
	p := &fakeProvisioner{ns: f.ns}
	d := &fakeDeleter{}
	startBinder(t, binder.Config{
		Provisioning: &binder.ProvisioningConfig{Provisioners: map[string]binder.Provisioner{testProvisioner: p}},
		Reclaim:      &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{testProvisioner: d}},
	})
	claim := f.claim("dynamic", 3)
	f.create(claim)
	f.waitBound(1, time.Minute)

	got := f.getClaim("dynamic")
	want := binder.ProvisionedVolumeName(got)
	if b := f.checkBindings()["dynamic"]; b != want {
		t.Fatalf("claim dynamic Bound to %q, want the provisioned %q", b, want)
	}
	pv := f.getVolume(want)
	if pv.Annotations["pv.kubernetes.io/provisioned-by"] != testProvisioner {
		t.Errorf("provisioned volume annotations = %v, want provisioned-by %s", pv.Annotations, testProvisioner)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || pv.Spec.StorageClassName != f.class {
		t.Errorf("provisioned volume reclaim policy %s, class %q; want Delete, %q", pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.StorageClassName, f.class)
	}
	if reqs := p.requests(); len(reqs) != 1 || reqs[0].VolumeName != want || reqs[0].SelectedNode != nil {
		t.Errorf("provision requests = %+v, want one for %s without a selected node", reqs, want)
	}

	if err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Delete(t.Context(), "dynamic", deleteNow()); err != nil {
		t.Fatalf("delete claim: %v", err)
	}
	f.waitGone(want)
	if names := d.names(); !slices.Equal(names, []string{want}) {
		t.Errorf("Deleter deleted %q, want [%s]", names, want)
	}
}

// TestWaitForFirstConsumerProvisioning checks a claim of a
// WaitForFirstConsumer class with a provisioner: it is not provisioned
// (WaitForFirstConsumer event) until the scheduler annotates it with the
// selected node; then it is provisioned for that node and bound.
func TestWaitForFirstConsumerProvisioning(t *testing.T) {
	f := newFixture(t)
	f.createClass(storagev1.VolumeBindingWaitForFirstConsumer)
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.ns + "-node", Labels: map[string]string{"topology.kubernetes.io/zone": "zone-a"}}}
	if _, err := f.cs.CoreV1().Nodes().Create(t.Context(), node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
	t.Cleanup(func() {
		if err := f.cs.CoreV1().Nodes().Delete(context.Background(), node.Name, deleteNow()); err != nil {
			t.Errorf("delete node: %v", err)
		}
	})
	p := &fakeProvisioner{ns: f.ns}
	startBinder(t, binder.Config{Provisioning: &binder.ProvisioningConfig{Provisioners: map[string]binder.Provisioner{testProvisioner: p}}})
	f.create(f.claim("late", 1))
	f.eventually(time.Minute, "a WaitForFirstConsumer event on claim late", func(ctx context.Context) (bool, error) {
		evs, err := f.events(ctx, "late", binder.ReasonWaitForFirstConsumer)
		return len(evs) > 0, err
	})
	if reqs := p.requests(); len(reqs) != 0 {
		t.Fatalf("provisioned %d volumes before the claim had a selected node", len(reqs))
	}

	claim := f.getClaim("late")
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, "volume.kubernetes.io/selected-node", node.Name)
	if _, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Update(t.Context(), claim, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("annotate claim: %v", err)
	}
	f.waitBound(1, time.Minute)
	want := binder.ProvisionedVolumeName(claim)
	if b := f.checkBindings()["late"]; b != want {
		t.Errorf("claim late Bound to %q, want the provisioned %q", b, want)
	}
	reqs := p.requests()
	if len(reqs) != 1 || reqs[0].SelectedNode == nil || reqs[0].SelectedNode.Name != node.Name {
		t.Errorf("provision requests = %+v, want one for node %s", reqs, node.Name)
	}
}
