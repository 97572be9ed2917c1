package provisioner

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

func options(class *storagev1.StorageClass, node string) controller.ProvisionOptions {
	return controller.ProvisionOptions{
		StorageClass: class,
		PVName:       "pvc-1",
		PVC: &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: "1"},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")}},
			},
		},
		SelectedNodeName: node,
	}
}

func TestProvisionVolume(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{v1.LabelTopologyZone: "zone-b"}}}
	cs := fake.NewClientset(node)
	p, err := New(Config{Driver: "csi.test", Nodes: cs.CoreV1().Nodes(), Labels: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	retain := v1.PersistentVolumeReclaimRetain
	pv, state, err := p.Provision(t.Context(), options(&storagev1.StorageClass{Provisioner: "csi.test", ReclaimPolicy: &retain}, "n1"))
	if err != nil || state != controller.ProvisioningFinished {
		t.Fatalf("Provision = %v, %v; want a volume, Finished", state, err)
	}
	want := v1.PersistentVolumeSpec{
		Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")},
		AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.test", VolumeHandle: "pvc-1"}},
		NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"zone-b"}}},
		}}}},
	}
	if diff := cmp.Diff(want, pv.Spec); diff != "" {
		t.Errorf("volume spec (-want +got):\n%s", diff)
	}
	if pv.Name != "pvc-1" || pv.Labels["k"] != "v" {
		t.Errorf("volume %s labels %v, want pvc-1 with k=v", pv.Name, pv.Labels)
	}
	if _, _, err := p.Provision(t.Context(), options(&storagev1.StorageClass{Provisioner: "csi.test"}, "gone")); err == nil {
		t.Error("Provision for a missing selected node succeeded, want an error")
	}
}

func TestProvisionFailures(t *testing.T) {
	p, err := New(Config{Driver: "csi.test"})
	if err != nil {
		t.Fatal(err)
	}
	p.FailProvision("ns/data", 2)
	class := &storagev1.StorageClass{Provisioner: "csi.test"}
	for i, wantErr := range []bool{true, true, false} {
		_, _, err := p.Provision(t.Context(), options(class, ""))
		if got := errors.Is(err, ErrInjected); got != wantErr {
			t.Errorf("call %d: error %v, want injected %v", i+1, err, wantErr)
		}
	}
	if calls := p.Provisions("ns/data"); len(calls) != 3 || calls[2].Err != nil || calls[0].ClaimUID != "1" {
		t.Errorf("Provisions = %+v, want 3 calls, the last one succeeded", calls)
	}
}

func TestProvisionHeld(t *testing.T) {
	p, err := New(Config{Driver: "csi.test"})
	if err != nil {
		t.Fatal(err)
	}
	g := p.HoldProvision("ns/data")
	done := make(chan error, 1)
	go func() {
		_, _, err := p.Provision(t.Context(), options(&storagev1.StorageClass{Provisioner: "csi.test"}, ""))
		done <- err
	}()
	<-g.Reached()
	select {
	case err := <-done:
		t.Fatalf("held Provision returned %v before Release", err)
	default:
	}
	g.Release()
	if err := <-done; err != nil {
		t.Fatalf("Provision after Release: %v", err)
	}
}

func TestProvisionMigrated(t *testing.T) {
	p, err := New(Config{Driver: "pd.csi.storage.gke.io", MigratedFrom: "kubernetes.io/gce-pd"})
	if err != nil {
		t.Fatal(err)
	}
	pv, _, err := p.Provision(t.Context(), options(&storagev1.StorageClass{Provisioner: "kubernetes.io/gce-pd"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.CSI != nil || pv.Spec.GCEPersistentDisk == nil || pv.Spec.GCEPersistentDisk.PDName != "pvc-1" {
		t.Errorf("volume source = %+v, want the in-tree GCE PD pvc-1", pv.Spec.PersistentVolumeSource)
	}
	if err := p.Delete(t.Context(), pv); err != nil {
		t.Errorf("Delete of the migrated volume: %v", err)
	}
}

func TestDelete(t *testing.T) {
	p, err := New(Config{Driver: "csi.test"})
	if err != nil {
		t.Fatal(err)
	}
	other := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "other"},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "else"}}}}
	var ignored *controller.IgnoredError
	if err := p.Delete(t.Context(), other); !errors.As(err, &ignored) {
		t.Errorf("Delete of another driver's volume = %v, want IgnoredError", err)
	}
	ours := other.DeepCopy()
	ours.Name, ours.Spec.CSI.Driver = "ours", "csi.test"
	if err := p.Delete(t.Context(), ours); err != nil {
		t.Fatal(err)
	}
	if got := p.Deletes(); !cmp.Equal(got, []string{"ours"}) {
		t.Errorf("Deletes = %q, want [ours]", got)
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New without a driver succeeded")
	}
}
