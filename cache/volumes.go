package cache

import (
	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// IndexStorageClass is the index of NewPVAssume: a volume's
// spec.storageClassName ("" for volumes without a class).
const IndexStorageClass = "storageclass"

// IndexNamespace is the index of NewPVCAssume: a claim's namespace.
const IndexNamespace = "namespace"

// PVStorageClass is the IndexStorageClass index function.
func PVStorageClass(pv *v1.PersistentVolume) []string {
	return []string{pv.Spec.StorageClassName}
}

// PVCNamespace is the IndexNamespace index function.
func PVCNamespace(pvc *v1.PersistentVolumeClaim) []string {
	return []string{pvc.Namespace}
}

// NewPVAssume returns an Assume cache of PersistentVolumes, keyed by name and
// indexed by storage class (IndexStorageClass). Get a volume with
// c.Get(name), list a class with c.List(IndexStorageClass, class) or
// PVsOfClass.
func NewPVAssume() *Assume[*v1.PersistentVolume] {
	return NewAssume(AssumeConfig[*v1.PersistentVolume]{
		Description: "PersistentVolume",
		Indexes:     map[string]func(*v1.PersistentVolume) []string{IndexStorageClass: PVStorageClass},
	})
}

// NewPVCAssume returns an Assume cache of PersistentVolumeClaims, keyed by
// "namespace/name" (ClaimKey) and indexed by namespace (IndexNamespace).
func NewPVCAssume() *Assume[*v1.PersistentVolumeClaim] {
	return NewAssume(AssumeConfig[*v1.PersistentVolumeClaim]{
		Description: "PersistentVolumeClaim",
		Indexes:     map[string]func(*v1.PersistentVolumeClaim) []string{IndexNamespace: PVCNamespace},
	})
}

// PVsOfClass returns the latest versions of the volumes of storage class
// class ("" = volumes without a class) from a cache built by NewPVAssume. The
// volumes are shared: do not mutate them.
func PVsOfClass(c *Assume[*v1.PersistentVolume], class string) []*v1.PersistentVolume {
	return c.List(IndexStorageClass, class)
}

// ClaimsInNamespace returns the latest versions of the claims of namespace
// from a cache built by NewPVCAssume. The claims are shared: do not mutate
// them.
func ClaimsInNamespace(c *Assume[*v1.PersistentVolumeClaim], namespace string) []*v1.PersistentVolumeClaim {
	return c.List(IndexNamespace, namespace)
}

// GetVolume returns the latest version of the volume name from a volume
// cache. The volume is shared: do not mutate it.
func GetVolume(c *Assume[*v1.PersistentVolume], name string) (*v1.PersistentVolume, bool) {
	return c.Get(name)
}

// GetClaim returns the latest version of the claim namespace/name from a
// claim cache. The claim is shared: do not mutate it.
func GetClaim(c *Assume[*v1.PersistentVolumeClaim], namespace, name string) (*v1.PersistentVolumeClaim, bool) {
	return c.Get(ClaimKey(namespace, name))
}

var (
	_ toolscache.ResourceEventHandler = (*Assume[*v1.PersistentVolume])(nil)
	_ toolscache.ResourceEventHandler = (*Assume[*v1.PersistentVolumeClaim])(nil)
)
