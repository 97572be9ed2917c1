//go:build e2e && linux

package e2e

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"strings"
)

// vnames are the names a validation case may use: ns is the test's
// namespace, name a name unique in the cluster for cluster-scoped kinds.
type vnames struct{ ns, name string }

// vcase is one write sent to both bindertest and kube-apiserver. obj is
// created; when update is set, the created object (as each server
// returned it) is changed by update and sent as an update, or a status
// update when status is set. pre, when set, is a status update made
// before update (to bind a claim).
type vcase struct {
	name   string
	obj    func(n vnames) runtime.Object
	pre    func(runtime.Object)
	update func(runtime.Object)
	status bool
}

func gi(s string) resource.Quantity { return resource.MustParse(s) }

func pvMut(mut ...func(*v1.PersistentVolume)) func(vnames) runtime.Object {
	return func(n vnames) runtime.Object {
		pv := &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{testLabel: n.ns}},
			Spec: v1.PersistentVolumeSpec{
				Capacity:               v1.ResourceList{v1.ResourceStorage: gi("1Gi")},
				AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + n.name}},
			},
		}
		for _, m := range mut {
			m(pv)
		}
		return pv
	}
}

func pvcMut(mut ...func(*v1.PersistentVolumeClaim)) func(vnames) runtime.Object {
	return func(n vnames) runtime.Object {
		pvc := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: n.ns, Name: "claim"},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gi("1Gi")}},
				StorageClassName: ptr.To("gold"),
			},
		}
		for _, m := range mut {
			m(pvc)
		}
		return pvc
	}
}

func classMut(mut ...func(*storagev1.StorageClass)) func(vnames) runtime.Object {
	return func(n vnames) runtime.Object {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: n.name}, Provisioner: "example.com/disk",
			Parameters: map[string]string{"type": "ssd"}}
		for _, m := range mut {
			m(sc)
		}
		return sc
	}
}

func nodeMut(mut ...func(*v1.Node)) func(vnames) runtime.Object {
	return func(n vnames) runtime.Object {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}}
		for _, m := range mut {
			m(node)
		}
		return node
	}
}

func podMut(mut ...func(*v1.Pod)) func(vnames) runtime.Object {
	return func(n vnames) runtime.Object {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: n.ns, Name: "pod"},
			Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "app", Image: "busybox",
					VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
				Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
					PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}},
			},
		}
		for _, m := range mut {
			m(pod)
		}
		return pod
	}
}

func nodeAffinityOf(reqs ...v1.NodeSelectorRequirement) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
}

// nameOfLength pads a volume's name to n bytes.
func nameOfLength(n int) func(*v1.PersistentVolume) {
	return func(pv *v1.PersistentVolume) { pv.Name += strings.Repeat("a", n-len(pv.Name)) }
}

// label adds a label to a volume.
func label(key, value string) func(*v1.PersistentVolume) {
	return func(pv *v1.PersistentVolume) { pv.Labels[key] = value }
}

func local(pv *v1.PersistentVolume) {
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk"}}
}

func csi(pv *v1.PersistentVolume) {
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h1"}}
}

func asPV(o runtime.Object) *v1.PersistentVolume       { return o.(*v1.PersistentVolume) }
func asPVC(o runtime.Object) *v1.PersistentVolumeClaim { return o.(*v1.PersistentVolumeClaim) }
func asClass(o runtime.Object) *storagev1.StorageClass { return o.(*storagev1.StorageClass) }
func asNode(o runtime.Object) *v1.Node                 { return o.(*v1.Node) }
func asPod(o runtime.Object) *v1.Pod                   { return o.(*v1.Pod) }
func setPVC(f func(*v1.PersistentVolumeClaim)) func(runtime.Object) {
	return func(o runtime.Object) { f(asPVC(o)) }
}

// bindClaim is a status update to Bound with 1Gi of capacity.
func bindClaim(o runtime.Object) {
	c := asPVC(o)
	c.Status.Phase = v1.ClaimBound
	c.Status.AccessModes = c.Spec.AccessModes
	c.Status.Capacity = v1.ResourceList{v1.ResourceStorage: gi("1Gi")}
}

// validationCases is the differential table: every write kube-apiserver
// accepts or rejects, bindertest must accept or reject with the same
// field paths and error types.
func validationCases() []vcase {
	in := func(key string, values ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}
	}
	return []vcase{
		// PersistentVolume create.
		{name: "pv valid hostPath", obj: pvMut()},
		{name: "pv valid csi", obj: pvMut(csi)},
		{name: "pv valid local with affinity", obj: pvMut(local, func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = nodeAffinityOf(in("zone", "a")) })},
		{name: "pv valid generateName", obj: pvMut(func(pv *v1.PersistentVolume) { pv.GenerateName, pv.Name = pv.Name+"-", "" })},
		{name: "pv claimRef of any shape", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.ClaimRef = &v1.ObjectReference{Name: "x"} })},
		{name: "pv bad name", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Name = "Bad_Name!" })},
		// The edges of the format checks bindertest makes without regular
		// expressions (binder/bindertest/validation_names.go).
		{name: "pv name of 253 bytes", obj: pvMut(nameOfLength(253))},
		{name: "pv name of 254 bytes", obj: pvMut(nameOfLength(254))},
		{name: "pv name of dotted labels", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Name += ".x-1.2" })},
		{name: "pv name with an empty label", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Name += "..x" })},
		{name: "pv name ending in a dash", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Name += "-" })},
		{name: "pv label value of 63 bytes", obj: pvMut(label("example.com/Tier", strings.Repeat("v", 63)))},
		{name: "pv label value of 64 bytes", obj: pvMut(label("tier", strings.Repeat("v", 64)))},
		{name: "pv label value ending in a dot", obj: pvMut(label("tier", "a."))},
		{name: "pv label key of an upper-case prefix", obj: pvMut(label("Example.com/tier", "a"))},
		{name: "pv label key of two slashes", obj: pvMut(label("example.com/a/b", "a"))},
		{name: "pv annotation key of an upper-case prefix", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Annotations = map[string]string{"Example.COM/Note": "x"}
		})},
		{name: "pv annotation key with a space", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Annotations = map[string]string{"a note": "x"} })},
		{name: "pv csi driver in upper case", obj: pvMut(csi, func(pv *v1.PersistentVolume) { pv.Spec.CSI.Driver = "CSI.Example.com" })},
		{name: "pv csi driver of 64 bytes", obj: pvMut(csi, func(pv *v1.PersistentVolume) { pv.Spec.CSI.Driver = strings.Repeat("d", 60) + ".com" })},
		{name: "pv csi driver ending in a dot", obj: pvMut(csi, func(pv *v1.PersistentVolume) { pv.Spec.CSI.Driver = "csi.example." })},
		{name: "pv affinity of a prefixed key and mixed-case value", obj: pvMut(local, func(pv *v1.PersistentVolume) {
			pv.Spec.NodeAffinity = nodeAffinityOf(in(v1.LabelTopologyZone, "Zone_A.1"), in("example.com/Rack", "r1", "r2"))
		})},
		{name: "pv affinity of a node name field", obj: pvMut(local, func(pv *v1.PersistentVolume) {
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"node-1"}}},
			}}}}
		})},
		{name: "pv affinity value of 64 bytes", obj: pvMut(local, func(pv *v1.PersistentVolume) {
			pv.Spec.NodeAffinity = nodeAffinityOf(in("zone", strings.Repeat("z", 64)))
		})},
		{name: "pv capacity 0", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.Capacity[v1.ResourceStorage] = gi("0") })},
		{name: "pv negative capacity", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.Capacity[v1.ResourceStorage] = gi("-1Gi") })},
		{name: "pv no capacity", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.Capacity = nil })},
		{name: "pv capacity with cpu", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.Capacity[v1.ResourceCPU] = gi("1") })},
		{name: "pv no access modes", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.AccessModes = nil })},
		{name: "pv unknown access mode", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{"ReadSometimes"} })},
		{name: "pv ReadWriteOncePod with others", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod, v1.ReadWriteOnce}
		})},
		{name: "pv no volume source", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{} })},
		{name: "pv two volume sources", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.NFS = &v1.NFSVolumeSource{Server: "nfs", Path: "/x"} })},
		{name: "pv local without affinity", obj: pvMut(local)},
		{name: "pv affinity without required", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{} })},
		{name: "pv affinity without terms", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{}}
		})},
		{name: "pv affinity bad operator", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Spec.NodeAffinity = nodeAffinityOf(v1.NodeSelectorRequirement{Key: "zone", Operator: "Near", Values: []string{"a"}})
		})},
		{name: "pv affinity In without values", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = nodeAffinityOf(in("zone")) })},
		{name: "pv affinity bad key and value", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = nodeAffinityOf(in("bad key", "bad value!")) })},
		{name: "pv affinity Exists with values", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Spec.NodeAffinity = nodeAffinityOf(v1.NodeSelectorRequirement{Key: "zone", Operator: v1.NodeSelectorOpExists, Values: []string{"a"}})
		})},
		{name: "pv unknown reclaim policy", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = "Shred" })},
		{name: "pv hostPath with ..", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.HostPath.Path = "/tmp/../etc" })},
		{name: "pv hostPath without path", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.HostPath.Path = "" })},
		{name: "pv hostPath / recycled", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Spec.HostPath.Path = "/"
			pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRecycle
		})},
		{name: "pv nfs relative path", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Path: "x"}}
		})},
		{name: "pv csi driver with a slash", obj: pvMut(csi, func(pv *v1.PersistentVolume) { pv.Spec.CSI.Driver = "example.com/csi" })},
		{name: "pv csi without handle", obj: pvMut(csi, func(pv *v1.PersistentVolume) { pv.Spec.CSI.VolumeHandle = "" })},
		{name: "pv csi secret without namespace", obj: pvMut(csi, func(pv *v1.PersistentVolume) {
			pv.Spec.CSI.NodePublishSecretRef = &v1.SecretReference{Name: "s"}
		})},
		{name: "pv bad class name", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.StorageClassName = "Gold!" })},
		{name: "pv unknown volume mode", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(v1.PersistentVolumeMode("Raw")) })},
		{name: "pv finalizer without domain", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Finalizers = []string{"f"} })},
		{name: "pv bad label", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Labels["bad key"] = "v" })},
		{name: "pv mount options on csi", obj: pvMut(csi, func(pv *v1.PersistentVolume) {
			pv.Annotations = map[string]string{"volume.beta.kubernetes.io/mount-options": "ro"}
		})},
		{name: "pv empty volume attributes class", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.VolumeAttributesClassName = ptr.To("") })},

		// PersistentVolumeClaim create.
		{name: "pvc valid", obj: pvcMut()},
		{name: "pvc valid pre-bound", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv1" })},
		{name: "pvc no storage request", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil })},
		{name: "pvc request 0", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.Resources.Requests[v1.ResourceStorage] = gi("0") })},
		{name: "pvc negative request", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.Resources.Requests[v1.ResourceStorage] = gi("-1Gi") })},
		{name: "pvc no access modes", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.AccessModes = nil })},
		{name: "pvc unknown access mode", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{"ReadSometimes"}
		})},
		{name: "pvc bad selector operator", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}
		})},
		{name: "pvc selector In without values", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn}}}
		})},
		{name: "pvc selector bad label", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "bad value!"}}
		})},
		{name: "pvc bad class name", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("Gold_") })},
		{name: "pvc bad name", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Name = "Bad_Name" })},
		{name: "pvc unknown volume mode", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(v1.PersistentVolumeMode("Raw")) })},
		{name: "pvc data source without name", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.DataSource = &v1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim"}
		})},

		// StorageClass create.
		{name: "class valid", obj: classMut()},
		{name: "class no provisioner", obj: classMut(func(sc *storagev1.StorageClass) { sc.Provisioner = "" })},
		{name: "class bad provisioner", obj: classMut(func(sc *storagev1.StorageClass) { sc.Provisioner = "bad provisioner!" })},
		{name: "class Recycle policy", obj: classMut(func(sc *storagev1.StorageClass) {
			sc.ReclaimPolicy = ptr.To(v1.PersistentVolumeReclaimRecycle)
		})},
		{name: "class unknown binding mode", obj: classMut(func(sc *storagev1.StorageClass) {
			sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingMode("Later"))
		})},
		{name: "class topology without values", obj: classMut(func(sc *storagev1.StorageClass) {
			sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: "zone"}}}}
		})},
		{name: "class bad name", obj: classMut(func(sc *storagev1.StorageClass) { sc.Name = "Gold!" })},

		// Node create.
		{name: "node valid", obj: nodeMut()},
		{name: "node bad name", obj: nodeMut(func(n *v1.Node) { n.Name = "Node_1" })},
		{name: "node taint without effect", obj: nodeMut(func(n *v1.Node) { n.Spec.Taints = []v1.Taint{{Key: "k"}} })},
		{name: "node negative capacity", obj: nodeMut(func(n *v1.Node) { n.Status.Capacity = v1.ResourceList{v1.ResourceCPU: gi("-1")} })},

		// Pod create.
		{name: "pod valid", obj: podMut()},
		{name: "pod no containers", obj: podMut(func(p *v1.Pod) { p.Spec.Containers = nil })},
		{name: "pod container without image", obj: podMut(func(p *v1.Pod) { p.Spec.Containers[0].Image = "" })},
		{name: "pod duplicate container", obj: podMut(func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "app", Image: "busybox"})
		})},
		{name: "pod volume without source is an emptyDir", obj: podMut(func(p *v1.Pod) { p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{} })},
		{name: "pod volume with two sources", obj: podMut(func(p *v1.Pod) { p.Spec.Volumes[0].EmptyDir = &v1.EmptyDirVolumeSource{} })},
		{name: "pod bad volume name", obj: podMut(func(p *v1.Pod) {
			p.Spec.Volumes[0].Name = "Data"
			p.Spec.Containers[0].VolumeMounts[0].Name = "Data"
		})},
		{name: "pod claim without name", obj: podMut(func(p *v1.Pod) { p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "" })},
		{name: "pod mount of an unknown volume", obj: podMut(func(p *v1.Pod) { p.Spec.Containers[0].VolumeMounts[0].Name = "other" })},

		// Updates.
		{name: "pv update label", obj: pvMut(), update: func(o runtime.Object) { asPV(o).Labels["tier"] = "fast" }},
		{name: "pv update claimRef", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "c"}
		}},
		// A binding's updates: what no rule reads changes, with annotations
		// (bindertest validates only those again), and the same with one
		// more change a rule rejects.
		{name: "pv update claimRef and annotation", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "c"}
			metav1.SetMetaDataAnnotation(&asPV(o).ObjectMeta, "pv.kubernetes.io/bound-by-controller", "yes")
		}},
		{name: "pv update claimRef and bad annotation key", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "c"}
			metav1.SetMetaDataAnnotation(&asPV(o).ObjectMeta, "bad key!", "yes")
		}},
		{name: "pv update claimRef and a changed annotation", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Annotations = map[string]string{"example.com/note": "a"}
		}), update: func(o runtime.Object) {
			asPV(o).Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "c"}
			asPV(o).Annotations["example.com/note"] = "b"
		}},
		{name: "pv update claimRef and annotations over the size limit", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "c"}
			metav1.SetMetaDataAnnotation(&asPV(o).ObjectMeta, "example.com/big", strings.Repeat("x", 256*1024))
		}},
		{name: "pv update claimRef and mount options annotation", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "c"}
			metav1.SetMetaDataAnnotation(&asPV(o).ObjectMeta, "volume.beta.kubernetes.io/mount-options", "ro")
		}},
		{name: "pvc update volumeName and annotations", obj: pvcMut(), update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Spec.VolumeName = "pv1"
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, "pv.kubernetes.io/bound-by-controller", "yes")
		})},
		{name: "pvc update volumeName and bad annotation key", obj: pvcMut(), update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Spec.VolumeName = "pv1"
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, "bad key!", "yes")
		})},
		{name: "pvc update volumeName and beta class annotation", obj: pvcMut(), update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Spec.VolumeName = "pv1"
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, "volume.beta.kubernetes.io/storage-class", "gold")
		})},
		{name: "pv update source", obj: pvMut(), update: func(o runtime.Object) { asPV(o).Spec.HostPath.Path = "/elsewhere" }},
		{name: "pv update volume mode", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock)
		}},
		{name: "pv update capacity to 0", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).Spec.Capacity[v1.ResourceStorage] = gi("0")
		}},
		{name: "pv update set node affinity", obj: pvMut(), update: func(o runtime.Object) { asPV(o).Spec.NodeAffinity = nodeAffinityOf(in("zone", "a")) }},
		{name: "pv update node affinity", obj: pvMut(func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = nodeAffinityOf(in("zone", "a")) }),
			update: func(o runtime.Object) { asPV(o).Spec.NodeAffinity = nodeAffinityOf(in("zone", "b")) }},
		{name: "pv update node affinity beta to GA", obj: pvMut(func(pv *v1.PersistentVolume) {
			pv.Spec.NodeAffinity = nodeAffinityOf(in(v1.LabelFailureDomainBetaZone, "a"))
		}), update: func(o runtime.Object) { asPV(o).Spec.NodeAffinity = nodeAffinityOf(in(v1.LabelTopologyZone, "a")) }},
		{name: "pv update bad finalizer", obj: pvMut(), update: func(o runtime.Object) { asPV(o).Finalizers = []string{"f"} }},
		{name: "pv update without resourceVersion", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).ResourceVersion = ""
			asPV(o).Labels["tier"] = "fast"
		}},
		// The resourceVersion precondition: kube-apiserver parses the
		// version, so leading zeros name the stored one.
		{name: "pv update with the resourceVersion in leading zeros", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).ResourceVersion = "00" + asPV(o).ResourceVersion
			asPV(o).Labels["tier"] = "fast"
		}},
		{name: "pv update with a stale resourceVersion", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).ResourceVersion += "0" // a later version than the stored one
			asPV(o).Labels["tier"] = "fast"
		}},
		{name: "pv update with a non-numeric resourceVersion", obj: pvMut(), update: func(o runtime.Object) {
			asPV(o).ResourceVersion = "abc"
			asPV(o).Labels["tier"] = "fast"
		}},
		{name: "pvc status update with the resourceVersion in leading zeros", obj: pvcMut(), status: true,
			update: setPVC(func(c *v1.PersistentVolumeClaim) {
				c.ResourceVersion = "0" + c.ResourceVersion
				c.Status.Phase = v1.ClaimLost
			})},
		{name: "pvc update access modes", obj: pvcMut(), update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
		})},
		{name: "pvc update set volumeName", obj: pvcMut(), update: setPVC(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv1" })},
		{name: "pvc update change volumeName", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv1" }),
			update: setPVC(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv2" })},
		{name: "pvc update class from nil", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = nil }),
			update: setPVC(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("gold") })},
		{name: "pvc update class from nil to empty", obj: pvcMut(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = nil }),
			update: setPVC(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("") })},
		{name: "pvc update class from annotation", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.StorageClassName = nil
			c.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "gold"}
		}), update: setPVC(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("gold") })},
		{name: "pvc update class from annotation to another", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.StorageClassName = nil
			c.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "gold"}
		}), update: setPVC(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("silver") })},
		{name: "pvc update class", obj: pvcMut(), update: setPVC(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("silver") })},
		{name: "pvc update grow unbound", obj: pvcMut(), update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[v1.ResourceStorage] = gi("2Gi")
		})},
		{name: "pvc update volume mode", obj: pvcMut(), update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock)
		})},
		// (Growing a bound claim passes validation; kube-apiserver's
		// PersistentVolumeClaimResize admission then needs a class that
		// allows expansion, which bindertest does not emulate.)
		{name: "pvc update shrink bound", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[v1.ResourceStorage] = gi("2Gi")
		}), pre: bindClaim, update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[v1.ResourceStorage] = gi("1Gi")
		})},
		{name: "pvc update shrink bound above status", obj: pvcMut(func(c *v1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[v1.ResourceStorage] = gi("3Gi")
		}), pre: bindClaim, update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[v1.ResourceStorage] = gi("2Gi")
		})},
		{name: "class update parameters", obj: classMut(), update: func(o runtime.Object) { asClass(o).Parameters["type"] = "hdd" }},
		{name: "class update provisioner", obj: classMut(), update: func(o runtime.Object) { asClass(o).Provisioner = "example.com/other" }},
		{name: "class update binding mode", obj: classMut(), update: func(o runtime.Object) {
			asClass(o).VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
		}},
		{name: "class update label", obj: classMut(), update: func(o runtime.Object) { asClass(o).Labels = map[string]string{"a": "b"} }},
		{name: "node update providerID", obj: nodeMut(func(n *v1.Node) { n.Spec.ProviderID = "p1" }),
			update: func(o runtime.Object) { asNode(o).Spec.ProviderID = "p2" }},
		{name: "node update taint", obj: nodeMut(), update: func(o runtime.Object) {
			asNode(o).Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
		}},
		{name: "pod update image", obj: podMut(), update: func(o runtime.Object) { asPod(o).Spec.Containers[0].Image = "busybox:2" }},
		{name: "pod update volumes", obj: podMut(), update: func(o runtime.Object) {
			p := asPod(o)
			p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "tmp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
		}},

		// Status updates.
		{name: "pv status Available", obj: pvMut(), status: true, update: func(o runtime.Object) { asPV(o).Status.Phase = v1.VolumeAvailable }},
		{name: "pvc status Bound", obj: pvcMut(), status: true, update: bindClaim},
		{name: "pvc status negative capacity", obj: pvcMut(), status: true, update: setPVC(func(c *v1.PersistentVolumeClaim) {
			c.Status.Capacity = v1.ResourceList{v1.ResourceStorage: gi("-1Gi")}
		})},
		{name: "node status negative capacity", obj: nodeMut(), status: true, update: func(o runtime.Object) {
			asNode(o).Status.Capacity = v1.ResourceList{v1.ResourceCPU: gi("-1")}
		}},
		{name: "node status duplicate address", obj: nodeMut(), status: true, update: func(o runtime.Object) {
			a := v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.1"}
			asNode(o).Status.Addresses = []v1.NodeAddress{a, a}
		}},
		{name: "pod status Running", obj: podMut(), status: true, update: func(o runtime.Object) { asPod(o).Status.Phase = v1.PodRunning }},
	}
}
