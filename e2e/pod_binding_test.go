//go:build e2e && linux

package e2e

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/volbind/volbind/binder/bindertest"
)

// podBinder is the pods/binding API of kube-apiserver or bindertest.
type podBinder interface {
	createPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error)
	bind(ctx context.Context, b *v1.Binding) error
	getPod(ctx context.Context, namespace, name string) (*v1.Pod, error)
}

type realBinder struct{ f *fixture }

func (r realBinder) createPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return r.f.cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

func (r realBinder) bind(ctx context.Context, b *v1.Binding) error {
	return r.f.cs.CoreV1().Pods(b.Namespace).Bind(ctx, b, metav1.CreateOptions{})
}

func (r realBinder) getPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	return r.f.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

type memBinder struct{ srv *bindertest.Server }

func (m memBinder) createPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return m.srv.CreatePod(ctx, pod)
}
func (m memBinder) bind(ctx context.Context, b *v1.Binding) error { return m.srv.BindPod(ctx, b) }
func (m memBinder) getPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	return m.srv.GetPod(ctx, namespace, name)
}

// bindingOutcome is what a server answered to the bindings of
// TestBindPodMatchesKubeAPIServer and the pod it then holds.
type bindingOutcome struct {
	Verdicts   []verdict
	NodeName   string
	Annotation string
	Scheduled  v1.ConditionStatus
}

// TestBindPodMatchesKubeAPIServer makes the same pods/binding requests on
// kube-apiserver and on bindertest (whose BindPod volbind simulate's
// scheduler uses): a binding with another uid or a stale resourceVersion
// (Conflict on pods), a good one (spec.nodeName, the binding's
// annotations, PodScheduled True), a second one (Conflict on
// pods/binding: already assigned) and one of a missing pod (NotFound).
func TestBindPodMatchesKubeAPIServer(t *testing.T) {
	f := newFixture(t)
	run := func(t *testing.T, api podBinder) bindingOutcome {
		ctx := t.Context()
		pod, err := api.createPod(ctx, f.podUsing("web-0", "data"))
		if err != nil {
			t.Fatalf("%T: create pod: %v", api, err)
		}
		binding := func(mut func(*v1.Binding)) *v1.Binding {
			b := &v1.Binding{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: pod.Name, UID: pod.UID, Annotations: map[string]string{"example.com/by": "simulate"}},
				Target:     v1.ObjectReference{Kind: "Node", Name: "node-a"},
			}
			mut(b)
			return b
		}
		var out bindingOutcome
		for _, b := range []*v1.Binding{
			binding(func(b *v1.Binding) { b.UID = types.UID("00000000-0000-0000-0000-000000000000") }),
			binding(func(b *v1.Binding) { b.ResourceVersion = pod.ResourceVersion + "0" }), // not the pod's
			binding(func(*v1.Binding) {}),
			binding(func(b *v1.Binding) { b.Target.Name = "node-b" }),
			binding(func(b *v1.Binding) { b.Name, b.UID = "missing", "" }),
		} {
			out.Verdicts = append(out.Verdicts, verdictOf(api.bind(ctx, b)))
		}
		got, err := api.getPod(ctx, f.ns, pod.Name)
		if err != nil {
			t.Fatalf("%T: get pod: %v", api, err)
		}
		out.NodeName, out.Annotation = got.Spec.NodeName, got.Annotations["example.com/by"]
		for _, c := range got.Status.Conditions {
			if c.Type == v1.PodScheduled {
				out.Scheduled = c.Status
			}
		}
		return out
	}
	real := run(t, realBinder{f: f})
	t.Cleanup(func() {
		if err := f.cs.CoreV1().Pods(f.ns).Delete(context.Background(), "web-0", deleteNow()); err != nil {
			t.Errorf("delete pod web-0: %v", err)
		}
	})
	mem := run(t, memBinder{srv: bindertest.New()})
	if diff := cmp.Diff(real, mem); diff != "" {
		t.Errorf("bindings (-kube-apiserver +bindertest):\n%s", diff)
	}
	want := bindingOutcome{NodeName: "node-a", Annotation: "simulate", Scheduled: v1.ConditionTrue}
	if real.NodeName != want.NodeName || real.Annotation != want.Annotation || real.Scheduled != want.Scheduled || !real.Verdicts[2].OK || real.Verdicts[3].OK {
		t.Errorf("kube-apiserver: %+v, want the third binding alone accepted and the pod on node-a, annotated, PodScheduled True", real)
	}
	t.Logf("kube-apiserver: %+v", real)
}
