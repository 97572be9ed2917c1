package zones

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// testVolume returns a volume with the given labels and required node
// selector terms (nil terms = no node affinity).
func testVolume(name string, labels map[string]string, terms ...v1.NodeSelectorTerm) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{
		Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", Labels: labels,
	}}
	if terms != nil {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: terms}}
	}
	return pv
}

// term returns a node selector term ANDing the given expressions.
func term(exprs ...v1.NodeSelectorRequirement) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: exprs}
}

// expr returns a node selector requirement.
func expr(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

// testNode returns a node with the given labels.
func testNode(name string, labels map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}
