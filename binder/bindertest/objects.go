package bindertest

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// object is what every stored kind is: a runtime.Object with ObjectMeta.
type object interface {
	runtime.Object
	metav1.Object
}

// Stored versions are immutable: a write builds a new version and never
// changes an old one, so versions may share substructures (an update keeps
// the old status by assignment). Everything handed to a caller or a watch
// is a deep copy; event handlers receive the stored versions themselves,
// read-only, as informer handlers receive the informer's objects.

// asObject returns obj as a supported, non-nil object, or false.
func asObject(obj runtime.Object) (object, Kind, bool) {
	k, ok := kindOf(obj)
	if !ok || isNil(obj) {
		return nil, 0, false
	}
	return obj.(object), k, true
}

// isNil reports whether obj is a nil pointer of a supported kind.
func isNil(obj any) bool {
	switch o := obj.(type) {
	case *storagev1.StorageClass:
		return o == nil
	case *v1.Node:
		return o == nil
	case *v1.PersistentVolume:
		return o == nil
	case *v1.PersistentVolumeClaim:
		return o == nil
	case *v1.Pod:
		return o == nil
	}
	return obj == nil
}

func deepCopy(o object) object { return o.DeepCopyObject().(object) }

// shallowCopy returns a new top-level struct sharing every field's
// substructure with o. Safe only because stored versions are immutable.
func shallowCopy(o object) object {
	switch t := o.(type) {
	case *storagev1.StorageClass:
		c := *t
		return &c
	case *v1.Node:
		c := *t
		return &c
	case *v1.PersistentVolume:
		c := *t
		return &c
	case *v1.PersistentVolumeClaim:
		c := *t
		return &c
	case *v1.Pod:
		c := *t
		return &c
	}
	return deepCopy(o)
}

// withStatus returns a new version of the stored old with in's status (a
// status update): metadata and spec are shared with old, the status is a
// copy of in's, which shares with old's what in's shares with it (and,
// for volumes and claims, shares the rest through sh's table). Kinds
// without status get a plain shallow copy. shared reports whether the new
// version needs no Share of its status.
func withStatus(old, in object, sh sharer) (next object, shared bool) {
	switch o := old.(type) {
	case *v1.Node:
		n := *o
		in.(*v1.Node).Status.DeepCopyInto(&n.Status)
		return &n, false
	case *v1.PersistentVolume:
		n := *o
		sh.volumeStatus(&n.Status, &in.(*v1.PersistentVolume).Status, &o.Status)
		return &n, true
	case *v1.PersistentVolumeClaim:
		n := *o
		sh.claimStatus(&n.Status, &in.(*v1.PersistentVolumeClaim).Status, &o.Status)
		return &n, true
	case *v1.Pod:
		n := *o
		in.(*v1.Pod).Status.DeepCopyInto(&n.Status)
		return &n, false
	}
	return shallowCopy(old), false
}

// withMetaAndSpec returns a new version with copies of in's metadata and
// spec (everything but status) and old's status, shared (an update). The
// copies of a volume's or claim's share with old what in shares with it,
// and the rest through sh's table (objects_share.go). shared reports
// whether the new version needs no Share of its metadata and spec.
// Type metadata is left empty, as stored versions have none.
func withMetaAndSpec(in, old object, sh sharer) (next object, shared bool) {
	switch t := in.(type) {
	case *storagev1.StorageClass:
		n := t.DeepCopy()
		n.TypeMeta = metav1.TypeMeta{}
		return n, false
	case *v1.Node:
		n := &v1.Node{Status: old.(*v1.Node).Status}
		t.ObjectMeta.DeepCopyInto(&n.ObjectMeta)
		t.Spec.DeepCopyInto(&n.Spec)
		return n, false
	case *v1.PersistentVolume:
		o := old.(*v1.PersistentVolume)
		n := &v1.PersistentVolume{Status: o.Status}
		sh.meta(&n.ObjectMeta, &t.ObjectMeta, &o.ObjectMeta)
		sh.volumeSpec(&n.Spec, &t.Spec, &o.Spec)
		return n, true
	case *v1.PersistentVolumeClaim:
		o := old.(*v1.PersistentVolumeClaim)
		n := &v1.PersistentVolumeClaim{Status: o.Status}
		sh.meta(&n.ObjectMeta, &t.ObjectMeta, &o.ObjectMeta)
		sh.claimSpec(&n.Spec, &t.Spec, &o.Spec)
		return n, true
	case *v1.Pod:
		n := &v1.Pod{Status: old.(*v1.Pod).Status}
		t.ObjectMeta.DeepCopyInto(&n.ObjectMeta)
		t.Spec.DeepCopyInto(&n.Spec)
		return n, false
	}
	return deepCopy(in), false
}

// applyDefaults fills the fields kube-apiserver defaults when it decodes a
// request (k8s.io/kubernetes/pkg/apis/core/v1 and storage/v1 defaults).
// o is a private copy.
func applyDefaults(o object) {
	switch t := o.(type) {
	case *storagev1.StorageClass:
		if t.ReclaimPolicy == nil {
			p := v1.PersistentVolumeReclaimDelete
			t.ReclaimPolicy = &p
		}
		if t.VolumeBindingMode == nil {
			m := storagev1.VolumeBindingImmediate
			t.VolumeBindingMode = &m
		}
	case *v1.PersistentVolume:
		if t.Status.Phase == "" {
			t.Status.Phase = v1.VolumePending
		}
		if t.Spec.PersistentVolumeReclaimPolicy == "" {
			t.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
		}
		if t.Spec.VolumeMode == nil {
			m := v1.PersistentVolumeFilesystem
			t.Spec.VolumeMode = &m
		}
	case *v1.PersistentVolumeClaim:
		if t.Status.Phase == "" {
			t.Status.Phase = v1.ClaimPending
		}
		if t.Spec.VolumeMode == nil {
			m := v1.PersistentVolumeFilesystem
			t.Spec.VolumeMode = &m
		}
		defaultDataSourceRef(t)
	case *v1.Pod:
		if t.Status.Phase == "" {
			t.Status.Phase = v1.PodPending
		}
		defaultPodVolumes(t)
	case *v1.Node:
		defaultAllocatable(t)
	}
}

// resetStatusForCreate drops the status a create request carries, as the
// kinds' registry strategies do (PrepareForCreate). o is a private copy.
func resetStatusForCreate(o object, now metav1.Time) {
	switch t := o.(type) {
	case *v1.PersistentVolume:
		t.Status = v1.PersistentVolumeStatus{Phase: v1.VolumePending, LastPhaseTransitionTime: &now}
	case *v1.PersistentVolumeClaim:
		t.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}
	case *v1.Pod:
		t.Status = v1.PodStatus{Phase: v1.PodPending}
	}
	// Nodes keep their status on create: the kubelet registers a node with it.
}

// prepareStatusUpdate applies the status strategy's rules to next (a
// private shallow copy) given the stored old version: a PersistentVolume
// whose phase changes gets lastPhaseTransitionTime = now unless the client
// set a new one; an unchanged phase keeps the old time when none is sent.
// now is shared by the versions that take it; nobody modifies it.
func prepareStatusUpdate(next, old object, now *metav1.Time) {
	n, ok := next.(*v1.PersistentVolume)
	if !ok {
		return
	}
	o := old.(*v1.PersistentVolume)
	switch {
	case n.Status.Phase == o.Status.Phase && n.Status.LastPhaseTransitionTime == nil:
		n.Status.LastPhaseTransitionTime = o.Status.LastPhaseTransitionTime
	case n.Status.Phase != o.Status.Phase &&
		(n.Status.LastPhaseTransitionTime == nil || n.Status.LastPhaseTransitionTime.Equal(o.Status.LastPhaseTransitionTime)):
		n.Status.LastPhaseTransitionTime = now
	}
}

// newList builds the typed list of kind holding deep copies of objs.
func newList(kind Kind, rv string, objs []object) runtime.Object {
	meta := metav1.ListMeta{ResourceVersion: rv}
	switch kind {
	case KindStorageClass:
		l := &storagev1.StorageClassList{ListMeta: meta, Items: make([]storagev1.StorageClass, len(objs))}
		for i, o := range objs {
			o.(*storagev1.StorageClass).DeepCopyInto(&l.Items[i])
		}
		return l
	case KindNode:
		l := &v1.NodeList{ListMeta: meta, Items: make([]v1.Node, len(objs))}
		for i, o := range objs {
			o.(*v1.Node).DeepCopyInto(&l.Items[i])
		}
		return l
	case KindVolume:
		l := &v1.PersistentVolumeList{ListMeta: meta, Items: make([]v1.PersistentVolume, len(objs))}
		for i, o := range objs {
			o.(*v1.PersistentVolume).DeepCopyInto(&l.Items[i])
		}
		return l
	case KindClaim:
		l := &v1.PersistentVolumeClaimList{ListMeta: meta, Items: make([]v1.PersistentVolumeClaim, len(objs))}
		for i, o := range objs {
			o.(*v1.PersistentVolumeClaim).DeepCopyInto(&l.Items[i])
		}
		return l
	default:
		l := &v1.PodList{ListMeta: meta, Items: make([]v1.Pod, len(objs))}
		for i, o := range objs {
			o.(*v1.Pod).DeepCopyInto(&l.Items[i])
		}
		return l
	}
}

// emptyObject returns a new zero object of kind (for bookmarks).
func emptyObject(kind Kind) object {
	switch kind {
	case KindStorageClass:
		return &storagev1.StorageClass{}
	case KindNode:
		return &v1.Node{}
	case KindVolume:
		return &v1.PersistentVolume{}
	case KindClaim:
		return &v1.PersistentVolumeClaim{}
	default:
		return &v1.Pod{}
	}
}
