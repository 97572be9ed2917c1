// Package randcluster generates small random clusters for randomized
// differential tests: storage classes of every binding mode and kind of
// provisioner, volumes and claims that differ in every attribute a match
// reads (class, access modes, volume mode, size, labels and selectors,
// VolumeAttributesClass, node affinity, phase, deletion) and in every
// binding state (unbound, pre-bound by either side, bound, half-bound,
// released, lost), nodes in zones, pods that use the claims, and a CSI
// driver that tracks capacity with its CSIStorageCapacity objects.
//
// Generate(seed) returns the same cluster for the same seed. Every object
// passes kube-apiserver's validation (binder/bindertest.Validate), so a
// cluster can be seeded into a bindertest.Server. It is this repository's
// test machinery, not an API.
package randcluster

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Namespace is the namespace of every namespaced object.
const Namespace = "ns"

// Provisioner names of the generated classes.
const (
	// Disk is the provisioner of "fast" and "zonal": a test may run it in
	// the Binder (in-tree) or leave it external.
	Disk = "disk.example.com"
	// Tracked is the provisioner of "tracked", a CSI driver with
	// storageCapacity: true and CSIStorageCapacity objects per zone.
	Tracked = "cap.example.com"
	// Migrated is the provisioner of "gce", an in-tree plugin that
	// csi-translation-lib migrates to pd.csi.storage.gke.io.
	Migrated = "kubernetes.io/gce-pd"
	// Unserved is the provisioner of "legacy", an in-tree name no plugin
	// serves.
	Unserved = "kubernetes.io/host-path"
)

// Zones are the zones of the nodes.
var Zones = []string{"z1", "z2", "z3"}

// Cluster is one generated cluster.
type Cluster struct {
	Classes    []*storagev1.StorageClass
	Volumes    []*v1.PersistentVolume
	Claims     []*v1.PersistentVolumeClaim
	Nodes      []*v1.Node
	Pods       []*v1.Pod
	CSIDrivers []*storagev1.CSIDriver
	Capacities []*storagev1.CSIStorageCapacity
}

// Objects returns the classes, nodes, volumes, claims and pods, the kinds
// a bindertest.Server holds.
func (c *Cluster) Objects() []runtime.Object {
	var out []runtime.Object
	for _, o := range c.Classes {
		out = append(out, o)
	}
	for _, o := range c.Nodes {
		out = append(out, o)
	}
	for _, o := range c.Volumes {
		out = append(out, o)
	}
	for _, o := range c.Claims {
		out = append(out, o)
	}
	for _, o := range c.Pods {
		out = append(out, o)
	}
	return out
}

// gen is the state of one generation.
type gen struct {
	r *rand.Rand
	c *Cluster
	// vols counts volumes, to name them.
	vols int
}

// Generate returns the cluster of seed.
func Generate(seed uint64) *Cluster {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5ca1ab1e)), c: &Cluster{}}
	g.nodes()
	g.classes()
	g.storage()
	for range g.r.IntN(12) {
		g.volume(nil)
	}
	n := 1 + g.r.IntN(10)
	for i := range n {
		g.claim(i)
	}
	g.pods()
	return g.c
}

func (g *gen) pick(from []string) string { return from[g.r.IntN(len(from))] }

func (g *gen) chance(percent int) bool { return g.r.IntN(100) < percent }

func (g *gen) nodes() {
	for i := range 2 + g.r.IntN(5) {
		host := fmt.Sprintf("node-%d", i)
		if g.chance(20) {
			host = fmt.Sprintf("h%d.example.com", i) // the hostname label differs from the node name
		}
		labels := map[string]string{v1.LabelHostname: host, v1.LabelTopologyZone: g.pick(Zones)}
		if g.chance(70) {
			labels[v1.LabelTopologyRegion] = "r1"
		}
		g.c.Nodes = append(g.c.Nodes, &v1.Node{ObjectMeta: metavOf(fmt.Sprintf("node-%d", i), "", labels)})
	}
}
