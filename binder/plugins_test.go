package binder

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/volbind/volbind/binder/bindertest"
)

func TestPluginConfigValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"negative operation delay", Config{OperationInitialDelay: -time.Second}},
		{"negative operation max delay", Config{OperationMaxDelay: -time.Second}},
		{"negative create retries", Config{Provisioning: &ProvisioningConfig{CreateVolumeRetries: -1}}},
		{"negative create interval", Config{Provisioning: &ProvisioningConfig{CreateVolumeInterval: -time.Second}}},
		{"negative allocation unit", Config{Provisioning: &ProvisioningConfig{AllocationUnit: -1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := New(bindertest.New(), tc.cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("New = %v, want ErrInvalidConfig", err)
			}
		})
	}
	// Defaults are filled in on a copy.
	pc := &ProvisioningConfig{}
	b, err := New(bindertest.New(), Config{Provisioning: pc})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.cfg.Provisioning; got.CreateVolumeRetries != DefaultCreateVolumeRetries || got.CreateVolumeInterval != DefaultCreateVolumeInterval || pc.CreateVolumeRetries != 0 {
		t.Errorf("provisioning config = %+v (caller's %+v), want defaults on a copy", got, pc)
	}
}

func TestVolumePluginName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  v1.PersistentVolumeSource
		want string
	}{
		{v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/x"}}, "kubernetes.io/host-path"},
		{v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/x"}}, "kubernetes.io/nfs"},
		{v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "disk.example.com"}}, "disk.example.com"},
		{v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/x"}}, "kubernetes.io/local-volume"},
		{v1.PersistentVolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "d"}}, "kubernetes.io/gce-pd"},
		{v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "v"}}, "kubernetes.io/aws-ebs"},
		{v1.PersistentVolumeSource{}, ""},
	}
	for _, tc := range tests {
		pv := &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: tc.src}}
		if got := VolumePluginName(pv); got != tc.want {
			t.Errorf("VolumePluginName(%+v) = %q, want %q", tc.src, got, tc.want)
		}
	}
	claim := newPVC("c", "1Gi")
	if got := ProvisionedVolumeName(claim); got != "pvc-uid-c" {
		t.Errorf("ProvisionedVolumeName = %q, want pvc-uid-c", got)
	}
}

// TestNewForClientsetNodes: with provisioning on and no NodeGetter, the
// nodes come from the factory's node informer, which Run waits for.
func TestNewForClientsetNodes(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset(zoneNode("node-a", "zone-a"))
	f := informers.NewSharedInformerFactory(cs, 0)
	b, err := NewForClientset(t.Context(), cs, f, Config{Provisioning: &ProvisioningConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	nodes, ok := b.cfg.Provisioning.Nodes.(ListerNodes)
	if !ok {
		t.Fatalf("Nodes = %T, want ListerNodes", b.cfg.Provisioning.Nodes)
	}
	if got := len(b.cfg.Synced); got != 5 {
		t.Errorf("%d informers to wait for, want 5 (volumes, claims, classes, nodes, pods)", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	if n, err := nodes.GetNode(ctx, "node-a"); err != nil || n.Name != "node-a" {
		t.Errorf("GetNode = %v, %v", n, err)
	}
	if list, err := nodes.ListNodes(ctx); err != nil || len(list) != 1 {
		t.Errorf("ListNodes = %d nodes, %v; want 1", len(list), err)
	}
	if _, err := nodes.GetNode(ctx, "node-x"); !apierrors.IsNotFound(err) {
		t.Errorf("GetNode(missing) = %v, want NotFound", err)
	}
}
