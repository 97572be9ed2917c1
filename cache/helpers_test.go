package cache

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func newPV(name, class, rv string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv},
		// Valid for kube-apiserver (and bindertest): capacity, access
		// modes and a source.
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:       class,
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + name}},
		},
	}
}

func newPVC(ns, name, rv string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

func newPod(ns, name, uid string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
}

// describe renders objects as sorted "key@rv" strings for comparisons.
func describe[T metav1.Object](objs []T) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s@%s", Key(o), o.GetResourceVersion()))
	}
	slices.Sort(out)
	return out
}

// checkIndexes verifies that every index entry of c agrees with the index
// functions applied to the latest objects, and that every object is listed
// under each of its values.
func checkIndexes[T metav1.Object](t testing.TB, c *Assume[T]) {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i, name := range c.indexNames {
		for value, set := range c.indexes[i] {
			if len(set.items) == 0 {
				t.Errorf("index %s value %q: empty set kept", name, value)
			}
			if len(set.items) != len(set.pos) {
				t.Errorf("index %s value %q: %d items, %d positions", name, value, len(set.items), len(set.pos))
			}
			for j, e := range set.items {
				if set.pos[e] != j {
					t.Errorf("index %s value %q: item %d has position %d", name, value, j, set.pos[e])
				}
				obj := e.latest.Load().obj
				if !slices.Contains(c.indexFuncs[i](obj), value) {
					t.Errorf("index %s value %q lists %s whose values are %q", name, value, Key(obj), c.indexFuncs[i](obj))
				}
			}
		}
	}
	live := 0
	c.tab.Load().all(c.tomb, func(key string, e *entry[T]) {
		live++
		if got := c.lookup(key); got != e {
			t.Errorf("%s: lookup finds %p, want %p", key, got, e)
		}
		if got, _ := c.Get(key); any(got) != any(e.latest.Load().obj) {
			t.Errorf("%s: Get object differs from the latest version", key)
		}
		obj := e.latest.Load().obj
		for i, name := range c.indexNames {
			for _, v := range c.indexFuncs[i](obj) {
				set := c.indexes[i][v]
				if set == nil {
					t.Errorf("%s: index %s value %q missing", key, name, v)
					continue
				}
				if _, ok := set.pos[e]; !ok {
					t.Errorf("%s: not listed under index %s value %q", key, name, v)
				}
			}
		}
	})
	if got := c.Len(); got != live {
		t.Errorf("Len = %d, table holds %d keys", got, live)
	}
}

func pvName(i int) string { return fmt.Sprintf("pv-%06d", i) }
