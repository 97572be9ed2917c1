package scheduling

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// newStorageCapacity returns a StorageCapacity on objs, with CapacityIndex
// when indexed.
func newStorageCapacity(t testing.TB, indexed bool, objs ...any) *StorageCapacity {
	t.Helper()
	drivers := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	indexers := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}
	if indexed {
		maps.Copy(indexers, CapacityIndexers())
	}
	caps := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, indexers)
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *storagev1.CSIDriver:
			err = drivers.Add(o)
		default:
			err = caps.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewStorageCapacity(storagelisters.NewCSIDriverLister(drivers), caps)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStorageCapacity(t *testing.T) {
	const driver = "csi.example.com"
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: driver}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a", "rack": "r1"}}}
	claim := func(size string) *v1.PersistentVolumeClaim {
		c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
		if size != "" {
			c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
		}
		return c
	}
	tracking := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}}
	notTracking := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driver}}
	capacity := func(name, class, zone, size, max string) *storagev1.CSIStorageCapacity {
		c := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}, StorageClassName: class}
		if zone != "" {
			c.NodeTopology = &metav1.LabelSelector{MatchLabels: map[string]string{"zone": zone}}
		}
		if size != "" {
			c.Capacity = ptr.To(resource.MustParse(size))
		}
		if max != "" {
			c.MaximumVolumeSize = ptr.To(resource.MustParse(max))
		}
		return c
	}
	tests := []struct {
		name      string
		objs      []any
		claim     *v1.PersistentVolumeClaim
		want      bool
		wantMatch string
	}{
		{"no storage request", []any{tracking}, claim(""), true, ""},
		{"no CSIDriver", nil, claim("1Gi"), true, ""},
		{"driver does not track capacity", []any{notTracking}, claim("1Gi"), true, ""},
		{"no capacity object", []any{tracking}, claim("1Gi"), false, ""},
		{"capacity fits", []any{tracking, capacity("a", "fast", "a", "10Gi", "")}, claim("1Gi"), true, "a"},
		{"capacity too small", []any{tracking, capacity("a", "fast", "a", "1Gi", "")}, claim("2Gi"), false, ""},
		{"maximumVolumeSize wins over capacity", []any{tracking, capacity("a", "fast", "a", "10Gi", "1Gi")}, claim("2Gi"), false, ""},
		{"other zone", []any{tracking, capacity("b", "fast", "b", "10Gi", "")}, claim("1Gi"), false, ""},
		{"no topology reaches no node", []any{tracking, capacity("x", "fast", "", "10Gi", "")}, claim("1Gi"), false, ""},
		{"other class", []any{tracking, capacity("a", "slow", "a", "10Gi", "")}, claim("1Gi"), false, ""},
		{"no size at all", []any{tracking, capacity("a", "fast", "a", "", "")}, claim("1Gi"), false, ""},
		{"the one of two that reaches the node", []any{tracking, capacity("b", "fast", "b", "10Gi", ""), capacity("a2", "fast", "a", "10Gi", "")},
			claim("1Gi"), true, "a2"},
		{"empty topology reaches every node", []any{tracking, withTopology(capacity("all", "fast", "", "10Gi", ""), &metav1.LabelSelector{})}, claim("1Gi"), true, "all"},
		{"matchLabels of two labels", []any{tracking, withTopology(capacity("a", "fast", "", "10Gi", ""),
			&metav1.LabelSelector{MatchLabels: map[string]string{"zone": "a", "rack": "r1"}})}, claim("1Gi"), true, "a"},
		{"matchLabels of a label the node lacks", []any{tracking, withTopology(capacity("a", "fast", "", "10Gi", ""),
			&metav1.LabelSelector{MatchLabels: map[string]string{"zone": "a", "disk": ""}})}, claim("1Gi"), false, ""},
		{"matchExpressions admit the node", []any{tracking, withTopology(capacity("a", "fast", "", "10Gi", ""), &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"b", "a"}}}})}, claim("1Gi"), true, "a"},
		{"matchExpressions exclude the node", []any{tracking, withTopology(capacity("a", "fast", "", "10Gi", ""), &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"a"}}}})}, claim("1Gi"), false, ""},
		{"invalid matchExpressions reach no node", []any{tracking, withTopology(capacity("a", "fast", "", "10Gi", ""), &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: "Near", Values: []string{"a"}}}})}, claim("1Gi"), false, ""},
	}
	for _, tc := range tests {
		for _, indexed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/indexed=%v", tc.name, indexed), func(t *testing.T) {
				s := newStorageCapacity(t, indexed, tc.objs...)
				ok, c, err := s.Lookup(context.Background(), class, tc.claim, node)
				if err != nil {
					t.Fatal(err)
				}
				if ok != tc.want {
					t.Errorf("Lookup fits = %v, want %v", ok, tc.want)
				}
				got := ""
				if c != nil {
					got = c.Name
				}
				if got != tc.wantMatch {
					t.Errorf("Lookup object = %q, want %q", got, tc.wantMatch)
				}
				if has, err := s.HasCapacity(context.Background(), class, tc.claim, node); err != nil || has != tc.want {
					t.Errorf("HasCapacity = %v, %v; want %v", has, err, tc.want)
				}
			})
		}
	}
}

func withTopology(c *storagev1.CSIStorageCapacity, sel *metav1.LabelSelector) *storagev1.CSIStorageCapacity {
	c.NodeTopology = sel
	return c
}

func TestStorageCapacityInvalid(t *testing.T) {
	if _, err := NewStorageCapacity(nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewStorageCapacity(nil, nil) = %v, want ErrInvalidArgument", err)
	}
	s := newStorageCapacity(t, true)
	if _, _, err := s.Lookup(context.Background(), nil, nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Lookup(nil) = %v, want ErrInvalidArgument", err)
	}
}
