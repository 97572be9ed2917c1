package bindertest

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// bindingResource is the subresource a binding is created on.
var bindingResource = schema.GroupResource{Resource: "pods/binding"}

// BindPod assigns the pod binding names to the node binding.Target.Name, as
// a scheduler's create of the pods/binding subresource does on
// kube-apiserver: it sets spec.nodeName, merges the binding's annotations
// into the pod's and sets the pod's PodScheduled condition to True. The
// binding's uid and resourceVersion, when set, are preconditions (Conflict
// when the pod differs). A pod already assigned to a node, being deleted or
// with scheduling gates fails with Conflict, a missing pod with NotFound, a
// binding without a target node with BadRequest. It counts as a create of
// a pod (Stats, InjectFault with KindPod and VerbCreate). The node is not
// checked, as kube-apiserver does not check it.
func (s *Server) BindPod(ctx context.Context, binding *v1.Binding) error {
	if binding == nil || binding.Name == "" || binding.Target.Name == "" {
		return badRequest("binding: a pod name and a target node name are required")
	}
	post, err := splitApplied(s.begin(ctx, vCreate, KindPod, binding.Namespace, binding.Name))
	if err != nil {
		return err
	}
	s.mu.Lock()
	stored, ok := s.objs[KindPod].get(binding.Namespace, binding.Name)
	if !ok {
		s.mu.Unlock()
		return notFound(KindPod, binding.Name)
	}
	old := stored.(*v1.Pod)
	if err := bindingConflict(binding, old); err != nil {
		s.mu.Unlock()
		s.stats.conflicts.Add(1)
		return err
	}
	next := old.DeepCopy()
	next.Spec.NodeName = binding.Target.Name
	for k, v := range binding.Annotations {
		metav1.SetMetaDataAnnotation(&next.ObjectMeta, k, v)
	}
	setScheduled(&next.Status, s.now())
	s.rv++
	next.SetResourceVersion(formatRV(s.rv))
	s.objs[KindPod].put(next)
	s.replaceLocked(old, next, false)
	queued := s.commitLocked(event{kind: KindPod, typ: watch.Modified, rv: s.rv, obj: next, old: old})
	s.mu.Unlock()
	if queued {
		s.deliver()
	}
	return post
}

// bindingConflict returns the Conflict error of a binding pod cannot
// take, as kube-apiserver words it: on "pods" for a failed precondition,
// on "pods/binding" otherwise; nil when pod can take it.
func bindingConflict(binding *v1.Binding, pod *v1.Pod) error {
	switch {
	case binding.UID != "" && binding.UID != pod.UID:
		return apierrors.NewConflict(KindPod.groupResource(), binding.Name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", binding.UID, pod.UID))
	case binding.ResourceVersion != "" && binding.ResourceVersion != pod.ResourceVersion:
		return apierrors.NewConflict(KindPod.groupResource(), binding.Name,
			fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", binding.ResourceVersion, pod.ResourceVersion))
	case pod.DeletionTimestamp != nil:
		return apierrors.NewConflict(bindingResource, binding.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
	case pod.Spec.NodeName != "":
		return apierrors.NewConflict(bindingResource, binding.Name, fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName))
	case len(pod.Spec.SchedulingGates) != 0:
		return apierrors.NewConflict(bindingResource, binding.Name, fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name))
	}
	return nil
}

// setScheduled sets the PodScheduled condition to True, keeping its
// transition time when it already was True.
func setScheduled(st *v1.PodStatus, now metav1.Time) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != v1.PodScheduled {
			continue
		}
		if c.Status != v1.ConditionTrue {
			c.Status, c.LastTransitionTime, c.Reason, c.Message = v1.ConditionTrue, now, "", ""
		}
		return
	}
	st.Conditions = append(st.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: now})
}
