package pvindex

import (
	"cmp"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// capacity is an exact, cheaply comparable storage size. Sizes that are whole
// numbers of bytes fitting in an int64 (every real volume) compare as
// integers; anything else (fractions such as "1500m", sizes beyond 8 EiB)
// keeps its Quantity and compares with Quantity.Cmp, so the order is exactly
// the one Kubernetes uses.
type capacity struct {
	n   int64              // the size, when big is nil
	big *resource.Quantity // the size, when it is not an int64 integer; read-only
}

// storageOf returns the storage entry of a resource list; a missing entry is
// zero, as in Kubernetes.
func storageOf(list v1.ResourceList) capacity {
	q, ok := list[v1.ResourceStorage]
	if !ok {
		return capacity{}
	}
	if n, exact := q.AsInt64(); exact {
		return capacity{n: n}
	}
	c := q.DeepCopy()
	return capacity{big: &c}
}

func (c capacity) quantity() resource.Quantity {
	if c.big != nil {
		return *c.big
	}
	return *resource.NewQuantity(c.n, resource.BinarySI)
}

// compare returns -1, 0 or +1 as c is smaller than, equal to or larger than d.
func (c capacity) compare(d capacity) int {
	if c.big == nil && d.big == nil {
		return cmp.Compare(c.n, d.n)
	}
	q := c.quantity()
	return q.Cmp(d.quantity())
}

// key orders the volumes of one tree: by capacity, then by name. Names are
// unique in an Index, so keys are too.
type key struct {
	cap  capacity
	name string
}

func (k key) compare(o key) int {
	if c := k.cap.compare(o.cap); c != 0 {
		return c
	}
	return strings.Compare(k.name, o.name)
}
