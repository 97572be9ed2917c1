package scheduling

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// CapacityIndex is the name of the CSIStorageCapacity index that
// StorageCapacity reads; see CapacityIndexers.
const CapacityIndex = "volbind.io/class-topology"

// CapacityIndexers returns the index to add to the CSIStorageCapacity
// informer (AddIndexers, before it starts) whose indexer StorageCapacity
// reads. It files each object under its class and one of its nodeTopology
// matchLabels pairs, which every node it reaches has, or under its class
// alone when its topology has matchExpressions or no labels. Lookup then
// reads, for a node, the objects filed under the class and one of the
// node's labels, instead of every object: Filter looks up every node, and
// a local-storage driver publishes one object per node. Measured on 2
// cores: a Lookup among 5,000 objects, 374 µs scanning, 1.3 µs indexed
// (BenchmarkStorageCapacityLookup); one scheduling cycle of 1,000 nodes,
// 572-584 ms and 68 MB without the index, 3.5-8.3 ms and 0.9 MB with it
// (scheduler/volumebinding BenchmarkFilterScore).
func CapacityIndexers() toolscache.Indexers {
	return toolscache.Indexers{CapacityIndex: capacityIndexKeys}
}

// capacityIndexKeys is CapacityIndex's index function. An object without
// topology reaches no node and is not filed.
func capacityIndexKeys(obj any) ([]string, error) {
	c, ok := obj.(*storagev1.CSIStorageCapacity)
	if !ok || c.NodeTopology == nil {
		return nil, nil
	}
	t := c.NodeTopology
	if len(t.MatchExpressions) > 0 || len(t.MatchLabels) == 0 {
		return []string{classKey(c.StorageClassName)}, nil
	}
	first := ""
	for k := range t.MatchLabels {
		if first == "" || k < first {
			first = k
		}
	}
	return []string{labelKey(c.StorageClassName, first, t.MatchLabels[first])}, nil
}

// classKey files objects that may reach any node of the class; labelKey
// those that reach only nodes with label k=v. Label keys and values hold
// no NUL, so the two never collide.
func classKey(class string) string       { return class + "\x00" }
func labelKey(class, k, v string) string { return class + "\x00" + k + "\x00" + v }

// candidates returns the CSIStorageCapacity objects of class that may
// reach node: with CapacityIndex, those filed under the class alone or
// under one of the node's labels; without it, every object.
func (s *StorageCapacity) candidates(class string, node *v1.Node) ([]any, error) {
	if _, indexed := s.capacities.GetIndexers()[CapacityIndex]; !indexed {
		return s.capacities.List(), nil
	}
	out, err := s.capacities.ByIndex(CapacityIndex, classKey(class))
	if err != nil {
		return nil, err
	}
	for k, v := range node.Labels {
		objs, err := s.capacities.ByIndex(CapacityIndex, labelKey(class, k, v))
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}
