package nodepool

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// NodeAPI is what the Dispenser needs from the API server.
type NodeAPI interface {
	GetNode(ctx context.Context, name string) (*v1.Node, error)
	UpdateNode(ctx context.Context, node *v1.Node) (*v1.Node, error)
}

// Status is the kind of answer to a Request.
type Status int

// Request answers.
const (
	// StatusRetry: the pod has a binding but its node cannot be handed out
	// yet (still booting, gone, or the claim write failed); ask again.
	StatusRetry Status = iota
	// StatusNoBinding: the pod has no binding yet; it is new, or no node
	// can be found or booted for it (see Round.Unbound).
	StatusNoBinding
	// StatusBound: Reply.Node is the pod's node, now PhaseClaimed.
	StatusBound
)

// String returns the status name.
func (s Status) String() string {
	switch s {
	case StatusRetry:
		return "Retry"
	case StatusNoBinding:
		return "NoBinding"
	case StatusBound:
		return "Bound"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Reply answers a Request.
type Reply struct {
	Status Status
	// Node is the claimed node when Status is StatusBound; owned by the
	// caller.
	Node *v1.Node
}

// Dispenser hands bound nodes to pods on the dispatch path. The pool loop
// publishes each Round's bindings; Request and Return call the NodeAPI
// directly, so nothing runs in the background and nothing blocks beyond
// ctx. A failed write leaves the Dispenser as it was. It is safe for
// concurrent use.
type Dispenser struct {
	api NodeAPI

	// mu guards bindings, booting and published.
	mu       sync.Mutex
	bindings map[types.NamespacedName]string
	// booting are the pods whose node is being booted for them.
	booting   map[types.NamespacedName]bool
	published bool
	// ready is closed by the first Publish.
	ready chan struct{}
}

// NewDispenser returns a Dispenser with no bindings; Request waits for the
// first Publish.
func NewDispenser(api NodeAPI) *Dispenser {
	return &Dispenser{api: api, bindings: map[types.NamespacedName]string{}, booting: map[types.NamespacedName]bool{}, ready: make(chan struct{})}
}

// Publish replaces the bindings with the round's. A pod whose node the
// round boots gets StatusRetry until a later round binds it. The Round is
// not kept.
func (d *Dispenser) Publish(r *Round) {
	m := r.BindingMap()
	booting := make(map[types.NamespacedName]bool)
	for _, b := range r.Boots {
		if b.Pod != nil {
			booting[podKey(b.Pod)] = true
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bindings, d.booting = m, booting
	if !d.published {
		d.published = true
		close(d.ready)
	}
}

// Binding returns the node bound to pod in the last published round.
func (d *Dispenser) Binding(pod types.NamespacedName) (string, bool) {
	n, ok, _ := d.lookup(pod)
	return n, ok
}

func (d *Dispenser) lookup(pod types.NamespacedName) (node string, ok, booting bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	node, ok = d.bindings[pod]
	return node, ok, d.booting[pod]
}

// Request asks for pod's node. It blocks until the first Publish or until
// ctx is done (then it returns ctx's error). It answers StatusNoBinding when
// the pod has no binding (StatusRetry when its node is being booted),
// StatusBound with the node after writing the node
// PhaseClaimed (a repeated Request for a node this pod already claimed
// answers the same), and StatusRetry otherwise; a failed write gives
// StatusRetry and the error.
func (d *Dispenser) Request(ctx context.Context, pod *v1.Pod) (Reply, error) {
	select {
	case <-d.ready:
	case <-ctx.Done():
	}
	if ctx.Err() != nil { // also when both are ready
		return Reply{}, fmt.Errorf("nodepool: request node for pod %s: %w", klog.KObj(pod), context.Cause(ctx))
	}
	key := podKey(pod)
	name, ok, booting := d.lookup(key)
	if !ok {
		if booting {
			return Reply{Status: StatusRetry}, nil
		}
		return Reply{Status: StatusNoBinding}, nil
	}
	var reply Reply
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		reply = Reply{}
		node, err := d.api.GetNode(ctx, name)
		if err != nil {
			return err
		}
		bound, hasBound := BoundPod(node)
		if hasBound && bound != key {
			return nil
		}
		switch NodePhase(node) {
		case PhaseClaimed:
			if hasBound {
				reply = Reply{Status: StatusBound, Node: node}
			}
			return nil
		case PhaseAvailable:
		default:
			return nil
		}
		node = node.DeepCopy()
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		node.Annotations[PhaseAnnotation] = string(PhaseClaimed)
		node.Annotations[BoundPodAnnotation] = key.String()
		node, err = d.api.UpdateNode(ctx, node)
		if err != nil {
			return err
		}
		reply = Reply{Status: StatusBound, Node: node}
		return nil
	})
	switch {
	case apierrors.IsNotFound(err):
		return Reply{Status: StatusRetry}, nil
	case err != nil:
		return Reply{Status: StatusRetry}, fmt.Errorf("nodepool: claim node %s for pod %s: %w", name, klog.KObj(pod), err)
	}
	return reply, nil
}

// Return hands a node back. An unused node is put back in the pool
// (PhaseAvailable, binding cleared) and the pod's binding forgotten until
// the next round; a used node goes to cleanup (PhaseCleaning, binding kept
// so the cleaner knows which pod ran there), and the next round lists it in
// Round.Stop. It returns the write's error, or ctx's.
func (d *Dispenser) Return(ctx context.Context, nodeName string, unused bool) error {
	if nodeName == "" {
		return fmt.Errorf("%w: return of a node with an empty name", ErrInvalidInput)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nodepool: return node %s: %w", nodeName, context.Cause(ctx))
	}
	var pod types.NamespacedName
	var hadPod bool
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := d.api.GetNode(ctx, nodeName)
		if err != nil {
			return err
		}
		pod, hadPod = BoundPod(node)
		node = node.DeepCopy()
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		if unused {
			node.Annotations[PhaseAnnotation] = string(PhaseAvailable)
			delete(node.Annotations, BoundPodAnnotation)
		} else {
			node.Annotations[PhaseAnnotation] = string(PhaseCleaning)
		}
		_, err = d.api.UpdateNode(ctx, node)
		return err
	})
	if err != nil {
		return fmt.Errorf("nodepool: return node %s: %w", nodeName, err)
	}
	if hadPod {
		d.mu.Lock()
		if d.bindings[pod] == nodeName {
			delete(d.bindings, pod)
		}
		d.mu.Unlock()
	}
	return nil
}

// ClientsetNodes adapts a clientset to NodeAPI.
type ClientsetNodes struct {
	Client kubernetes.Interface
}

var _ NodeAPI = ClientsetNodes{}

// GetNode gets the node from the API server.
func (c ClientsetNodes) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// UpdateNode updates the node on the API server.
func (c ClientsetNodes) UpdateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
}
