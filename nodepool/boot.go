package nodepool

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/zones"
)

// Boot is a node to boot. Node is a new object owned by the caller, named
// by GenerateName, labelled with its shape and annotated with PhaseCreating
// (and BoundPodAnnotation when Pod is set).
type Boot struct {
	Node *v1.Node
	// Pod is the pod the node is booted for (pre-bound), nil for a standby
	// node. Shared with the caller's input; do not mutate.
	Pod *v1.Pod
	// Standby is the index in Config.Standby of the spec a standby node is
	// booted for, -1 for a pod's node.
	Standby int
}

// Shape returns the shape of the node to boot.
func (b Boot) Shape(capacityTypeKey string) Shape { return NodeShape(b.Node, capacityTypeKey) }

// template derives the labels of a node for class c's pods: the node
// selector's values, then for the first required-affinity term that can be
// satisfied, one value (the smallest) of each In requirement; the default
// capacity type, instance type and disk size fill the gaps. The result is
// checked against the pod's requirements.
func (s *Scaler) template(c *podClass) (map[string]string, error) {
	base := make(map[string]string, len(c.rep.Spec.NodeSelector)+4)
	maps.Copy(base, c.rep.Spec.NodeSelector)
	ns := requiredSelector(c.rep)
	if ns == nil || len(ns.NodeSelectorTerms) == 0 {
		return s.completeTemplate(c, base)
	}
	var lastErr error
	for i := range ns.NodeSelectorTerms {
		t := &ns.NodeSelectorTerms[i]
		if len(t.MatchFields) > 0 {
			lastErr = fmt.Errorf("%w: pod %s: term %d uses matchFields", ErrUnsatisfiable, klog.KObj(c.rep), i)
			continue
		}
		l := maps.Clone(base)
		ok := true
		for _, r := range t.MatchExpressions {
			if _, set := l[r.Key]; set {
				continue
			}
			switch r.Operator {
			case v1.NodeSelectorOpIn:
				if len(r.Values) > 0 {
					l[r.Key] = slices.Min(r.Values)
				}
			case v1.NodeSelectorOpExists, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
				ok = false
			}
		}
		if !ok {
			lastErr = fmt.Errorf("%w: pod %s: term %d needs a label value it does not name", ErrUnsatisfiable, klog.KObj(c.rep), i)
			continue
		}
		out, err := s.completeTemplate(c, l)
		if err == nil {
			return out, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func (s *Scaler) completeTemplate(c *podClass, l map[string]string) (map[string]string, error) {
	if _, ok := l[s.cfg.CapacityTypeKey]; !ok {
		l[s.cfg.CapacityTypeKey] = CapacityOnDemand
	}
	if _, ok := l[InstanceTypeLabel]; !ok {
		if s.cfg.DefaultInstanceType == "" {
			return nil, fmt.Errorf("%w: pod %s names no instance type and there is no default", ErrUnsatisfiable, klog.KObj(c.rep))
		}
		l[InstanceTypeLabel] = s.cfg.DefaultInstanceType
	}
	disk := s.diskSize
	if !s.cfg.DefaultDiskSize.IsZero() {
		if s.cfg.FixedSizeDisk && c.disk > 0 {
			disk = c.disk
		}
		l[s.cfg.DiskSizeKey] = diskLabel(disk)
	}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: l}}
	ok, err := s.classFitsNode(c, n, disk)
	if err != nil {
		return nil, fmt.Errorf("%w: pod %s: %w", ErrInvalidPod, klog.KObj(c.rep), err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: pod %s: derived labels %v do not satisfy its requirements", ErrUnsatisfiable, klog.KObj(c.rep), l)
	}
	return l, nil
}

// diskLabel formats a byte count as a label value: the shorter of its
// decimal and binary quantity forms ("5G", "5Gi").
func diskLabel(bytes int64) string {
	d := resource.NewQuantity(bytes, resource.DecimalSI).String()
	b := resource.NewQuantity(bytes, resource.BinarySI).String()
	v := d
	if len(b) < len(d) {
		v = b
	}
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	return strconv.FormatInt(bytes, 10)
}

// standbyLabels returns the labels of a node for standby spec sp.
func (s *Scaler) standbyLabels(sp *StandbySpec) map[string]string {
	l := make(map[string]string, len(sp.Labels)+3)
	maps.Copy(l, sp.Labels)
	l[InstanceTypeLabel] = sp.InstanceType
	l[s.cfg.CapacityTypeKey] = sp.CapacityType
	if !s.cfg.DefaultDiskSize.IsZero() {
		l[s.cfg.DiskSizeKey] = diskLabel(s.diskSize)
	}
	return l
}

// newNode returns a boot spec with a copy of labels, bound to pod if set.
func (s *Scaler) newNode(labels map[string]string, pod *v1.Pod) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{
		GenerateName: s.cfg.GenerateName,
		Labels:       maps.Clone(labels),
		Annotations:  map[string]string{PhaseAnnotation: string(PhaseCreating)},
	}}
	if pod != nil {
		n.Annotations[BoundPodAnnotation] = pod.Namespace + "/" + pod.Name
	}
	return n
}

func shapeOf(labels map[string]string, capacityTypeKey string) Shape {
	z := labels[zones.ZoneLabel]
	if z == "" {
		z = labels[zones.BetaZoneLabel]
	}
	return Shape{InstanceType: labels[InstanceTypeLabel], CapacityType: labels[capacityTypeKey], Zone: z}
}

func compareShapes(a, b Shape) int {
	return cmp.Or(cmp.Compare(a.InstanceType, b.InstanceType), cmp.Compare(a.CapacityType, b.CapacityType), cmp.Compare(a.Zone, b.Zone))
}

// bootQueue is the pods waiting for a boot of one shape.
type bootQueue struct {
	shape Shape
	pods  []*v1.Pod
	spans []labelSpan // labels of pods[from:], in from order
}

// labelSpan says that the queue's pods from index from on (up to the next
// span) get nodes with labels.
type labelSpan struct {
	from   int
	labels map[string]string
}

// labelsAt returns the labels of the node for the queue's i-th pod.
func (q *bootQueue) labelsAt(i int) map[string]string {
	j, found := slices.BinarySearchFunc(q.spans, i, func(s labelSpan, i int) int { return cmp.Compare(s.from, i) })
	if !found {
		j--
	}
	return q.spans[j].labels
}

// roundRobin takes up to limit items (limit < 0: all) from the queues, one
// from each queue in turn, and calls take for each; it returns how many it
// took. Queues are visited in their order.
func roundRobin(lens []int, limit int, take func(q, i int)) int {
	taken := 0
	for depth := 0; ; depth++ {
		more := false
		for q, n := range lens {
			if depth >= n {
				continue
			}
			if limit >= 0 && taken >= limit {
				return taken
			}
			take(q, depth)
			taken++
			more = true
		}
		if !more {
			return taken
		}
	}
}
