package cache

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// describe renders objects as sorted "key@rv" strings for comparisons.
func describe[T metav1.Object](objs []T) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s@%s", Key(o), o.GetResourceVersion()))
	}
	slices.Sort(out)
	return out
}

// newPVCache returns an empty PersistentVolume assume cache.
func newPVCache() *Assume[*v1.PersistentVolume] {
	return NewAssume(AssumeConfig[*v1.PersistentVolume]{Description: "PersistentVolume"})
}

// all returns the latest object of every key.
func all[T metav1.Object](c *Assume[T]) []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []T
	c.tab.Load().all(c.tomb, func(_ string, e *entry[T]) {
		out = append(out, e.latest.Load().obj)
	})
	return out
}

// ofClass returns the latest volumes of storage class class.
func ofClass(c *Assume[*v1.PersistentVolume], class string) []*v1.PersistentVolume {
	var out []*v1.PersistentVolume
	for _, pv := range all(c) {
		if pv.Spec.StorageClassName == class {
			out = append(out, pv)
		}
	}
	return out
}

// length returns the number of keys.
func length[T metav1.Object](c *Assume[T]) int { return int(c.live.Load()) }

// checkTable verifies that every key of c's table is found by lookup and
// Get, and that the key count matches the table.
func checkTable[T metav1.Object](t testing.TB, c *Assume[T]) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	live := 0
	c.tab.Load().all(c.tomb, func(key string, e *entry[T]) {
		live++
		if got := c.lookup(key); got != e {
			t.Errorf("%s: lookup finds %p, want %p", key, got, e)
		}
		if got, _ := c.Get(key); any(got) != any(e.latest.Load().obj) {
			t.Errorf("%s: Get object differs from the latest version", key)
		}
	})
	if got := length(c); got != live {
		t.Errorf("key count = %d, table holds %d keys", got, live)
	}
}

func pvName(i int) string { return fmt.Sprintf("pv-%06d", i) }
