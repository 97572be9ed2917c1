package binder

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/volume"
)

// Default-class annotations, as Kubernetes' storage util reads them.
const (
	annDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	annBetaDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// classes holds the StorageClasses by name.
type classes struct {
	// mu guards byName.
	mu     sync.RWMutex
	byName map[string]*storagev1.StorageClass
}

func (c *classes) get(name string) (*storagev1.StorageClass, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	sc, ok := c.byName[name]
	return sc, ok
}

// store keeps sc unless the cached version is newer.
func (c *classes) store(sc *storagev1.StorageClass) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName == nil {
		c.byName = make(map[string]*storagev1.StorageClass)
	}
	if old, ok := c.byName[sc.Name]; ok && version(old.ResourceVersion) > version(sc.ResourceVersion) {
		return
	}
	c.byName[sc.Name] = sc
}

func (c *classes) delete(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byName, name)
}

// isDefault reports whether the class carries a default-class annotation
// set to "true".
func isDefault(sc *storagev1.StorageClass) bool {
	return sc.Annotations[annDefaultClass] == "true" || sc.Annotations[annBetaDefaultClass] == "true"
}

// defaultClass returns the default StorageClass as Kubernetes chooses it
// among several: the newest, then the name that sorts first; nil when there
// is none.
func (c *classes) defaultClass() *storagev1.StorageClass {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var best *storagev1.StorageClass
	for _, sc := range c.byName {
		if !isDefault(sc) {
			continue
		}
		if best == nil {
			best = sc
			continue
		}
		t, bt := sc.CreationTimestamp.UnixNano(), best.CreationTimestamp.UnixNano()
		if t > bt || (t == bt && sc.Name < best.Name) {
			best = sc
		}
	}
	return best
}

// delayBinding is component-helpers' IsDelayBindingMode on the class cache:
// false for claims without class or of an unknown class, an error for a
// class without volumeBindingMode.
func (c *classes) delayBinding(claim *v1.PersistentVolumeClaim) (bool, error) {
	name := volume.GetPersistentVolumeClaimClass(claim)
	if name == "" {
		return false, nil
	}
	sc, ok := c.get(name)
	if !ok {
		return false, nil
	}
	if sc.VolumeBindingMode == nil {
		return false, fmt.Errorf("binder: VolumeBindingMode not set for StorageClass %q", name)
	}
	return *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}
