package binder

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
)

// fullPod is a pod with everything TrimPod drops and keeps: a claim, a
// generic ephemeral volume and a host path.
func fullPod() *v1.Pod {
	pod := podUsing("web-0", "data-web-0", "node1", v1.PodRunning)
	pod.Labels = map[string]string{"app": "web"}
	pod.Annotations = map[string]string{"big": "value"}
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	pod.Spec.Volumes = append(pod.Spec.Volumes,
		v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
			VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}}}}}},
		v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/x"}}})
	pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", Image: "busybox", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
	return pod
}

// TestPodClaimKeys: the claims of a pod, including the one of a generic
// ephemeral volume ("<pod>-<volume>"), as Kubernetes' PodPVCIndexFunc.
func TestPodClaimKeys(t *testing.T) {
	t.Parallel()
	keys, err := PodClaimKeys(fullPod())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"default/data-web-0", "default/web-0-scratch"}; !slices.Equal(keys, want) {
		t.Errorf("PodClaimKeys = %v, want %v", keys, want)
	}
	if keys, _ := PodClaimKeys(&v1.Node{}); len(keys) != 0 {
		t.Errorf("PodClaimKeys(node) = %v, want none", keys)
	}
}

// TestTrimPod: the trimmed pod keeps what the Binder reads (claims,
// ephemeral volumes, node, phase, container states, deletion) and nothing
// else; its claim keys and termination are those of the full pod.
func TestTrimPod(t *testing.T) {
	t.Parallel()
	full := fullPod()
	out, err := TrimPod(full)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := out.(*v1.Pod)
	if trimmed.Labels != nil || trimmed.Annotations != nil || trimmed.ManagedFields != nil || trimmed.Spec.Containers != nil {
		t.Errorf("trimmed pod keeps labels %v, annotations %v, managedFields %v or containers %v", trimmed.Labels, trimmed.Annotations, trimmed.ManagedFields, trimmed.Spec.Containers)
	}
	fullKeys, _ := PodClaimKeys(full)
	trimmedKeys, _ := PodClaimKeys(trimmed)
	if diff := cmp.Diff(fullKeys, trimmedKeys); diff != "" {
		t.Errorf("claim keys differ (-full +trimmed):\n%s", diff)
	}
	if trimmed.Spec.NodeName != "node1" || trimmed.Status.Phase != v1.PodRunning || podTerminated(trimmed) != podTerminated(full) {
		t.Errorf("trimmed node %q, phase %s, terminated %v; want node1, Running, %v", trimmed.Spec.NodeName, trimmed.Status.Phase, podTerminated(trimmed), podTerminated(full))
	}
	deleting := full.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	deleting.Status.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}
	tr, _ := TrimPod(deleting)
	if !podTerminated(deleting) || !podTerminated(tr.(*v1.Pod)) {
		t.Errorf("deleted pod with terminated containers: terminated %v, trimmed %v; want both true", podTerminated(deleting), podTerminated(tr.(*v1.Pod)))
	}
	if node, _ := TrimPod(&v1.Node{}); node == nil {
		t.Error("TrimPod(node) = nil, want the node unchanged")
	}
}

// TestNewForClientsetPods: NewForClientset trims and indexes the factory's
// pod informer, and the Binder finds a claim's pods through it.
func TestNewForClientsetPods(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset(fullPod(), podUsing("other", "other-claim", "", v1.PodPending))
	f := informers.NewSharedInformerFactory(cs, 0)
	b, err := NewForClientset(t.Context(), cs, f, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), b.cfg.Synced...) {
		t.Fatal("informers did not sync")
	}
	pods, err := b.cfg.Pods.PodsUsingClaim("default", "web-0-scratch")
	if err != nil || len(pods) != 1 || pods[0].Name != "web-0" {
		t.Fatalf("PodsUsingClaim(web-0-scratch) = %v, %v; want [web-0]", pods, err)
	}
	if pods[0].Labels != nil {
		t.Errorf("informer pod keeps labels %v, want it trimmed", pods[0].Labels)
	}
	names, err := b.activePodsUsing("default", "data-web-0")
	if err != nil || !slices.Equal(names, []string{"default/web-0"}) {
		t.Errorf("activePodsUsing = %v, %v; want [default/web-0]", names, err)
	}
}
