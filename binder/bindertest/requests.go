package bindertest

import (
	"context"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Every request method blocks only for injected latency, returns ctx's
// error when ctx is done before it starts, never retains or modifies its
// argument, and returns a deep copy that the caller owns (or, with
// Config.SharedResults, the stored version itself, read-only).

// result returns what a request returns for the stored version o: a deep
// copy, or o itself with Config.SharedResults.
func (s *Server) result(o object, err error) (object, error) {
	if err != nil || s.sharedResults {
		return o, err
	}
	return deepCopy(o), nil
}

// as returns o as T.
func as[T object](o object, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return o.(T), nil
}

// generic validates an untyped argument of a generic request.
func generic(obj runtime.Object) (object, Kind, error) {
	o, k, ok := asObject(obj)
	if !ok {
		if k, known := kindOf(obj); known {
			return nil, 0, badRequest("nil %s", k)
		}
		return nil, 0, badRequest("unsupported object type %T", obj)
	}
	return o, k, nil
}

// Create stores a new object of any supported kind (*storagev1.StorageClass,
// *v1.Node, *v1.PersistentVolume, *v1.PersistentVolumeClaim, *v1.Pod) as
// kube-apiserver does: it sets uid, creationTimestamp, resourceVersion and,
// when name is empty, a name from generateName; it applies defaults and
// drops the status sent (except a Node's). A taken name fails with
// AlreadyExists.
func (s *Server) Create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	o, k, err := generic(obj)
	if err != nil {
		return nil, err
	}
	return s.result(s.create(ctx, k, o))
}

// Update writes obj's metadata and spec; the stored status is kept. A
// stale resourceVersion fails with Conflict, a missing object with
// NotFound, a change of an immutable field with Invalid.
func (s *Server) Update(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	o, k, err := generic(obj)
	if err != nil {
		return nil, err
	}
	return s.result(s.update(ctx, k, o, false))
}

// UpdateStatus writes obj's status subresource; the stored metadata and
// spec are kept. A stale resourceVersion fails with Conflict. StorageClasses
// have no status: MethodNotSupported.
func (s *Server) UpdateStatus(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	o, k, err := generic(obj)
	if err != nil {
		return nil, err
	}
	return s.result(s.update(ctx, k, o, true))
}

// Delete deletes an object (namespace is ignored for cluster-scoped kinds).
// An object with finalizers gets deletionTimestamp instead and is removed
// when an update removes its last finalizer. A missing object fails with
// NotFound.
func (s *Server) Delete(ctx context.Context, kind Kind, namespace, name string) error {
	if !kind.namespaced() {
		namespace = ""
	}
	return s.delete(ctx, kind, namespace, name)
}

// Get returns an object or a NotFound error (namespace is ignored for
// cluster-scoped kinds).
func (s *Server) Get(ctx context.Context, kind Kind, namespace, name string) (runtime.Object, error) {
	if !kind.namespaced() {
		namespace = ""
	}
	return s.result(s.get(ctx, kind, namespace, name))
}

// CreateVolume creates pv (see Create).
func (s *Server) CreateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	return as[*v1.PersistentVolume](s.result(s.create(ctx, KindVolume, pv)))
}

// UpdateVolume writes pv's metadata and spec (see Update).
func (s *Server) UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	return as[*v1.PersistentVolume](s.result(s.update(ctx, KindVolume, pv, false)))
}

// UpdateVolumeStatus writes pv's status (see UpdateStatus). A phase change
// sets status.lastPhaseTransitionTime unless the request changes it.
func (s *Server) UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	return as[*v1.PersistentVolume](s.result(s.update(ctx, KindVolume, pv, true)))
}

// DeleteVolume deletes the volume (see Delete).
func (s *Server) DeleteVolume(ctx context.Context, name string) error {
	return s.delete(ctx, KindVolume, "", name)
}

// GetVolume returns the volume or a NotFound error.
func (s *Server) GetVolume(ctx context.Context, name string) (*v1.PersistentVolume, error) {
	return as[*v1.PersistentVolume](s.result(s.get(ctx, KindVolume, "", name)))
}

// CreateClaim creates pvc (see Create).
func (s *Server) CreateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	return as[*v1.PersistentVolumeClaim](s.result(s.create(ctx, KindClaim, pvc)))
}

// UpdateClaim writes pvc's metadata and spec (see Update). As in
// kube-apiserver, the spec is immutable except volumeName (may be set once)
// and, for a bound claim, the storage request (may grow) and
// volumeAttributesClassName.
func (s *Server) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	return as[*v1.PersistentVolumeClaim](s.result(s.update(ctx, KindClaim, pvc, false)))
}

// UpdateClaimStatus writes pvc's status (see UpdateStatus).
func (s *Server) UpdateClaimStatus(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	return as[*v1.PersistentVolumeClaim](s.result(s.update(ctx, KindClaim, pvc, true)))
}

// DeleteClaim deletes the claim (see Delete).
func (s *Server) DeleteClaim(ctx context.Context, namespace, name string) error {
	return s.delete(ctx, KindClaim, namespace, name)
}

// GetClaim returns the claim or a NotFound error.
func (s *Server) GetClaim(ctx context.Context, namespace, name string) (*v1.PersistentVolumeClaim, error) {
	return as[*v1.PersistentVolumeClaim](s.result(s.get(ctx, KindClaim, namespace, name)))
}

// CreateClass creates the StorageClass sc (see Create). Unset reclaimPolicy
// and volumeBindingMode get the API's defaults (Delete, Immediate).
func (s *Server) CreateClass(ctx context.Context, sc *storagev1.StorageClass) (*storagev1.StorageClass, error) {
	return as[*storagev1.StorageClass](s.result(s.create(ctx, KindStorageClass, sc)))
}

// GetClass returns the StorageClass or a NotFound error.
func (s *Server) GetClass(ctx context.Context, name string) (*storagev1.StorageClass, error) {
	return as[*storagev1.StorageClass](s.result(s.get(ctx, KindStorageClass, "", name)))
}

// CreateNode creates node (see Create); its status is kept, as the kubelet
// registers a node with it.
func (s *Server) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return as[*v1.Node](s.result(s.create(ctx, KindNode, node)))
}

// GetNode returns the node or a NotFound error.
func (s *Server) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return as[*v1.Node](s.result(s.get(ctx, KindNode, "", name)))
}

// CreatePod creates pod (see Create) with phase Pending. It returns an
// AlreadyExists error when the name is taken.
func (s *Server) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return as[*v1.Pod](s.result(s.create(ctx, KindPod, pod)))
}

// GetPod returns the pod or a NotFound error.
func (s *Server) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	return as[*v1.Pod](s.result(s.get(ctx, KindPod, namespace, name)))
}

// UpdatePodStatus writes pod's status (see UpdateStatus); tests use it to
// play the kubelet (e.g. set phase Succeeded).
func (s *Server) UpdatePodStatus(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	return as[*v1.Pod](s.result(s.update(ctx, KindPod, pod, true)))
}

// DeletePod deletes the pod or returns a NotFound error. Without a kubelet
// there is no graceful termination: a pod without finalizers is removed at
// once.
func (s *Server) DeletePod(ctx context.Context, namespace, name string) error {
	return s.delete(ctx, KindPod, namespace, name)
}

// WatchPod watches the one pod namespace/name as a client watching with the
// field selector metadata.name does: the pod's current state (if it exists)
// arrives first as an Added event, then its changes. The watch ends when
// stopped or when ctx is done; the caller must call Stop or cancel ctx.
func (s *Server) WatchPod(ctx context.Context, namespace, name string) (watch.Interface, error) {
	return s.Watch(ctx, KindPod, metav1.ListOptions{
		FieldSelector: fields.Set{"metadata.namespace": namespace, "metadata.name": name}.String(),
	})
}
