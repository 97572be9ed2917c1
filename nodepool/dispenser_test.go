package nodepool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// dispenserFixture is a fake API server with the nodes, and a Dispenser
// that has published a round computed from them.
type dispenserFixture struct {
	cs    *fake.Clientset
	d     *Dispenser
	round *Round
}

func newDispenserFixture(t *testing.T, nodes []*v1.Node, pods []*v1.Pod) *dispenserFixture {
	t.Helper()
	objs := make([]runtime.Object, 0, len(nodes))
	for _, n := range nodes {
		objs = append(objs, n.DeepCopy())
	}
	cs := fake.NewClientset(objs...)
	s := mustNew(t, Config{})
	r := mustCompute(t, s, nodes, pods)
	d := NewDispenser(ClientsetNodes{Client: cs})
	d.Publish(r)
	return &dispenserFixture{cs: cs, d: d, round: r}
}

func (f *dispenserFixture) node(t *testing.T, name string) *v1.Node {
	t.Helper()
	n, err := f.cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node %s: %v", name, err)
	}
	return n
}

func (f *dispenserFixture) writes() int {
	n := 0
	for _, a := range f.cs.Actions() {
		if a.GetVerb() == "update" {
			n++
		}
	}
	return n
}

func failUpdates(cs *fake.Clientset, times int, err error) {
	var mu sync.Mutex
	cs.PrependReactor("update", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if times == 0 {
			return false, nil, nil
		}
		times--
		return true, nil, err
	})
}

var errBoom = errors.New("boom")

func publishEmpty(_ *testing.T, f *dispenserFixture) { f.d.Publish(&Round{}) }

func conflict(name string) error {
	return apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, name, errors.New("changed"))
}

// TestDispenserRequest ports kip's TestDispenseNoNodes,
// TestDispenseNoAvailableNodes and TestDispenseAvailableNode, and adds the
// cases kip did not cover.
func TestDispenserRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		nodes  []*v1.Node
		pod    *v1.Pod
		other  []*v1.Pod
		setup  func(*testing.T, *dispenserFixture)
		want   Status
		node   string
		err    error
		writes int
	}{
		// kip publishes an empty binding map in these two.
		{name: "no nodes: no binding", pod: newPod("p", instance("a")), setup: publishEmpty, want: StatusNoBinding},
		{name: "only a claimed node: no binding", nodes: []*v1.Node{newNode("n", nodeType("a"), phase(PhaseClaimed))},
			pod: newPod("p", instance("a")), setup: publishEmpty, want: StatusNoBinding},
		{name: "unbindable pod: no binding", nodes: []*v1.Node{newNode("n", nodeType("a"))}, pod: newPod("q", sel(InstanceTypeLabel, "b"), affinity(req("x", v1.NodeSelectorOpExists))),
			other: []*v1.Pod{newPod("p", instance("a"))}, want: StatusNoBinding},
		{name: "available bound node is claimed", nodes: []*v1.Node{newNode("n", nodeType("a"))},
			pod: newPod("p", instance("a")), want: StatusBound, node: "n", writes: 1},
		{name: "node still booting: retry", nodes: []*v1.Node{newNode("n", nodeType("a"), phase(PhaseCreating))},
			pod: newPod("p", instance("a")), want: StatusRetry},
		{name: "node booted for the pod: retry", pod: newPod("p", instance("a")), want: StatusRetry},
		{name: "node gone: retry", nodes: []*v1.Node{newNode("n", nodeType("a"))}, pod: newPod("p", instance("a")),
			setup: func(t *testing.T, f *dispenserFixture) {
				_ = f.cs.CoreV1().Nodes().Delete(context.Background(), "n", metav1.DeleteOptions{})
			}, want: StatusRetry},
		{name: "node taken by another pod meanwhile: retry", nodes: []*v1.Node{newNode("n", nodeType("a"))}, pod: newPod("p", instance("a")),
			setup: func(t *testing.T, f *dispenserFixture) {
				n := f.node(t, "n")
				n.Annotations[BoundPodAnnotation] = "default/other"
				_, _ = f.cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
				f.cs.ClearActions()
			}, want: StatusRetry},
		{name: "write fails: retry with error", nodes: []*v1.Node{newNode("n", nodeType("a"))}, pod: newPod("p", instance("a")),
			setup: func(t *testing.T, f *dispenserFixture) { failUpdates(f.cs, 1, errBoom) }, want: StatusRetry, err: errBoom, writes: 1},
		{name: "conflict is retried", nodes: []*v1.Node{newNode("n", nodeType("a"))}, pod: newPod("p", instance("a")),
			setup: func(t *testing.T, f *dispenserFixture) { failUpdates(f.cs, 1, conflict("n")) }, want: StatusBound, node: "n", writes: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newDispenserFixture(t, tc.nodes, append([]*v1.Pod{tc.pod}, tc.other...))
			if tc.setup != nil {
				tc.setup(t, f)
			}
			before := map[string]*v1.Node{}
			for _, n := range tc.nodes {
				if got, err := f.cs.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{}); err == nil {
					before[n.Name] = got
				}
			}
			f.cs.ClearActions()
			reply, err := f.d.Request(context.Background(), tc.pod)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("Request() error = %v, want %v", err, tc.err)
			}
			if reply.Status != tc.want {
				t.Fatalf("Request() status = %v, want %v", reply.Status, tc.want)
			}
			if got := f.writes(); got != tc.writes {
				t.Errorf("writes = %d, want %d", got, tc.writes)
			}
			if tc.want != StatusBound {
				if reply.Node != nil {
					t.Errorf("Request() node = %v, want nil", reply.Node.Name)
				}
				for name, n := range before {
					if got := f.node(t, name); got.ResourceVersion != n.ResourceVersion {
						t.Errorf("node %s written: %v", name, got.Annotations)
					}
				}
				return
			}
			if reply.Node.Name != tc.node || NodePhase(reply.Node) != PhaseClaimed {
				t.Errorf("Request() node = %s in phase %s, want %s claimed", reply.Node.Name, NodePhase(reply.Node), tc.node)
			}
			stored := f.node(t, tc.node)
			if NodePhase(stored) != PhaseClaimed {
				t.Errorf("stored phase = %s, want Claimed", NodePhase(stored))
			}
			if got, _ := BoundPod(stored); got != podKey(tc.pod) {
				t.Errorf("stored binding = %v, want %v", got, podKey(tc.pod))
			}
			// A second request answers the same without writing.
			f.cs.ClearActions()
			again, err := f.d.Request(context.Background(), tc.pod)
			if err != nil || again.Status != StatusBound || again.Node.Name != tc.node || f.writes() != 0 {
				t.Errorf("second Request() = %v %v, %d writes; want the same node, no write", again, err, f.writes())
			}
		})
	}
}

func TestDispenserRequestWaitsForPublish(t *testing.T) {
	t.Parallel()
	d := NewDispenser(ClientsetNodes{Client: fake.NewClientset()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := d.Request(ctx, newPod("p"))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Request() error = %v, want context.Canceled", err)
		}
	case <-time.After(wait30s):
		t.Fatal("Request did not return after ctx was cancelled")
	}

	// A Request waiting for the first round is answered once it is
	// published.
	go func() {
		r, err := d.Request(context.Background(), newPod("p"))
		if err == nil && r.Status != StatusNoBinding {
			err = fmt.Errorf("status %v, want NoBinding", r.Status)
		}
		done <- err
	}()
	d.Publish(&Round{})
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Request(): %v", err)
		}
	case <-time.After(wait30s):
		t.Fatal("Request did not return after Publish")
	}
}

const wait30s = 30 * time.Second

func TestDispenserReturn(t *testing.T) {
	t.Parallel()
	pod := newPod("p", instance("a"))
	tests := []struct {
		name      string
		unused    bool
		node      string
		ctx       func() context.Context
		fail      error
		wantErr   error
		wantPhase Phase
		wantBound bool // binding annotation still there
		forgotten bool // dispenser forgot the pod's binding
	}{
		{name: "unused node goes back to the pool", unused: true, node: "n", wantPhase: PhaseAvailable, forgotten: true},
		{name: "used node goes to cleanup", node: "n", wantPhase: PhaseCleaning, wantBound: true, forgotten: true},
		{name: "empty name", node: "", wantErr: ErrInvalidInput, wantPhase: PhaseClaimed, wantBound: true},
		{name: "cancelled context", node: "n", ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, wantErr: context.Canceled, wantPhase: PhaseClaimed, wantBound: true},
		{name: "failed write leaves everything", unused: true, node: "n", fail: errBoom, wantErr: errBoom, wantPhase: PhaseClaimed, wantBound: true},
		{name: "unknown node", node: "missing", wantErr: errNotFound, wantPhase: PhaseClaimed, wantBound: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newDispenserFixture(t, []*v1.Node{newNode("n", nodeType("a"))}, []*v1.Pod{pod})
			if r, err := f.d.Request(context.Background(), pod); err != nil || r.Status != StatusBound {
				t.Fatalf("Request() = %v, %v", r, err)
			}
			if tc.fail != nil {
				failUpdates(f.cs, 1, tc.fail)
			}
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			err := f.d.Return(ctx, tc.node, tc.unused)
			switch {
			case tc.wantErr == errNotFound:
				if !apierrors.IsNotFound(err) {
					t.Errorf("Return() error = %v, want NotFound", err)
				}
			case !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil):
				t.Errorf("Return() error = %v, want %v", err, tc.wantErr)
			}
			n := f.node(t, "n")
			if NodePhase(n) != tc.wantPhase {
				t.Errorf("phase = %s, want %s", NodePhase(n), tc.wantPhase)
			}
			if _, bound := BoundPod(n); bound != tc.wantBound {
				t.Errorf("binding annotation present = %v, want %v", bound, tc.wantBound)
			}
			if _, ok := f.d.Binding(podKey(pod)); ok == tc.forgotten {
				t.Errorf("dispenser binding present = %v, want %v", ok, !tc.forgotten)
			}
			if tc.wantPhase == PhaseCleaning {
				// The next round stops the used node.
				s := mustNew(t, Config{})
				pod := pod.DeepCopy()
				pod.Status.Phase = v1.PodSucceeded
				r := mustCompute(t, s, []*v1.Node{n}, []*v1.Pod{pod})
				if len(r.Stop) != 1 || r.Stop[0].Name != "n" {
					t.Errorf("next round stops %v, want n", names(r.Stop))
				}
			}
		})
	}
}

// errNotFound marks a case expecting an API NotFound error.
var errNotFound = errors.New("not found")

func TestDispenserConcurrent(t *testing.T) {
	t.Parallel()
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range 20 {
		nodes = append(nodes, newNode(fmt.Sprintf("n%02d", i), nodeType("a")))
		pods = append(pods, newPod(fmt.Sprintf("p%02d", i), instance("a")))
	}
	f := newDispenserFixture(t, nodes, pods)
	var wg sync.WaitGroup
	claimed := make([]string, len(pods))
	for i, p := range pods {
		wg.Go(func() {
			for range 3 {
				r, err := f.d.Request(context.Background(), p)
				if err != nil || r.Status != StatusBound {
					t.Errorf("Request(%s) = %v, %v", p.Name, r.Status, err)
					return
				}
				claimed[i] = r.Node.Name
			}
		})
	}
	wg.Go(func() {
		for range 10 {
			f.d.Publish(f.round)
		}
	})
	wg.Wait()
	seen := map[string]bool{}
	for i, n := range claimed {
		if n == "" || seen[n] {
			t.Errorf("pod %d claimed %q (seen before: %v)", i, n, seen[n])
		}
		seen[n] = true
	}
	if got, ok := f.d.Binding(types.NamespacedName{Namespace: "default", Name: "p00"}); !ok || got == "" {
		t.Errorf("Binding(p00) = %q, %v", got, ok)
	}
}

func TestStatusString(t *testing.T) {
	t.Parallel()
	for s, want := range map[Status]string{StatusRetry: "Retry", StatusNoBinding: "NoBinding", StatusBound: "Bound", Status(9): "Status(9)"} {
		if got := s.String(); got != want {
			t.Errorf("Status(%d).String() = %q, want %q", int(s), got, want)
		}
	}
}
