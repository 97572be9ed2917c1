package volumebinding

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/schedgen"
)

// TestPluginSeesTheInformerStore: the plugin sees a new volume (Filter)
// and a changed claim (PreFilter) as soon as the informers' stores hold
// them, before any handler of the informers has run. That is the state in
// which kube-scheduler's queue, whose handlers run on goroutines of their
// own, may already retry a pod for the event: a plugin that learnt of it
// only from its own handler would reject the pod once more, and no event
// would come to retry it.
func TestPluginSeesTheInformerStore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: schedgen.Namespace, ResourceVersion: "1", UID: "uid-data"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("local"), AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0", ResourceVersion: "1", Labels: map[string]string{v1.LabelHostname: "host-0"}}}
	c := &schedgen.Cluster{Nodes: []*v1.Node{n}, Pod: textPod("data"), Objects: []runtime.Object{claim,
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local", ResourceVersion: "1"}, Provisioner: volume.NotSupportedProvisioner, VolumeBindingMode: &wffc}}}
	var (
		fh fwk.Handle
		pl plugin
	)
	newHandle(ctx, t, c, func(h fwk.Handle) {
		p, err := buildOurs(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		fh, pl = h, p.(plugin)
	})
	ni := framework.NewNodeInfo()
	ni.SetNode(n)
	cycle := func() (*fwk.Status, *fwk.Status) {
		cs := framework.NewCycleState()
		if _, st := pl.PreFilter(ctx, cs, c.Pod, []fwk.NodeInfo{ni}); !st.IsSuccess() {
			return st, nil
		}
		return nil, pl.Filter(ctx, cs, c.Pod, ni)
	}
	if pre, f := cycle(); pre != nil || f.IsSuccess() {
		t.Fatalf("before the volume: PreFilter %v, Filter %v; want the node rejected", pre, f)
	}

	inf := fh.SharedInformerFactory()
	local := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "local-0", ResourceVersion: "5"},
		Spec: v1.PersistentVolumeSpec{StorageClassName: "local", Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/0"}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"host-0"}}}}}}}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	// Into the store only, as the informer puts it there before it tells
	// any handler.
	if err := inf.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(local); err != nil {
		t.Fatal(err)
	}
	if pre, f := cycle(); pre != nil || !f.IsSuccess() {
		t.Errorf("with the volume in the informer's store: PreFilter %v, Filter %v; want the node to fit", pre, f)
	}

	lost := claim.DeepCopy()
	lost.ResourceVersion, lost.Status.Phase, lost.Spec.VolumeName = "6", v1.ClaimLost, "gone"
	if err := inf.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Update(lost); err != nil {
		t.Fatal(err)
	}
	if pre, _ := cycle(); pre == nil || !strings.Contains(strings.Join(pre.Reasons(), ""), `bound to non-existent persistentvolume "gone"`) {
		t.Errorf("with the claim Lost in the informer's store: PreFilter %v; want the Lost claim's reason", pre)
	}
}
