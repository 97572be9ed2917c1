package scheduling_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/zones"
)

// scheduler is a minimal scheduler around a VolumeBinder: it filters all
// nodes in parallel, takes the first fitting node from a start position,
// reserves and binds, and on a failed Bind starts the cycle again.
type scheduler struct {
	t     *testing.T
	ctx   context.Context
	srv   *bindertest.Server
	vb    *scheduling.VolumeBinder
	nodes []*v1.Node
	// beforeBind, when set, runs between Assume and Bind.
	beforeBind func(p *v1.Pod, pv *scheduling.PodVolumes)
}

// filter runs Find on every node and returns the results by node index.
func (s *scheduler) filter(p *v1.Pod) ([]*scheduling.PodVolumes, [][]scheduling.Reason) {
	s.t.Helper()
	vols := make([]*scheduling.PodVolumes, len(s.nodes))
	reasons := make([][]scheduling.Reason, len(s.nodes))
	var g errgroup.Group
	for i, n := range s.nodes {
		g.Go(func() error {
			var err error
			vols[i], reasons[i], err = s.vb.Find(s.ctx, p, n)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		s.t.Fatalf("Find(%s): %v", p.Name, err)
	}
	return vols, reasons
}

// schedule places p and returns its node and the number of cycles used.
func (s *scheduler) schedule(p *v1.Pod, start int) (*v1.Node, int) {
	s.t.Helper()
	for cycle := 1; cycle <= 3; cycle++ {
		vols, reasons := s.filter(p)
		chosen := -1
		for k := range s.nodes {
			if i := (start + k) % len(s.nodes); len(reasons[i]) == 0 {
				chosen = i
				break
			}
		}
		if chosen < 0 {
			s.t.Fatalf("pod %s fits no node: %v", p.Name, reasons)
		}
		n, pv := s.nodes[chosen], vols[chosen]
		if _, err := s.vb.Assume(s.ctx, p, n.Name, pv); err != nil {
			s.t.Fatalf("Assume(%s, %s): %v", p.Name, n.Name, err)
		}
		if s.beforeBind != nil {
			s.beforeBind(p, pv)
		}
		err := s.vb.Bind(s.ctx, p, pv)
		if err == nil {
			return n, cycle
		}
		if !apierrors.IsConflict(err) {
			s.t.Fatalf("Bind(%s, %s): %v", p.Name, n.Name, err)
		}
		s.t.Logf("Bind(%s, %s) failed, retrying: %v", p.Name, n.Name, err)
		for _, b := range pv.StaticBindings {
			if s.vb.IsAssumed("", b.PV.Name) {
				s.t.Errorf("volume %s still assumed after a failed Bind", b.PV.Name)
			}
		}
	}
	s.t.Fatalf("pod %s not bound after 3 cycles", p.Name)
	return nil, 0
}

// TestEndToEndPrebinding runs the Binder on the in-memory API with a
// StatefulSet-like set of pods in three zones: each pod has a
// WaitForFirstConsumer claim for a zonal pre-provisioned volume and one for
// a local volume. Every claim must end up Bound to a volume usable from the
// pod's node, and a Conflict injected into the first pre-binding write is
// reverted and retried.
func TestEndToEndPrebinding(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const replicas = 6
	zoneNames := []string{"a", "b", "c"}
	var objs []runtime.Object
	objs = append(objs,
		class("zonal", true, volume.NotSupportedProvisioner),
		class("local", true, volume.NotSupportedProvisioner))
	var nodes []*v1.Node
	for _, z := range zoneNames {
		for j := range 2 {
			n := node(fmt.Sprintf("node-%s-%d", z, j), z)
			nodes = append(nodes, n)
			objs = append(objs, n,
				pv(fmt.Sprintf("local-%s", n.Name), "5Gi", "local", v1.LabelHostname, n.Name),
				pv(fmt.Sprintf("zonal-%s-%d", z, j), fmt.Sprintf("%dGi", 10+j), "zonal", zones.ZoneLabel, z))
		}
	}
	var pods []*v1.Pod
	for i := range replicas + 1 {
		data, local := fmt.Sprintf("data-web-%d", i), fmt.Sprintf("local-web-%d", i)
		objs = append(objs, pvc(data, "10Gi", "zonal"), pvc(local, "1Gi", "local"))
		pods = append(pods, pod(fmt.Sprintf("web-%d", i), data, local))
	}

	srv := bindertest.New()
	if err := srv.Seed(ctx, objs...); err != nil {
		t.Fatal(err)
	}
	b, err := binder.New(srv, binder.Config{ResyncPeriod: -1})
	if err != nil {
		t.Fatal(err)
	}
	vb, err := scheduling.New(srv, classLister(t, objs...), scheduling.Config{BindTimeout: wait.ForeverTestTimeout})
	if err != nil {
		t.Fatal(err)
	}
	runBinders(ctx, t, srv, b, vb)

	injected := false
	s := &scheduler{t: t, ctx: ctx, srv: srv, vb: vb, nodes: nodes}
	s.beforeBind = func(p *v1.Pod, pv *scheduling.PodVolumes) {
		if !injected && len(pv.StaticBindings) > 0 {
			injected = true
			srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindVolume,
				Name: pv.StaticBindings[0].PV.Name, Conflict: true, Times: 1})
		}
	}
	placed := map[string]*v1.Node{}
	for i, p := range pods[:replicas] {
		n, cycles := s.schedule(p, i)
		placed[p.Name] = n
		if want := map[bool]int{true: 2, false: 1}[i == 0]; cycles != want {
			t.Errorf("pod %s took %d cycles, want %d", p.Name, cycles, want)
		}
	}
	if st := srv.Stats(); st.Conflicts < 1 {
		t.Errorf("Stats().Conflicts = %d, want the injected one", st.Conflicts)
	}

	// Every claim is Bound to a volume usable from its pod's node. Bind
	// returns once claims name their volumes; wait for the status writes.
	if err := b.WaitForQuiescence(ctx); err != nil {
		t.Fatalf("WaitForQuiescence: %v", err)
	}
	volumes := map[string]*v1.PersistentVolume{}
	for _, pv := range srv.Volumes() {
		volumes[pv.Name] = pv
	}
	claims := map[string]*v1.PersistentVolumeClaim{}
	for _, c := range srv.Claims() {
		claims[c.Name] = c
	}
	for i := range replicas {
		n := placed[fmt.Sprintf("web-%d", i)]
		for _, name := range []string{fmt.Sprintf("data-web-%d", i), fmt.Sprintf("local-web-%d", i)} {
			c := claims[name]
			pv := volumes[c.Spec.VolumeName]
			if c.Status.Phase != v1.ClaimBound || pv == nil || pv.Status.Phase != v1.VolumeBound ||
				pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != c.UID {
				t.Errorf("claim %s: phase %s, volume %q not bound to it", name, c.Status.Phase, c.Spec.VolumeName)
				continue
			}
			if ok, err := zones.Matches(pv, n); !ok || err != nil {
				t.Errorf("claim %s of a pod on %s bound to volume %s that the node cannot use (%v)", name, n.Name, pv.Name, err)
			}
		}
		if got, want := claims[fmt.Sprintf("local-web-%d", i)].Spec.VolumeName, "local-"+n.Name; got != want {
			t.Errorf("pod web-%d on %s got local volume %s, want %s", i, n.Name, got, want)
		}
	}

	// Every volume is used; the extra pod fits no node.
	_, reasons := s.filter(pods[replicas])
	for i, rs := range reasons {
		if !scheduling.HasKind(rs, scheduling.NoMatchingVolume) {
			t.Errorf("extra pod on %s: reasons %v, want NoMatchingVolume", nodes[i].Name, rs)
		}
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 5*time.Second)
	defer waitCancel()
	if err := b.WaitForQuiescence(waitCtx); err != nil {
		t.Errorf("WaitForQuiescence: %v", err)
	}
}

// runBinders wires the Binder and the VolumeBinder to srv's events, runs
// the Binder until the test ends and checks that Run returned cleanly.
func runBinders(ctx context.Context, t *testing.T, srv *bindertest.Server, b *binder.Binder, vb *scheduling.VolumeBinder) {
	t.Helper()
	t.Cleanup(srv.AddEventHandler(bindertest.KindStorageClass, b.ClassHandler()))
	t.Cleanup(srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler()))
	t.Cleanup(srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler()))
	t.Cleanup(srv.AddEventHandler(bindertest.KindVolume, vb.VolumeHandler()))
	t.Cleanup(srv.AddEventHandler(bindertest.KindClaim, vb.ClaimHandler()))
	runCtx, cancel := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- b.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-runDone; err != nil {
			t.Errorf("Binder.Run: %v", err)
		}
	})
}
