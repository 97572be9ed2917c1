package randcluster

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

var (
	// volumeClasses are drawn for volumes; "missing" has no class object.
	volumeClasses = []string{"", "manual", "manual", "fast", "local", "local", "zonal", "tracked", "missing"}
	// claimClasses are drawn for claims; "-" means no class at all (nil).
	claimClasses = []string{"-", "", "manual", "manual", "fast", "local", "local", "zonal", "tracked", "gce", "legacy", "missing"}
	volumeSizes  = []string{"1Gi", "2Gi", "5Gi", "10Gi", "20Gi", "1500Mi"}
	claimSizes   = []string{"1Gi", "2Gi", "5Gi", "10Gi", "15Gi"}
	tiers        = []string{"hot", "cold"}
)

func metavOf(name, namespace string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}
}

func (g *gen) classes() {
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	mk := func(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	}
	cs := []*storagev1.StorageClass{
		mk("manual", volume.NotSupportedProvisioner, imm),
		mk("fast", Disk, imm),
		mk("local", volume.NotSupportedProvisioner, wffc),
		mk("zonal", Disk, wffc),
		mk("tracked", Tracked, wffc),
		mk("gce", Migrated, imm),
		mk("legacy", Unserved, imm),
	}
	if g.chance(40) {
		cs[3].AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: v1.LabelTopologyZone, Values: []string{g.pick(Zones)}}}}}
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, sc := range cs {
		sc.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(i) * time.Minute))
	}
	for range g.r.IntN(3) { // 0, 1 or 2 default classes
		if g.chance(60) {
			metav1.SetMetaDataAnnotation(&cs[g.r.IntN(len(cs))].ObjectMeta, "storageclass.kubernetes.io/is-default-class", "true")
		}
	}
	g.c.Classes = cs
}

func (g *gen) storage() {
	g.c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: Tracked},
		Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}}}
	for i, z := range Zones {
		if g.chance(25) {
			continue
		}
		c := &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Name: fmt.Sprintf("cap-%d", i), Namespace: Namespace},
			StorageClassName: "tracked",
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: z}},
			Capacity:         ptr.To(resource.MustParse(g.pick(claimSizes))),
		}
		if g.chance(30) {
			c.MaximumVolumeSize = ptr.To(resource.MustParse(g.pick(claimSizes)))
		}
		g.c.Capacities = append(g.c.Capacities, c)
	}
}

func (g *gen) modes(forClaim bool) []v1.PersistentVolumeAccessMode {
	rwo, rox, rwx, rwop := v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany, v1.ReadWriteOncePod
	switch r := g.r.IntN(100); {
	case r < 55:
		return []v1.PersistentVolumeAccessMode{rwo}
	case r < 67:
		return []v1.PersistentVolumeAccessMode{rwo, rox}
	case r < 77:
		return []v1.PersistentVolumeAccessMode{rwx}
	case r < 85 && !forClaim:
		return []v1.PersistentVolumeAccessMode{rwo, rwx}
	case r < 93:
		return []v1.PersistentVolumeAccessMode{rwop}
	}
	return []v1.PersistentVolumeAccessMode{rox}
}

// volume adds an unbound volume (of class, when given) and returns it.
func (g *gen) volume(class *string) *v1.PersistentVolume {
	name := fmt.Sprintf("pv-%02d", g.vols)
	g.vols++
	cl := g.pick(volumeClasses)
	if class != nil {
		cl = *class
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(g.pick(volumeSizes))},
			AccessModes:                   g.modes(false),
			StorageClassName:              cl,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: Disk, VolumeHandle: name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	g.volumeAttributes(pv)
	g.c.Volumes = append(g.c.Volumes, pv)
	return pv
}

// volumeAttributes draws the volume's optional attributes.
func (g *gen) volumeAttributes(pv *v1.PersistentVolume) {
	if g.chance(10) {
		pv.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock)
	}
	if g.chance(50) {
		pv.Labels = map[string]string{"tier": g.pick(tiers)}
	}
	var expr v1.NodeSelectorRequirement
	switch r := g.r.IntN(4); r {
	case 0:
		node := g.c.Nodes[g.r.IntN(len(g.c.Nodes))]
		expr = v1.NodeSelectorRequirement{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node.Labels[v1.LabelHostname]}}
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + pv.Name}}
	case 1:
		expr = v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{g.pick(Zones)}}
	}
	if expr.Key != "" {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{expr}}}}}
	}
	switch r := g.r.IntN(100); {
	case r < 8:
		pv.Status.Phase = v1.VolumePending
	case r < 11:
		pv.Status.Phase = v1.VolumeReleased
	case r < 13:
		pv.Status.Phase, pv.Status.Message = v1.VolumeFailed, "recycle failed"
	}
	switch r := g.r.IntN(100); {
	case r < 5:
		pv.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
		pv.Finalizers = []string{"kubernetes.io/pv-protection"}
	case r < 20 && pv.Spec.Local == nil:
		pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRecycle
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "nfs.example.com", Path: "/" + pv.Name}}
	case r < 40:
		pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
	}
	if pv.Spec.CSI != nil && g.chance(10) { // only CSI volumes may have one
		pv.Spec.VolumeAttributesClassName = ptr.To("gold")
	}
}

// claim adds claim i in a random state.
func (g *gen) claim(i int) {
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%d", i), Namespace: Namespace,
			UID: types.UID(fmt.Sprintf("uid-claim-%d", i))},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: g.modes(true),
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(g.pick(claimSizes))}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	if cl := g.pick(claimClasses); cl != "-" {
		pvc.Spec.StorageClassName = ptr.To(cl)
	}
	if g.chance(10) {
		pvc.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock)
	}
	switch r := g.r.IntN(100); {
	case r < 10:
		pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": g.pick(tiers)}}
	case r < 15:
		pvc.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"hot"}}}}
	}
	if g.chance(8) {
		pvc.Spec.VolumeAttributesClassName = ptr.To("gold")
	}
	g.claimState(pvc)
	if g.chance(3) {
		pvc.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
		pvc.Finalizers = []string{"kubernetes.io/pvc-protection"}
	}
	g.c.Claims = append(g.c.Claims, pvc)
}

func pvcSize(s string) resource.Quantity { return resource.MustParse(s) }
