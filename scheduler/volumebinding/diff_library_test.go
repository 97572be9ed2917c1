package volumebinding

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	csiplugins "k8s.io/csi-translation-lib/plugins"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/internal/schedgen"
)

// libStatus renders binder/scheduling's answer as statusText renders the
// in-tree plugin's: the code of the reasons and their texts, or Error.
func libStatus(reasons []scheduling.Reason, err error) string {
	switch {
	case err != nil:
		return "Error"
	case len(reasons) == 0:
		return "Success"
	}
	return reasons[0].Code().String() + ": " + strings.Join(scheduling.Messages(reasons), "; ")
}

// wantText is statusText for the answer binder/scheduling must match: a
// skipped plugin (a pod without claims) admits every node.
func wantText(s *fwk.Status) string {
	if s.IsSkip() {
		return "Success"
	}
	return statusText(s)
}

// zonedAnswers are the in-tree answers of VolumeBinding followed by
// VolumeZone, as kube-scheduler's default profile runs them: a PreFilter
// failure of either fails the pod; otherwise a node gets VolumeBinding's
// Filter answer, then, if that admits it, VolumeZone's.
type zonedAnswers struct {
	in    *side
	state fwk.CycleState
	podv  *v1.Pod
	// pod is the pod-level answer: VolumeBinding's PreFilter's, or
	// VolumeZone's when VolumeBinding's succeeded.
	pod *fwk.Status
	// skip: VolumeZone's PreFilter skipped the pod (no bound volume).
	skip bool
}

func newZonedAnswers(ctx context.Context, t *testing.T, in *side, pod *v1.Pod, vb *fwk.Status) *zonedAnswers {
	t.Helper()
	z := &zonedAnswers{in: in, state: framework.NewCycleState(), podv: pod, pod: vb}
	if !vb.IsSuccess() {
		return z
	}
	_, st := in.zone.PreFilter(ctx, z.state, pod, nil)
	switch {
	case st.IsSkip():
		z.skip = true
	case !st.IsSuccess():
		z.pod = st
	}
	return z
}

// filter returns the answer for a node whose VolumeBinding Filter answered
// f.
func (z *zonedAnswers) filter(ctx context.Context, ni fwk.NodeInfo, f *fwk.Status, cnt *counts) *fwk.Status {
	switch {
	case !z.pod.IsSuccess():
		return z.pod
	case !f.IsSuccess() || z.skip:
		return f
	}
	st := z.in.zone.Filter(ctx, z.state, z.podv, ni)
	cnt.countTexts(st)
	return st
}

// comparePod compares binder/scheduling's Check, plain and with the
// VolumeZone rule, with the in-tree pod-level answers; it returns the
// number of answers compared.
func (l *libSide) comparePod(ctx context.Context, t *testing.T, pod *v1.Pod, vb, zoned *fwk.Status) int {
	t.Helper()
	for _, c := range []struct {
		name string
		vb   *scheduling.VolumeBinder
		want *fwk.Status
	}{{"VolumeBinding", l.plain, vb}, {"VolumeBinding+VolumeZone", l.zoned, zoned}} {
		reasons, err := c.vb.Check(ctx, pod)
		if got, want := libStatus(reasons, err), wantText(c.want); got != want {
			t.Errorf("binder/scheduling Check, as %s: in-tree %q, library %q (%v)", c.name, want, got, err)
		}
	}
	return 2
}

// compareNodes compares binder/scheduling's Find on every node, plain and
// with the VolumeZone rule, with the in-tree answers want gives for the
// node; it returns the number of answers compared.
func (l *libSide) compareNodes(ctx context.Context, t *testing.T, pod *v1.Pod, nodes []fwk.NodeInfo, want func(fwk.NodeInfo) (vb, zoned *fwk.Status)) int {
	t.Helper()
	for _, ni := range nodes {
		vb, zoned := want(ni)
		for _, c := range []struct {
			name string
			vb   *scheduling.VolumeBinder
			want *fwk.Status
		}{{"VolumeBinding", l.plain, vb}, {"VolumeBinding+VolumeZone", l.zoned, zoned}} {
			_, reasons, err := c.vb.Find(ctx, pod, ni.Node())
			if got, want := libStatus(reasons, err), wantText(c.want); got != want {
				t.Errorf("binder/scheduling Find(%s), as %s: in-tree %q, library %q (%v, %v)", ni.Node().Name, c.name, want, got, reasons, err)
			}
		}
	}
	return 2 * len(nodes)
}

// migratedNodes counts the nodes whose CSINode lists the in-tree plugin of
// a bound volume of the pod as migrated: the cases where kube-scheduler
// translates the volume.
func migratedNodes(c *schedgen.Cluster) int {
	claims := map[string]*v1.PersistentVolumeClaim{}
	volumes := map[string]*v1.PersistentVolume{}
	var csiNodes []*storagev1.CSINode
	for _, o := range c.Objects {
		switch o := o.(type) {
		case *v1.PersistentVolumeClaim:
			claims[o.Name] = o
		case *v1.PersistentVolume:
			volumes[o.Name] = o
		case *storagev1.CSINode:
			csiNodes = append(csiNodes, o)
		}
	}
	var plugins []string
	for _, vol := range c.Pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		claim, ok := claims[vol.PersistentVolumeClaim.ClaimName]
		if !ok {
			continue
		}
		switch pv := volumes[claim.Spec.VolumeName]; {
		case pv == nil:
		case pv.Spec.AWSElasticBlockStore != nil:
			plugins = append(plugins, csiplugins.AWSEBSInTreePluginName)
		case pv.Spec.GCEPersistentDisk != nil:
			plugins = append(plugins, csiplugins.GCEPDInTreePluginName)
		}
	}
	n := 0
	for _, cn := range csiNodes {
		migrated := strings.Split(cn.Annotations[v1.MigratedPluginsAnnotationKey], ",")
		if slices.ContainsFunc(plugins, func(p string) bool { return slices.Contains(migrated, p) }) {
			n++
		}
	}
	return n
}
