package binder

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/recycler"
)

// errPlugin is the failure of fake plugins.
var errPlugin = errors.New("backend unavailable")

// plugin is a fake Deleter and Provisioner: it records its calls, fails
// the first fail calls with err (errPlugin by default) and, while gate is
// open (non-nil), blocks each call until gate is closed or ctx is done.
type plugin struct {
	mu      sync.Mutex
	fail    int
	err     error
	gate    chan struct{}
	calls   []string
	reqs    []*ProvisionRequest
	started chan struct{}
	// onProvision runs inside Provision before it returns.
	onProvision func(ctx context.Context, req *ProvisionRequest)
}

var (
	_ Deleter     = (*plugin)(nil)
	_ Provisioner = (*plugin)(nil)
)

func newPlugin() *plugin { return &plugin{started: make(chan struct{}, 1000)} }

func (p *plugin) call(ctx context.Context, name string) error {
	p.mu.Lock()
	p.calls = append(p.calls, name)
	gate := p.gate
	fail := p.fail > 0
	if fail {
		p.fail--
	}
	err := p.err
	p.mu.Unlock()
	p.started <- struct{}{}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail {
		if err == nil {
			err = errPlugin
		}
		return err
	}
	return nil
}

func (p *plugin) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	return p.call(ctx, "delete "+pv.Name)
}

func (p *plugin) Provision(ctx context.Context, req *ProvisionRequest) (*v1.PersistentVolume, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	if err := p.call(ctx, "provision "+req.VolumeName); err != nil {
		return nil, err
	}
	if p.onProvision != nil {
		p.onProvision(ctx, req)
	}
	return &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
		CSI: &v1.CSIPersistentVolumeSource{Driver: "disk.example.com", VolumeHandle: req.VolumeName},
	}}}, nil
}

func (p *plugin) callList() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func (p *plugin) requests() []*ProvisionRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*ProvisionRequest(nil), p.reqs...)
}

// zonal is a ZonalProvisioner of single-zone disks.
type zonal struct{ *plugin }

var _ ZonalProvisioner = zonal{}

func (zonal) Replicas(*storagev1.StorageClass) uint32 { return 1 }

// waitOps waits until b runs no operation.
func (e *env) waitOps(b *Binder) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, wait.ForeverTestTimeout)
	defer cancel()
	if err := b.ops.Wait(ctx); err != nil {
		e.t.Fatalf("operations still running: %v", err)
	}
}

// waitStarted waits until p has been called n times in all.
func (e *env) waitStarted(p *plugin, n int) {
	e.t.Helper()
	if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return len(p.callList()) >= n, nil }); err != nil {
		e.t.Fatalf("plugin called %d times, want %d", len(p.callList()), n)
	}
}

// stepPastBackoff moves the fake clock past any operation backoff of the
// default configuration reached within a few failures.
func (e *env) stepPastBackoff(d time.Duration) { e.fc.Step(d + time.Millisecond) }

// syncVolumeAndWait runs one volume sync and waits for its operation.
func (e *env) syncVolumeAndWait(b *Binder, name string) {
	e.t.Helper()
	if err := b.SyncVolume(e.ctx, name); err != nil {
		e.t.Fatalf("SyncVolume(%s): %v", name, err)
	}
	e.waitOps(b)
}

// syncVolumes runs n syncs of the volume without waiting for the
// operations they start, failing the test on a sync error.
func (e *env) syncVolumes(b *Binder, name string, n int) {
	e.t.Helper()
	for range n {
		if err := b.SyncVolume(e.ctx, name); err != nil {
			e.t.Fatalf("SyncVolume(%s): %v", name, err)
		}
	}
}

// syncClaimAndWait runs one claim sync and waits for its operation.
func (e *env) syncClaimAndWait(b *Binder, name string) {
	e.t.Helper()
	if err := b.SyncClaim(e.ctx, ns+"/"+name); err != nil {
		e.t.Fatalf("SyncClaim(%s): %v", name, err)
	}
	e.waitOps(b)
}

// exists reports whether the server has the named volume.
func (e *env) exists(name string) bool {
	_, err := e.srv.GetVolume(e.ctx, name)
	return err == nil
}

// releasedPV is a volume bound to claim "gone", which does not exist.
func releasedPV(name string, policy v1.PersistentVolumeReclaimPolicy, opts ...pvOpt) *v1.PersistentVolume {
	opts = append([]pvOpt{boundTo("gone", "uid-gone"), pvAnn(volume.AnnBoundByController), pvPolicy(policy), pvPhase(v1.VolumeBound)}, opts...)
	return newPV(name, "10Gi", opts...)
}

func provisionedBy(name string) pvOpt {
	return func(pv *v1.PersistentVolume) { metav1SetAnn(pv, volume.AnnDynamicallyProvisioned, name) }
}

func metav1SetAnn(pv *v1.PersistentVolume, k, v string) {
	if pv.Annotations == nil {
		pv.Annotations = map[string]string{}
	}
	pv.Annotations[k] = v
}

func hostPath(pv *v1.PersistentVolume) {
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data/" + pv.Name}}
}

// recyclerFor returns a Recycler on the env's server and clock.
func (e *env) recyclerFor() *recycler.Recycler {
	e.t.Helper()
	r, err := recycler.New(e.srv, recycler.Config{Clock: e.fc})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// setPodPhase waits for the recycler pod of the volume and sets its phase.
func (e *env) setPodPhase(volumeName string, phase v1.PodPhase, reason string) {
	e.t.Helper()
	var pod *v1.Pod
	if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(ctx context.Context) (bool, error) {
			p, err := e.srv.GetPod(ctx, "default", recycler.PodName(volumeName))
			pod = p
			return err == nil, nil
		}); err != nil {
		e.t.Fatalf("no recycler pod for %s: %v", volumeName, err)
	}
	pod.Status.Phase = phase
	pod.Status.Reason = reason
	if _, err := e.srv.UpdatePodStatus(e.ctx, pod); err != nil {
		e.t.Fatalf("UpdatePodStatus: %v", err)
	}
}

// provClass is an Immediate class of the provisioner prov.
func provClass(name, prov string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	sc := newClass(name, mode, false)
	sc.Provisioner = prov
	sc.ReclaimPolicy = ptr.To(v1.PersistentVolumeReclaimDelete)
	return sc
}

func zoneNode(name, zone string) *v1.Node {
	n := &v1.Node{}
	n.Name = name
	n.Labels = map[string]string{"topology.kubernetes.io/zone": zone}
	return n
}

func pvcAnnValue(key, value string) pvcOpt {
	return func(pvc *v1.PersistentVolumeClaim) {
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations[key] = value
	}
}

// eventWith reports whether an event has the reason and contains text.
func eventWith(events []string, reason, text string) bool {
	for _, ev := range events {
		if strings.Contains(ev, " "+reason+" ") && strings.Contains(ev, text) {
			return true
		}
	}
	return false
}

func pvFinalizers(f ...string) pvOpt {
	return func(pv *v1.PersistentVolume) { pv.Finalizers = f }
}
