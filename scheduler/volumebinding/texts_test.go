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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumezone"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/internal/schedgen"
)

// TestTexts: binder/scheduling's texts are the constants of the in-tree
// VolumeBinding and VolumeZone plugins of the Kubernetes this module
// builds, read from their packages, so that they cannot drift; the
// volbind-only ClassZoneConflict text is none of them.
func TestTexts(t *testing.T) {
	t.Parallel()
	want := map[scheduling.ReasonKind]string{
		scheduling.VolumeNodeAffinityConflict: string(intree.ErrReasonNodeConflict),
		scheduling.NoMatchingVolume:           string(intree.ErrReasonBindConflict),
		scheduling.CannotProvision:            string(intree.ErrReasonBindConflict),
		scheduling.SelectedNodeConflict:       string(intree.ErrReasonBindConflict),
		scheduling.NotEnoughSpace:             intree.ErrReasonNotEnoughSpace,
		scheduling.VolumeNotExist:             intree.ErrReasonPVNotExist,
		scheduling.VolumeZoneConflict:         volumezone.ErrReasonConflict,
	}
	for kind, text := range want {
		if got := kind.Message(); got != text {
			t.Errorf("%v.Message() = %q, want the in-tree %q", kind, got, text)
		}
		if kind.PodLevel() {
			t.Errorf("%v.PodLevel() = true for a Filter reason", kind)
		}
		if got := (scheduling.Reason{Kind: kind}).Code(); got != scheduling.CodeUnschedulableAndUnresolvable {
			t.Errorf("%v code = %v, want UnschedulableAndUnresolvable as in-tree", kind, got)
		}
	}
	for _, text := range want {
		if text == scheduling.ClassZoneConflict.Message() {
			t.Errorf("ClassZoneConflict's text %q is an in-tree text", text)
		}
	}
}

// textCase is a pod whose in-tree answer carries a text without an
// in-tree constant.
type textCase struct {
	name string
	objs []runtime.Object
	pod  *v1.Pod
	// zone compares with VolumeBinding followed by VolumeZone.
	zone bool
}

// TestPodLevelTexts: for the answers whose in-tree texts are built in
// place (PreFilter messages naming claims and volumes) and for the order
// of a node's texts, binder/scheduling answers as the in-tree plugins do
// on the same objects.
func TestPodLevelTexts(t *testing.T) {
	t.Parallel()
	claim := func(name, class string, mod ...func(*v1.PersistentVolumeClaim)) *v1.PersistentVolumeClaim {
		c := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: schedgen.Namespace, ResourceVersion: "1", UID: types.UID("uid-" + name)},
			Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
		}
		for _, m := range mod {
			m(c)
		}
		return c
	}
	bound := func(pv string) func(*v1.PersistentVolumeClaim) {
		return func(c *v1.PersistentVolumeClaim) {
			c.Spec.VolumeName, c.Status.Phase = pv, v1.ClaimBound
			c.Annotations = map[string]string{volume.AnnBindCompleted: "yes"}
		}
	}
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	classes := []runtime.Object{
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local", ResourceVersion: "1"}, Provisioner: volume.NotSupportedProvisioner, VolumeBindingMode: &wffc},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", ResourceVersion: "1"}, Provisioner: schedgen.PlainDriver, VolumeBindingMode: &imm},
	}
	farVolume := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "far", ResourceVersion: "1",
		Labels: map[string]string{v1.LabelTopologyZone: "z9"}},
		Spec: v1.PersistentVolumeSpec{StorageClassName: "local", Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: schedgen.PlainDriver, VolumeHandle: "far"}},
			ClaimRef:               &v1.ObjectReference{Namespace: schedgen.Namespace, Name: "a", UID: "uid-a"}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound}}
	pinned := farVolume.DeepCopy()
	pinned.Name, pinned.Labels = "pinned", nil
	pinned.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"elsewhere"}}}}}}}
	tests := []textCase{
		{name: "unbound immediate claim", objs: []runtime.Object{claim("a", "fast")}, pod: textPod("a")},
		{name: "missing claim", pod: textPod("a")},
		{name: "missing ephemeral claim", pod: textPod("~scratch")},
		{name: "ephemeral claim of another pod", objs: []runtime.Object{claim("web-0-scratch", "local")}, pod: textPod("~scratch")},
		{name: "lost claim", objs: []runtime.Object{claim("a", "local", bound("gone"), func(c *v1.PersistentVolumeClaim) { c.Status.Phase = v1.ClaimLost })}, pod: textPod("a")},
		{name: "claim being deleted", objs: []runtime.Object{claim("a", "local", func(c *v1.PersistentVolumeClaim) {
			c.DeletionTimestamp, c.Finalizers = &metav1.Time{}, []string{"kubernetes.io/pvc-protection"}
		})}, pod: textPod("a")},
		{name: "bound claim, missing volume, with VolumeZone", objs: []runtime.Object{claim("a", "local", bound("gone"))}, pod: textPod("a"), zone: true},
		{name: "bound claim, volume in another zone, with VolumeZone", objs: []runtime.Object{farVolume, claim("a", "local", bound("far"))}, pod: textPod("a"), zone: true},
		{name: "node affinity conflict and no volume: the in-tree order", objs: []runtime.Object{pinned,
			claim("a", "local", bound("pinned")), claim("b", "local")}, pod: textPod("a", "b")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0", ResourceVersion: "1",
				Labels: map[string]string{v1.LabelHostname: "node-0", v1.LabelTopologyZone: "z1"}}}
			c := &schedgen.Cluster{Nodes: []*v1.Node{n}, Objects: append(append([]runtime.Object{}, classes...), tc.objs...), Pod: tc.pod}
			in, lib := newInTreeSide(ctx, t, c), newLibSide(ctx, t, c)
			ni := framework.NewNodeInfo()
			ni.SetNode(n)
			state := framework.NewCycleState()
			_, pre := in.pl.PreFilter(ctx, state, tc.pod, []fwk.NodeInfo{ni})
			want, vb := pre, lib.plain
			if pre.IsSuccess() {
				want = in.pl.Filter(ctx, state, tc.pod, ni)
			}
			if tc.zone {
				z := newZonedAnswers(ctx, t, in, tc.pod, pre)
				want, vb = z.filter(ctx, ni, want, &counts{texts: map[string]int{}}), lib.zoned
			}
			if want.IsSuccess() {
				t.Fatalf("the in-tree plugins admit the pod: the case tests nothing")
			}
			_, reasons, err := vb.Find(ctx, tc.pod, n)
			if got, w := libStatus(reasons, err), statusText(want); got != w {
				t.Errorf("Find: in-tree %q, library %q", w, got)
			}
		})
	}
}

// textPod is the pod web-0 with a persistentVolumeClaim volume for each
// claim named, and a generic ephemeral volume for each "~name".
func textPod(volumes ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: schedgen.Namespace, UID: schedgen.PodUID, ResourceVersion: "1"}}
	for _, name := range volumes {
		src := v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}
		if eph, ok := strings.CutPrefix(name, "~"); ok {
			name, src = eph, v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{}}}
		}
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: name, VolumeSource: src})
	}
	return p
}
