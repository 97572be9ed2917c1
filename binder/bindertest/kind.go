package bindertest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind names one of the object kinds the Server holds.
type Kind int

// The kinds a Server holds. Server.Objects lists them in this order.
const (
	// KindStorageClass is storage.k8s.io/v1 StorageClass (cluster-scoped).
	KindStorageClass Kind = iota + 1
	// KindNode is v1 Node (cluster-scoped).
	KindNode
	// KindVolume is v1 PersistentVolume (cluster-scoped).
	KindVolume
	// KindClaim is v1 PersistentVolumeClaim (namespaced).
	KindClaim
	// KindPod is v1 Pod (namespaced).
	KindPod
)

// numKinds sizes the per-kind arrays; index 0 is unused.
const numKinds = int(KindPod) + 1

// allKinds lists every kind in Server.Objects order.
func allKinds() []Kind {
	return []Kind{KindStorageClass, KindNode, KindVolume, KindClaim, KindPod}
}

// String returns the kind's name as in an object's "kind" field, e.g.
// "PersistentVolume".
func (k Kind) String() string {
	switch k {
	case KindStorageClass:
		return "StorageClass"
	case KindNode:
		return "Node"
	case KindVolume:
		return "PersistentVolume"
	case KindClaim:
		return "PersistentVolumeClaim"
	case KindPod:
		return "Pod"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Resource returns the kind's API resource name, e.g. "persistentvolumes",
// as API errors name it.
func (k Kind) Resource() string {
	return k.groupResource().Resource
}

func (k Kind) valid() bool { return k >= KindStorageClass && k <= KindPod }

func (k Kind) groupResource() schema.GroupResource {
	switch k {
	case KindStorageClass:
		return storagev1.Resource("storageclasses")
	case KindNode:
		return v1.Resource("nodes")
	case KindVolume:
		return v1.Resource("persistentvolumes")
	case KindClaim:
		return v1.Resource("persistentvolumeclaims")
	case KindPod:
		return v1.Resource("pods")
	}
	return schema.GroupResource{Resource: k.String()}
}

func (k Kind) groupVersionKind() schema.GroupVersionKind {
	if k == KindStorageClass {
		return storagev1.SchemeGroupVersion.WithKind(k.String())
	}
	return v1.SchemeGroupVersion.WithKind(k.String())
}

func (k Kind) namespaced() bool { return k == KindClaim || k == KindPod }

// hasStatus reports whether the kind has a status subresource.
func (k Kind) hasStatus() bool { return k != KindStorageClass }

// kindOf returns the Kind of a supported object, or false.
func kindOf(obj any) (Kind, bool) {
	switch obj.(type) {
	case *storagev1.StorageClass:
		return KindStorageClass, true
	case *v1.Node:
		return KindNode, true
	case *v1.PersistentVolume:
		return KindVolume, true
	case *v1.PersistentVolumeClaim:
		return KindClaim, true
	case *v1.Pod:
		return KindPod, true
	}
	return 0, false
}
