package scheduling_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/volume"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/zones"
)

const ns = "default"

// env is an in-memory API server feeding a VolumeBinder.
type env struct {
	t   testing.TB
	ctx context.Context
	fc  *testingclock.FakeClock
	srv *bindertest.Server
	vb  *scheduling.VolumeBinder
}

// newEnv seeds objs (StorageClasses also go to the binder's lister) and
// returns a VolumeBinder fed by the server's events.
func newEnv(t testing.TB, cfg scheduling.Config, objs ...runtime.Object) *env {
	t.Helper()
	e := &env{t: t, ctx: t.Context(), fc: testingclock.NewFakeClock(time.Unix(1_000_000, 0))}
	e.srv = bindertest.NewWithConfig(bindertest.Config{Clock: e.fc})
	if err := e.srv.Seed(e.ctx, objs...); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = e.fc
	}
	vb, err := scheduling.New(e.srv, classLister(t, objs...), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.vb = vb
	t.Cleanup(e.srv.AddEventHandler(bindertest.KindVolume, vb.VolumeHandler()))
	t.Cleanup(e.srv.AddEventHandler(bindertest.KindClaim, vb.ClaimHandler()))
	return e
}

// classLister returns a StorageClass lister holding the classes in objs.
func classLister(t testing.TB, objs ...runtime.Object) storagelisters.StorageClassLister {
	t.Helper()
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, o := range objs {
		if sc, ok := o.(*storagev1.StorageClass); ok {
			if err := idx.Add(sc); err != nil {
				t.Fatalf("add class: %v", err)
			}
		}
	}
	return storagelisters.NewStorageClassLister(idx)
}

// decided reports whether a decision is recorded for pod p on node.
func (e *env) decided(p *v1.Pod, node string) bool {
	_, ok := e.vb.Decision(p, e.node(node))
	return ok
}

func (e *env) node(name string) *v1.Node {
	e.t.Helper()
	n, err := e.srv.GetNode(e.ctx, name)
	if err != nil {
		e.t.Fatalf("GetNode(%q): %v", name, err)
	}
	return n
}

func (e *env) claim(name string) *v1.PersistentVolumeClaim {
	e.t.Helper()
	c, err := e.srv.GetClaim(e.ctx, ns, name)
	if err != nil {
		e.t.Fatalf("GetClaim(%q): %v", name, err)
	}
	return c
}

func (e *env) volume(name string) *v1.PersistentVolume {
	e.t.Helper()
	pv, err := e.srv.GetVolume(e.ctx, name)
	if err != nil {
		e.t.Fatalf("GetVolume(%q): %v", name, err)
	}
	return pv
}

// completeBinding does what the Binder does for a volume pre-bound to a
// claim: bind the claim to it and mark both Bound.
func (e *env) completeBinding(claimName, pvName string) {
	e.t.Helper()
	pvc := e.claim(claimName).DeepCopy()
	pvc.Spec.VolumeName = pvName
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnBindCompleted, "yes")
	pvc, err := e.srv.UpdateClaim(e.ctx, pvc)
	if err != nil {
		e.t.Fatalf("UpdateClaim: %v", err)
	}
	pvc.Status.Phase = v1.ClaimBound
	if _, err := e.srv.UpdateClaimStatus(e.ctx, pvc); err != nil {
		e.t.Fatalf("UpdateClaimStatus: %v", err)
	}
	pv := e.volume(pvName)
	pv.Status.Phase = v1.VolumeBound
	if _, err := e.srv.UpdateVolumeStatus(e.ctx, pv); err != nil {
		e.t.Fatalf("UpdateVolumeStatus: %v", err)
	}
}

// bindAsync runs Bind in a goroutine and returns its result channel.
func (e *env) bindAsync(pod *v1.Pod, pv *scheduling.PodVolumes) <-chan error {
	done := make(chan error, 1)
	go func() { done <- e.vb.Bind(e.ctx, pod, pv) }()
	return done
}

// waitFor polls cond with a deadline.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// Object builders.

func class(name string, delayed bool, provisioner string, mod ...func(*storagev1.StorageClass)) *storagev1.StorageClass {
	mode := storagev1.VolumeBindingImmediate
	if delayed {
		mode = storagev1.VolumeBindingWaitForFirstConsumer
	}
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name},
		Provisioner:       provisioner,
		VolumeBindingMode: &mode,
	}
	for _, m := range mod {
		m(sc)
	}
	return sc
}

func allowedZones(zs ...string) func(*storagev1.StorageClass) {
	return func(sc *storagev1.StorageClass) {
		sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: zones.ZoneLabel, Values: zs},
		}}}
	}
}

func node(name, zone string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		v1.LabelHostname: name, zones.ZoneLabel: zone,
	}}}
}

// pv returns an Available volume of class with the given size and, when
// key is set, node affinity key In [value].
func pv(name, size, class, key, value string) *v1.PersistentVolume {
	p := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			// A local volume needs node affinity (below); without it, hostPath.
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/mnt/" + name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if key != "" {
		p.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}}
		p.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}},
		}}}}
	}
	return p
}

// boundPV returns pv bound to claim namespace/claimName (UID filled in by
// the caller when known).
func boundPV(p *v1.PersistentVolume, claimName string) *v1.PersistentVolume {
	p.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claimName}
	p.Status.Phase = v1.VolumeBound
	return p
}

func pvc(name, size, class string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: ptr.To(class),
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// boundPVC returns c bound (bind-completed) to volume pvName.
func boundPVC(c *v1.PersistentVolumeClaim, pvName string) *v1.PersistentVolumeClaim {
	c.Spec.VolumeName = pvName
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, volume.AnnBindCompleted, "yes")
	c.Status.Phase = v1.ClaimBound
	return c
}

func annotate(c *v1.PersistentVolumeClaim, key, value string) *v1.PersistentVolumeClaim {
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, key, value)
	return c
}

func pod(name string, claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c},
		}})
	}
	p.Spec.Containers = []v1.Container{{Name: "c", Image: "busybox"}}
	return p
}

// The API implementations named in scheduling.API's comment.
var (
	_ scheduling.API = (*bindertest.Server)(nil)
	_ scheduling.API = binder.API(nil)
	_ scheduling.API = (*binder.ClientsetAPI)(nil)
)
