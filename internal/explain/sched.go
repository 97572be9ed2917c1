package explain

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/scheduling"
	"github.com/volbind/volbind/cache"
)

// errReadOnly is what schedSide's API answers: explanations never write.
var errReadOnly = errors.New("explain: read-only")

// readOnlyAPI is the scheduling.API of the explanations' VolumeBinder,
// whose Find never writes.
type readOnlyAPI struct{}

var _ scheduling.API = readOnlyAPI{}

func (readOnlyAPI) UpdateVolume(context.Context, *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	return nil, errReadOnly
}

func (readOnlyAPI) UpdateClaim(context.Context, *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	return nil, errReadOnly
}

// schedSide is kube-scheduler's side of the explanations: a
// binder/scheduling VolumeBinder holding the Objects, whose Find decides
// each node, and the StorageCapacity it consults.
type schedSide struct {
	vb       *scheduling.VolumeBinder
	capacity *scheduling.StorageCapacity
}

// scheduler returns the scheduler side, built on first use.
func (e *Explainer) scheduler() (*schedSide, error) {
	e.schedOnce.Do(func() { e.sched, e.schedErr = e.buildScheduler() })
	return e.sched, e.schedErr
}

func (e *Explainer) buildScheduler() (*schedSide, error) {
	classes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, sc := range e.classes {
		if err := classes.Add(sc); err != nil {
			return nil, fmt.Errorf("explain: index StorageClass %s: %w", sc.Name, err)
		}
	}
	drivers := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, d := range e.drivers {
		if err := drivers.Add(d); err != nil {
			return nil, fmt.Errorf("explain: index CSIDriver %s: %w", d.Name, err)
		}
	}
	capacities := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, scheduling.CapacityIndexers())
	for _, c := range e.capacities {
		if err := capacities.Add(c); err != nil {
			return nil, fmt.Errorf("explain: index CSIStorageCapacity %s: %w", cache.Key(c), err)
		}
	}
	csiNodes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, n := range e.csiNodes {
		if err := csiNodes.Add(n); err != nil {
			return nil, fmt.Errorf("explain: index CSINode %s: %w", n.Name, err)
		}
	}
	sc, err := scheduling.NewStorageCapacity(storagelisters.NewCSIDriverLister(drivers), capacities)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	vb, err := scheduling.New(readOnlyAPI{}, storagelisters.NewStorageClassLister(classes),
		scheduling.Config{Capacity: sc, CSINodes: storagelisters.NewCSINodeLister(csiNodes)})
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	vh, ch := vb.VolumeHandler(), vb.ClaimHandler()
	for i := range e.volumes {
		pv := e.volumes[i].pv
		if !validVersion(pv.ResourceVersion) {
			c := *pv
			c.ResourceVersion = "1"
			pv = &c
		}
		vh.OnAdd(pv, true)
	}
	for _, pvc := range e.claims {
		if !validVersion(pvc.ResourceVersion) {
			c := *pvc
			c.ResourceVersion = "1"
			pvc = &c
		}
		ch.OnAdd(pvc, true)
	}
	return &schedSide{vb: vb, capacity: sc}, nil
}

// validVersion reports whether rv is a resourceVersion the VolumeBinder's
// caches accept. Objects from manifests often have none; they get "1",
// since the explanation never compares versions.
func validVersion(rv string) bool {
	_, err := strconv.ParseUint(rv, 10, 64)
	return err == nil
}

// capacityLimit is the largest volume c admits: maximumVolumeSize, else
// capacity; nil when neither is set (as binder/scheduling reads it).
func capacityLimit(c *storagev1.CSIStorageCapacity) *resource.Quantity {
	if c.MaximumVolumeSize != nil {
		return c.MaximumVolumeSize
	}
	return c.Capacity
}

// reaches reports whether c's nodeTopology selects node; an object without
// topology, or with one that does not parse, reaches no node.
func reaches(c *storagev1.CSIStorageCapacity, node *v1.Node) bool {
	if c.NodeTopology == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(c.NodeTopology)
	return err == nil && sel.Matches(labels.Set(node.Labels))
}

// capacitiesFor lists the CSIStorageCapacity objects of class that reach
// node, each with its limit against the claim's request.
func (e *Explainer) capacitiesFor(class string, pvc *v1.PersistentVolumeClaim, node *v1.Node) []CapacityObject {
	req := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	var out []CapacityObject
	for _, c := range e.capacities {
		if c.StorageClassName != class || !reaches(c, node) {
			continue
		}
		o := CapacityObject{Name: cache.Key(c)}
		switch limit := capacityLimit(c); {
		case limit == nil:
			o.Detail = "reports neither maximumVolumeSize nor capacity"
		case limit.Value() < req.Value():
			o.Limit = limit.String()
			o.Detail = fmt.Sprintf("%s %s < request %s", limitField(c), limit.String(), req.String())
		default:
			o.Limit = limit.String()
			o.Detail = fmt.Sprintf("%s %s admits request %s", limitField(c), limit.String(), req.String())
		}
		out = append(out, o)
	}
	return out
}

func limitField(c *storagev1.CSIStorageCapacity) string {
	if c.MaximumVolumeSize != nil {
		return "maximumVolumeSize"
	}
	return "capacity"
}
