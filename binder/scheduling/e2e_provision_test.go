package scheduling_test

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/zones"
)

// diskProvisioner is a zonal internal provisioner: every volume is a CSI
// disk in the zone the Binder chose.
type diskProvisioner struct{}

func (diskProvisioner) Provision(_ context.Context, req *binder.ProvisionRequest) (*v1.PersistentVolume, error) {
	return &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
		CSI: &v1.CSIPersistentVolumeSource{Driver: "disk.example.com", VolumeHandle: req.VolumeName},
	}}}, nil
}

func (diskProvisioner) Replicas(*storagev1.StorageClass) uint32 { return 1 }

var _ binder.ZonalProvisioner = diskProvisioner{}

// TestEndToEndProvisioning schedules WaitForFirstConsumer claims with no
// pre-provisioned volume: Assume selects the node, Bind writes it, the
// Binder provisions a zonal volume in the node's zone and binds it, and
// Bind returns once the claim is Bound to a volume the node can use.
func TestEndToEndProvisioning(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const replicas = 6
	var objs []runtime.Object
	objs = append(objs, class("disk", true, "example.com/disk", allowedZones("a", "b", "c")))
	var nodes []*v1.Node
	for _, z := range []string{"a", "b", "c"} {
		for j := range 2 {
			n := node(fmt.Sprintf("node-%s-%d", z, j), z)
			nodes = append(nodes, n)
			objs = append(objs, n)
		}
	}
	var pods []*v1.Pod
	for i := range replicas {
		c := fmt.Sprintf("disk-web-%d", i)
		objs = append(objs, pvc(c, "3Gi", "disk"))
		pods = append(pods, pod(fmt.Sprintf("web-%d", i), c))
	}
	srv := bindertest.New()
	if err := srv.Seed(ctx, objs...); err != nil {
		t.Fatal(err)
	}
	b, err := binder.New(srv, binder.Config{ResyncPeriod: -1, Provisioning: &binder.ProvisioningConfig{
		Provisioners: map[string]binder.Provisioner{"example.com/disk": diskProvisioner{}},
		Nodes:        srv,
	}})
	if err != nil {
		t.Fatal(err)
	}
	vb, err := scheduling.New(srv, classLister(t, objs...), scheduling.Config{BindTimeout: wait.ForeverTestTimeout})
	if err != nil {
		t.Fatal(err)
	}
	runBinders(ctx, t, srv, b, vb)

	s := &scheduler{t: t, ctx: ctx, srv: srv, vb: vb, nodes: nodes}
	for i, p := range pods {
		n, cycles := s.schedule(p, i)
		if cycles != 1 {
			t.Errorf("pod %s took %d cycles, want 1", p.Name, cycles)
		}
		// Bind returns once the claim names its volume (bind-completed), as
		// kube-scheduler's does; the claim's status write may still follow.
		if err := b.WaitForQuiescence(ctx); err != nil {
			t.Fatalf("WaitForQuiescence: %v", err)
		}
		c, err := srv.GetClaim(ctx, ns, p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
		if err != nil {
			t.Fatal(err)
		}
		pv, err := srv.GetVolume(ctx, c.Spec.VolumeName)
		if err != nil {
			t.Fatalf("claim %s: volume %q: %v", c.Name, c.Spec.VolumeName, err)
		}
		if c.Status.Phase != v1.ClaimBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != c.UID {
			t.Errorf("claim %s: phase %s, volume %s not bound to it", c.Name, c.Status.Phase, pv.Name)
		}
		zone, _ := zones.NodeZone(n)
		if got := pv.Labels[zones.ZoneLabel]; got != zone || pv.Name != "pvc-"+string(c.UID) {
			t.Errorf("claim %s of a pod on %s (zone %s): provisioned volume %s in zone %q", c.Name, n.Name, zone, pv.Name, got)
		}
		if ok, err := zones.Matches(pv, n); !ok || err != nil {
			t.Errorf("volume %s cannot be used from %s (%v)", pv.Name, n.Name, err)
		}
	}
}
