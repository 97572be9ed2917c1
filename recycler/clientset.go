package recycler

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// ClientsetPods is the PodAPI of a client-go clientset.
type ClientsetPods struct {
	cs kubernetes.Interface
}

var _ PodAPI = (*ClientsetPods)(nil)

// NewClientsetPods returns the PodAPI that calls cs. It makes no call.
func NewClientsetPods(cs kubernetes.Interface) *ClientsetPods {
	return &ClientsetPods{cs: cs}
}

// NewForClientset returns a Recycler whose pods are managed through cs.
func NewForClientset(cs kubernetes.Interface, cfg Config) (*Recycler, error) {
	if cs == nil {
		return nil, errors.New("recycler: clientset is nil")
	}
	return New(NewClientsetPods(cs), cfg)
}

// CreatePod creates pod in its namespace.
func (c *ClientsetPods) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return c.cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// GetPod reads the pod from the API server (not a cache).
func (c *ClientsetPods) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	return c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// DeletePod deletes the pod with the default grace period.
func (c *ClientsetPods) DeletePod(ctx context.Context, namespace, name string) error {
	return c.cs.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

// WatchPod watches the pods of namespace with the field selector
// metadata.name=<name>. Without a resourceVersion the API server first sends
// the pod's current state as an Added event. The watch ends when stopped or
// when ctx is done.
func (c *ClientsetPods) WatchPod(ctx context.Context, namespace, name string) (watch.Interface, error) {
	return c.cs.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
}
