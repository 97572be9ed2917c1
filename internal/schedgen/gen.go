package schedgen

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	csiplugins "k8s.io/csi-translation-lib/plugins"
	"k8s.io/utils/ptr"
)

// Names the generated objects use.
const (
	// Namespace holds the pod, its claims and the CSIStorageCapacities.
	Namespace = "ns"
	// CapacityDriver is the provisioner of class "tracked": a CSIDriver
	// with storageCapacity, whose CSIStorageCapacities cover some zones.
	CapacityDriver = "cap.csi.example.com"
	// PlainDriver is the provisioner of classes "zonal" and "fast", and
	// the driver of generated CSI volumes.
	PlainDriver = "csi.example.com"
	// PodUID is the generated pod's UID, which owns its ephemeral claims.
	PodUID = types.UID("pod-uid")
)

// Cluster is one generated case: a small cluster and a pod to schedule.
type Cluster struct {
	// Seed is the seed the cluster was generated from.
	Seed uint64
	// Nodes are the cluster's nodes.
	Nodes []*v1.Node
	// Objects are the other objects: StorageClasses, CSIDrivers,
	// CSINodes, CSIStorageCapacities, PersistentVolumes and
	// PersistentVolumeClaims.
	Objects []runtime.Object
	// Pod is the pod to schedule, not bound to a node.
	Pod *v1.Pod
}

// AllObjects returns copies of the nodes, the objects and the pod, to
// seed an API server with.
func (c *Cluster) AllObjects() []runtime.Object {
	out := make([]runtime.Object, 0, len(c.Objects)+len(c.Nodes)+1)
	for _, o := range c.Objects {
		out = append(out, o.DeepCopyObject())
	}
	for _, n := range c.Nodes {
		out = append(out, n.DeepCopy())
	}
	return append(out, c.Pod.DeepCopy())
}

var (
	zoneNames = []string{"z1", "z2", "z3"}
	sizes     = []string{"1Gi", "2Gi", "5Gi", "10Gi"}
	// classNames are the classes claims draw from, by weight.
	classNames = []string{"local", "local", "local", "zonal", "zonal", "tracked", "tracked", "fast", "intree"}
	// migratedPlugins are the CSINode annotations nodes draw from.
	migratedPlugins = []string{
		csiplugins.AWSEBSInTreePluginName,
		csiplugins.GCEPDInTreePluginName + "," + csiplugins.AWSEBSInTreePluginName,
		csiplugins.GCEPDInTreePluginName,
		csiplugins.AzureDiskInTreePluginName,
	}
)

// gen is the state of one Generate call.
type gen struct {
	r *rand.Rand
	c *Cluster
}

// Generate returns the cluster of seed.
func Generate(seed uint64) *Cluster {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), c: &Cluster{Seed: seed}}
	g.nodes()
	g.classes()
	g.pod()
	return g.c
}

// pick returns n distinct elements of from.
func (g *gen) pick(from []string, n int) []string {
	out := make([]string, 0, n)
	for _, i := range g.r.Perm(len(from))[:n] {
		out = append(out, from[i])
	}
	return out
}

func (g *gen) zone() string { return zoneNames[g.r.IntN(len(zoneNames))] }

// chance reports true with probability 1/n.
func (g *gen) chance(n int) bool { return g.r.IntN(n) == 0 }

// nodes makes 2-8 nodes: hostnames that sometimes differ from the node
// name; a zone under the GA key, the beta key, both or neither; sometimes
// a region; sometimes the CSI drivers' zone labels (not always the node's
// zone); and for some a CSINode.
func (g *gen) nodes() {
	for i := range 2 + g.r.IntN(7) {
		name := fmt.Sprintf("node-%d", i)
		host := fmt.Sprintf("host-%d", i)
		if g.chance(4) {
			host = fmt.Sprintf("h%d.example.com", i)
		}
		labels := map[string]string{v1.LabelHostname: host}
		zone := g.zone()
		switch g.r.IntN(8) {
		case 0:
			labels[v1.LabelFailureDomainBetaZone] = zone
		case 1:
			labels[v1.LabelFailureDomainBetaZone], labels[v1.LabelTopologyZone] = zone, zone
		case 2:
		default:
			labels[v1.LabelTopologyZone] = zone
		}
		if g.chance(3) {
			labels[v1.LabelTopologyRegion] = "r1"
		}
		if g.chance(2) {
			labels[csiplugins.AWSEBSTopologyKey] = g.otherZone(zone)
		}
		if g.chance(2) {
			labels[csiplugins.GCEPDTopologyKey] = g.otherZone(zone)
		}
		g.c.Nodes = append(g.c.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1", Labels: labels}})
		switch g.r.IntN(4) {
		case 0:
		case 1:
			g.add(&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}})
		default:
			g.add(&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1",
				Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: migratedPlugins[g.r.IntN(len(migratedPlugins))]}}})
		}
	}
}

// otherZone returns zone, or now and then another one.
func (g *gen) otherZone(zone string) string {
	if g.chance(4) {
		return g.zone()
	}
	return zone
}

func (g *gen) add(o runtime.Object) { g.c.Objects = append(g.c.Objects, o) }

// classes makes the classes claims use: "local" (WaitForFirstConsumer, no
// provisioner), "zonal" and "tracked" (WaitForFirstConsumer, provisioning,
// with random allowedTopologies and zone/zones parameters; "tracked" with
// CSIStorageCapacity), "fast" (Immediate), "intree" (WaitForFirstConsumer,
// the in-tree AWS EBS provisioner) and "nomode" (no volumeBindingMode, as
// only a fake API server stores it).
func (g *gen) classes() {
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	classes := []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: volume.NotSupportedProvisioner, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "zonal"}, Provisioner: PlainDriver, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "tracked"}, Provisioner: CapacityDriver, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: PlainDriver, VolumeBindingMode: &imm},
		{ObjectMeta: metav1.ObjectMeta{Name: "intree"}, Provisioner: csiplugins.AWSEBSInTreePluginName, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "nomode"}, Provisioner: PlainDriver},
	}
	if g.chance(2) {
		classes[1].AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: v1.LabelTopologyZone, Values: g.pick(zoneNames, 1+g.r.IntN(2))}}}}
	}
	for _, sc := range classes[1:3] {
		switch g.r.IntN(4) {
		case 0:
			sc.Parameters = map[string]string{"zone": g.zone()}
		case 1:
			sc.Parameters = map[string]string{"Zones": g.zone() + ", " + g.zone()}
		}
	}
	for _, sc := range classes {
		sc.ResourceVersion = "1"
		g.add(sc)
	}
	g.add(&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: CapacityDriver, ResourceVersion: "1"},
		Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}})
	for i, z := range zoneNames {
		if g.chance(4) {
			continue
		}
		q := resource.MustParse(sizes[g.r.IntN(len(sizes))])
		g.add(&storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Name: fmt.Sprintf("cap-%d", i), Namespace: Namespace, ResourceVersion: "1"},
			StorageClassName: "tracked",
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: z}},
			Capacity:         &q,
		})
	}
}

// volume returns an Available volume of class with a random size and
// placement: pinned to a host (local), to a zone (GA or beta key) or
// nothing; sometimes with legacy zone labels that agree with its affinity
// or not. A volume of class "intree" is an AWS EBS or GCE PD disk whose
// labels (and sometimes affinity) place it in zones.
func (g *gen) volume(name, class string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(sizes[g.r.IntN(len(sizes))])},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: PlainDriver, VolumeHandle: name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if class == "intree" {
		g.inTree(pv)
		return pv
	}
	switch g.r.IntN(5) {
	case 0, 1:
		node := g.c.Nodes[g.r.IntN(len(g.c.Nodes))]
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}}
		setAffinity(pv, v1.LabelHostname, node.Labels[v1.LabelHostname])
	case 2:
		setAffinity(pv, g.zoneKey(), g.zone())
	}
	if g.chance(4) {
		g.zoneLabels(pv)
	}
	return pv
}

// inTree makes pv an AWS EBS or GCE PD disk labelled with its zones, with
// node affinity on a zone key now and then.
func (g *gen) inTree(pv *v1.PersistentVolume) {
	if g.chance(2) {
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{
			AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://" + pv.Name, FSType: "ext4"}}
	} else {
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{
			GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: pv.Name, FSType: "ext4"}}
	}
	g.zoneLabels(pv)
	if g.chance(3) {
		setAffinity(pv, g.zoneKey(), g.zone())
	}
}

// zoneKey returns the GA zone key, or now and then the beta one.
func (g *gen) zoneKey() string {
	if g.chance(4) {
		return v1.LabelFailureDomainBetaZone
	}
	return v1.LabelTopologyZone
}

// zoneLabels gives pv legacy zone labels: one zone or two ("z1__z2"), under
// the GA key, the beta key or both, now and then a region label, and
// rarely a value that does not parse.
func (g *gen) zoneLabels(pv *v1.PersistentVolume) {
	value := g.zone()
	switch g.r.IntN(6) {
	case 0:
		value = g.pick(zoneNames, 2)[0] + "__" + g.pick(zoneNames, 1)[0]
	case 1:
		if g.chance(3) {
			value += "__"
		}
	}
	if pv.Labels == nil {
		pv.Labels = map[string]string{}
	}
	switch g.r.IntN(4) {
	case 0:
		pv.Labels[v1.LabelFailureDomainBetaZone] = value
	case 1:
		pv.Labels[v1.LabelFailureDomainBetaZone], pv.Labels[v1.LabelTopologyZone] = value, value
	default:
		pv.Labels[v1.LabelTopologyZone] = value
	}
	if g.chance(4) {
		pv.Labels[v1.LabelTopologyRegion] = "r1"
	}
}

func setAffinity(pv *v1.PersistentVolume, key, value string) {
	pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}}}}}}
}

// pod makes up to 30 volumes of the first three classes and the pod
// web-0 with 1-3 claims in random states, now and then of a generic
// ephemeral volume.
func (g *gen) pod() {
	var pvs []*v1.PersistentVolume
	for i := range g.r.IntN(31) {
		pvs = append(pvs, g.volume(fmt.Sprintf("pv-%02d", i), classNames[g.r.IntN(3)]))
	}
	for i := range g.r.IntN(3) {
		pvs = append(pvs, g.volume(fmt.Sprintf("disk-%02d", i), "intree"))
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: Namespace, UID: PodUID, ResourceVersion: "1"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}}}
	for i := range 1 + g.r.IntN(3) {
		vol := v1.Volume{Name: fmt.Sprintf("v%d", i)}
		name := fmt.Sprintf("data%d-web-0", i)
		ephemeral := g.chance(8)
		if ephemeral {
			name = pod.Name + "-" + vol.Name
			vol.Ephemeral = &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{}}
		} else {
			vol.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		if g.chance(30) {
			continue // the claim does not exist
		}
		claim := g.claim(name, i)
		if ephemeral && !g.chance(5) {
			claim.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: PodUID, Controller: ptr.To(true)}}
		}
		g.claimState(claim, &pvs)
		g.add(claim)
	}
	for _, pv := range pvs {
		g.add(pv)
	}
	g.c.Pod = pod
}

// claim returns an unbound claim of a random class; now and then of a
// class that does not exist or has no volumeBindingMode.
func (g *gen) claim(name string, i int) *v1.PersistentVolumeClaim {
	class := classNames[g.r.IntN(len(classNames))]
	switch {
	case g.chance(40):
		class = "missing"
	case g.chance(60):
		class = "nomode"
	}
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, ResourceVersion: "1",
			UID: types.UID(fmt.Sprintf("claim-uid-%d", i))},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceStorage: resource.MustParse(sizes[g.r.IntN(len(sizes)-1)])}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// claimState puts claim in a random state, binding or pre-binding volumes
// of pvs (or adding new ones) as that state needs.
func (g *gen) claimState(claim *v1.PersistentVolumeClaim, pvs *[]*v1.PersistentVolume) {
	ref := &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: Namespace, Name: claim.Name, UID: claim.UID}
	class := *claim.Spec.StorageClassName
	switch k := g.r.IntN(24); {
	case k < 9 || k >= 20: // unbound
	case k < 14: // bound to a volume
		pv := g.volume("bound-"+claim.Name, class)
		pv.Spec.ClaimRef, pv.Status.Phase = ref, v1.VolumeBound
		*pvs = append(*pvs, pv)
		claim.Spec.VolumeName, claim.Status.Phase = pv.Name, v1.ClaimBound
		claim.Annotations = map[string]string{volume.AnnBindCompleted: "yes"}
	case k == 14: // bound to a volume that does not exist
		claim.Spec.VolumeName, claim.Status.Phase = "gone-"+claim.Name, v1.ClaimBound
		claim.Annotations = map[string]string{volume.AnnBindCompleted: "yes"}
	case k == 15: // pre-bound by name
		claim.Spec.VolumeName = "wanted-" + claim.Name
	case k == 16: // a volume pre-bound to the claim
		pv := g.volume("pre-"+claim.Name, class)
		pv.Spec.ClaimRef = ref
		pv.Spec.Capacity[v1.ResourceStorage] = resource.MustParse(sizes[len(sizes)-1])
		*pvs = append(*pvs, pv)
	case k == 17: // being provisioned for a node
		claim.Annotations = map[string]string{volume.AnnSelectedNode: g.c.Nodes[g.r.IntN(len(g.c.Nodes))].Name}
	case k == 18: // lost
		claim.Status.Phase = v1.ClaimLost
		claim.Spec.VolumeName = "lost-" + claim.Name
	case k == 19: // being deleted
		claim.DeletionTimestamp = &metav1.Time{}
		claim.Finalizers = []string{"kubernetes.io/pvc-protection"}
	}
}
