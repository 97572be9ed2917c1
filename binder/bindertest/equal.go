package bindertest

import (
	"bytes"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Equality here is what kube-apiserver uses to skip no-op writes: equal
// serializations. The protobuf encoding of API types is deterministic (map
// keys sorted), writes quantities in canonical form, times at second
// precision and nil like empty, so equal bytes mean semantically equal
// values. It is also much cheaper than reflection: values whose encoded
// sizes differ are told apart without encoding them.

// message is a generated protobuf API type.
type message interface {
	Size() int
	MarshalToSizedBuffer(dAtA []byte) (int, error)
}

// equalEncoding reports whether a and b have the same protobuf encoding.
func equalEncoding(a, b message) bool {
	n := a.Size()
	if n != b.Size() {
		return false
	}
	if n == 0 {
		return true
	}
	buf := make([]byte, 2*n)
	x, y := buf[:n], buf[n:]
	if _, err := a.MarshalToSizedBuffer(x); err != nil {
		return apiequality.Semantic.DeepEqual(a, b)
	}
	if _, err := b.MarshalToSizedBuffer(y); err != nil {
		return apiequality.Semantic.DeepEqual(a, b)
	}
	return bytes.Equal(x, y)
}

// statusOf returns a pointer to an object's status (nil for kinds without).
func statusOf(o object) message {
	switch t := o.(type) {
	case *v1.Node:
		return &t.Status
	case *v1.PersistentVolume:
		return &t.Status
	case *v1.PersistentVolumeClaim:
		return &t.Status
	case *v1.Pod:
		return &t.Status
	}
	return nil
}

// asMessage returns o as a protobuf message.
func asMessage(o object) message {
	switch t := o.(type) {
	case *storagev1.StorageClass:
		return t
	case *v1.Node:
		return t
	case *v1.PersistentVolume:
		return t
	case *v1.PersistentVolumeClaim:
		return t
	case *v1.Pod:
		return t
	}
	return nil
}

// unchanged reports whether an update (status=false) or a status update
// (status=true) that built next from the stored old changes nothing, so
// that the write is skipped as kube-apiserver skips it. next carries old's
// resourceVersion. A status update shares metadata and spec with old, so
// only the statuses are compared.
func unchanged(next, old object, status bool) bool {
	if differsAtSight(next, old, status) {
		return false
	}
	if status {
		a, b := statusOf(next), statusOf(old)
		return a == nil || equalEncoding(a, b)
	}
	return equalEncoding(asMessage(next), asMessage(old))
}

// differsAtSight reports that next and old surely encode differently,
// from fields a write usually changes: a string field of another value, a
// pointer set on one side only, a map or list of another length (the
// generated protobuf code writes every string, every set pointer and every
// entry). False means "compare the encodings". It spares the no-op check
// of a binding's writes the sizes of both versions: that check was 4.6 % of
// the CPU of BenchmarkBindingWrites/results=shared and 3 % of a binding
// worker's at 10,000 pairs (BenchmarkBinderBindAll), and is now below the
// profile's threshold.
func differsAtSight(next, old object, status bool) bool {
	switch n := next.(type) {
	case *v1.PersistentVolume:
		o := old.(*v1.PersistentVolume)
		if status {
			return n.Status.Phase != o.Status.Phase || n.Status.Message != o.Status.Message || n.Status.Reason != o.Status.Reason
		}
		return metaDiffers(&n.ObjectMeta, &o.ObjectMeta) || refDiffers(n.Spec.ClaimRef, o.Spec.ClaimRef)
	case *v1.PersistentVolumeClaim:
		o := old.(*v1.PersistentVolumeClaim)
		if status {
			return n.Status.Phase != o.Status.Phase || len(n.Status.Capacity) != len(o.Status.Capacity) ||
				len(n.Status.AccessModes) != len(o.Status.AccessModes)
		}
		return metaDiffers(&n.ObjectMeta, &o.ObjectMeta) || n.Spec.VolumeName != o.Spec.VolumeName
	}
	return false
}

// metaDiffers is differsAtSight for metadata.
func metaDiffers(n, o *metav1.ObjectMeta) bool {
	return len(n.Annotations) != len(o.Annotations) || len(n.Labels) != len(o.Labels) ||
		len(n.Finalizers) != len(o.Finalizers)
}

// refDiffers is differsAtSight for a claimRef.
func refDiffers(n, o *v1.ObjectReference) bool {
	if n == nil || o == nil {
		return (n == nil) != (o == nil)
	}
	return n.Name != o.Name || n.Namespace != o.Namespace || n.UID != o.UID || n.ResourceVersion != o.ResourceVersion
}
