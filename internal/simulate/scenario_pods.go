package simulate

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/internal/manifest"
)

// The generated StatefulSet-shaped workload of -pods.
const (
	// localClass is the WaitForFirstConsumer class of the local volumes.
	localClass = "local-storage"
	// statefulSetName names the pods (db-0, db-1, …) and, with the
	// volumeClaimTemplate's name, their claims (data-db-0, …).
	statefulSetName = "db"
	// claimTemplateName is the volumeClaimTemplate's name.
	claimTemplateName = "data"
	// podNamespace holds the generated pods and their claims.
	podNamespace = "ns-00"
)

// podSizesGi are the requests of the generated pods' claims; local volumes
// are at least localSizesGi[0], larger than any of them.
var (
	podSizesGi   = []int64{10, 20, 50}
	localSizesGi = []int64{100, 200, 500}
)

// nodeName names the i-th generated node of -nodes.
func nodeName(i int) string { return fmt.Sprintf("node-%03d", i) }

// generatePods adds to out the -pods workload: a WaitForFirstConsumer
// class without provisioner, s.Nodes nodes (hostname and zone labels)
// with ceil(Pods/Nodes)+1 hostname-local volumes each, and s.Pods pods of
// one StatefulSet, each with one claim named as volumeClaimTemplates name
// them. Every pod fits: the volumes outnumber the pods on every node they
// spread over, and each is larger than any claim. It draws from a stream
// of its own, so that the rest of the scenario is the same with or without
// pods.
func (s scenario) generatePods(out *manifest.Objects) {
	if s.Pods == 0 {
		return
	}
	r := rand.New(rand.NewPCG(s.Seed^0x5eed0f0d5, s.Seed))
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	retain := v1.PersistentVolumeReclaimRetain
	out.Classes = append(out.Classes, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: localClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		ReclaimPolicy:     &retain,
		VolumeBindingMode: &wffc,
	})
	perNode := (s.Pods+s.Nodes-1)/s.Nodes + 1
	for n := range s.Nodes {
		name := nodeName(n)
		out.Nodes = append(out.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{v1.LabelHostname: name, v1.LabelTopologyZone: zoneName(n % s.Zones),
				v1.LabelTopologyRegion: "region-1"},
		}})
		for i := range perNode {
			out.Volumes = append(out.Volumes, localVolume(fmt.Sprintf("local-%03d-%02d", n, i), name, localSizesGi[r.IntN(len(localSizesGi))]))
		}
	}
	for i := range s.Pods {
		pod, claim := statefulPod(i, podSizesGi[r.IntN(len(podSizesGi))])
		out.Claims = append(out.Claims, claim)
		out.Pods = append(out.Pods, pod)
	}
}

// localVolume is a local volume of localClass on the node with hostname host.
func localVolume(name, host string, sizeGi int64) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      storage(sizeGi << 30),
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              localClass,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disks/" + name}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}},
			}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

// statefulPod returns the i-th pod of the StatefulSet and its claim, as
// the StatefulSet controller creates them.
func statefulPod(i int, requestGi int64) (*v1.Pod, *v1.PersistentVolumeClaim) {
	podName := fmt.Sprintf("%s-%d", statefulSetName, i)
	claimName := claimTemplateName + "-" + podName
	labels := map[string]string{
		"app":                                statefulSetName,
		"apps.kubernetes.io/pod-index":       strconv.Itoa(i),
		"statefulset.kubernetes.io/pod-name": podName,
	}
	class := localClass
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claimName, Namespace: podNamespace, Labels: map[string]string{"app": statefulSetName}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: storage(requestGi << 30)},
			StorageClassName: &class,
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: podNamespace, Labels: labels},
		Spec: v1.PodSpec{
			Hostname:  podName,
			Subdomain: statefulSetName,
			Containers: []v1.Container{{
				Name: "db", Image: "registry.k8s.io/pause:3.10",
				VolumeMounts: []v1.VolumeMount{{Name: claimTemplateName, MountPath: "/data"}},
			}},
			Volumes: []v1.Volume{{Name: claimTemplateName, VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claimName},
			}}},
		},
	}
	return pod, claim
}
