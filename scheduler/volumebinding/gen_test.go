package volumebinding

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
	"k8s.io/utils/ptr"
)

// cluster is one random differential case: the objects of a small
// cluster and a pod to schedule.
type cluster struct {
	nodes   []*v1.Node
	objects []runtime.Object // classes, drivers, capacities, volumes, claims
	pod     *v1.Pod
}

const (
	ns          = "ns"
	capDriver   = "cap.csi.example.com"
	plainDriver = "csi.example.com"
)

var (
	zonesList = []string{"z1", "z2", "z3"}
	sizes     = []string{"1Gi", "2Gi", "5Gi", "10Gi"}
)

// genCluster builds the case of seed: 2-8 nodes with zones and
// hostnames, WaitForFirstConsumer and Immediate classes with and without
// provisioners (one tracking CSIStorageCapacity), 0-30 volumes pinned to a
// host, a zone or nothing, Available, pre-bound or bound, and a pod with
// 1-3 claims that are unbound, bound, pre-bound by name, bound to a missing
// volume, selected for a node, lost or being deleted.
func genCluster(seed uint64) *cluster {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &cluster{}
	for i := range 2 + r.IntN(7) {
		host := fmt.Sprintf("host-%d", i)
		if r.IntN(4) == 0 {
			host = fmt.Sprintf("h%d.example.com", i) // hostname label differs from the node name
		}
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), ResourceVersion: "1",
			Labels: map[string]string{v1.LabelHostname: host, v1.LabelTopologyZone: zonesList[r.IntN(len(zonesList))]}}}
		c.nodes = append(c.nodes, n)
	}
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	classes := []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: volume.NotSupportedProvisioner, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "zonal"}, Provisioner: plainDriver, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "tracked"}, Provisioner: capDriver, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: plainDriver, VolumeBindingMode: &imm},
	}
	if r.IntN(2) == 0 {
		classes[1].AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: v1.LabelTopologyZone, Values: pick(r, zonesList, 1+r.IntN(2))}}}}
	}
	for _, sc := range classes {
		sc.ResourceVersion = "1"
		c.objects = append(c.objects, sc)
	}
	c.objects = append(c.objects, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: capDriver, ResourceVersion: "1"},
		Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}})
	for i, z := range zonesList {
		if r.IntN(4) == 0 {
			continue
		}
		q := resource.MustParse(sizes[r.IntN(len(sizes))])
		c.objects = append(c.objects, &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Name: fmt.Sprintf("cap-%d", i), Namespace: ns, ResourceVersion: "1"},
			StorageClassName: "tracked",
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: z}},
			Capacity:         &q,
		})
	}
	c.genPod(r)
	return c
}

func pick(r *rand.Rand, from []string, n int) []string {
	out := make([]string, 0, n)
	for _, i := range r.Perm(len(from))[:n] {
		out = append(out, from[i])
	}
	return out
}

// genVolume returns an Available volume of class with random size and
// placement.
func (c *cluster) genVolume(r *rand.Rand, name, class string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(sizes[r.IntN(len(sizes))])},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: plainDriver, VolumeHandle: name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	var expr v1.NodeSelectorRequirement
	switch r.IntN(4) {
	case 0, 1:
		node := c.nodes[r.IntN(len(c.nodes))]
		expr = v1.NodeSelectorRequirement{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node.Labels[v1.LabelHostname]}}
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}}
	case 2:
		expr = v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: pick(r, zonesList, 1)}
	default:
		return pv
	}
	pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{expr}}}}}
	return pv
}

func (c *cluster) genPod(r *rand.Rand) {
	classes := []string{"local", "local", "local", "zonal", "zonal", "tracked", "tracked", "fast"}
	var pvs []*v1.PersistentVolume
	for i := range r.IntN(31) {
		pvs = append(pvs, c.genVolume(r, fmt.Sprintf("pv-%02d", i), classes[r.IntN(3)]))
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: ns, UID: "pod-uid", ResourceVersion: "1"}}
	for i := range 1 + r.IntN(3) {
		claim := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("data%d-web-0", i), Namespace: ns, ResourceVersion: "1",
				UID: types.UID(fmt.Sprintf("claim-uid-%d", i))},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName: ptr.To(classes[r.IntN(len(classes))]),
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceStorage: resource.MustParse(sizes[r.IntN(len(sizes)-1)])}},
			},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
		}
		c.claimState(r, claim, &pvs)
		c.objects = append(c.objects, claim)
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("v%d", i),
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}})
	}
	for _, pv := range pvs {
		c.objects = append(c.objects, pv)
	}
	c.pod = pod
}

// claimState puts claim in a random state, binding or pre-binding volumes
// of pvs (or adding new ones) as that state needs.
func (c *cluster) claimState(r *rand.Rand, claim *v1.PersistentVolumeClaim, pvs *[]*v1.PersistentVolume) {
	ref := &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim.Name, UID: claim.UID}
	switch k := r.IntN(24); {
	case k < 10 || k >= 20: // unbound
	case k < 14: // bound to a volume
		pv := c.genVolume(r, "bound-"+claim.Name, *claim.Spec.StorageClassName)
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
		pv := c.genVolume(r, "pre-"+claim.Name, *claim.Spec.StorageClassName)
		pv.Spec.ClaimRef = ref
		pv.Spec.Capacity[v1.ResourceStorage] = resource.MustParse(sizes[len(sizes)-1])
		*pvs = append(*pvs, pv)
	case k == 17: // being provisioned for a node
		claim.Annotations = map[string]string{volume.AnnSelectedNode: c.nodes[r.IntN(len(c.nodes))].Name}
	case k == 18: // lost
		claim.Status.Phase = v1.ClaimLost
		claim.Spec.VolumeName = "lost-" + claim.Name
	case k == 19: // being deleted
		claim.DeletionTimestamp = &metav1.Time{}
		claim.Finalizers = []string{"kubernetes.io/pvc-protection"}
	}
}
