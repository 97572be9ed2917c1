package bindertest

import (
	"bytes"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
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
	if status {
		a, b := statusOf(next), statusOf(old)
		return a == nil || equalEncoding(a, b)
	}
	return equalEncoding(asMessage(next), asMessage(old))
}
