//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// statefulPod returns the pod web-<i> of a StatefulSet "web" whose
// volumeClaimTemplates are templates, and its claims ("<template>-web-<i>"),
// each of the class of the same index asking for 1 GiB.
func (f *fixture) statefulPod(i int, templates, classes []string) (*v1.Pod, []*v1.PersistentVolumeClaim) {
	name := fmt.Sprintf("web-%d", i)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{
			Containers:                    []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	var claims []*v1.PersistentVolumeClaim
	for j, tpl := range templates {
		c := f.claim(tpl+"-"+name, 1)
		c.Spec.StorageClassName = ptr.To(classes[j])
		claims = append(claims, c)
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: tpl, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
	}
	return pod, claims
}

// TestSchedulerPlugin runs volbind's kube-scheduler (VolbindVolumeBinding
// in place of VolumeBinding) with "volbind controller" and an external
// provisioner on the real cluster. Four Node objects in two zones stand in
// for kubelets. Seven StatefulSet-shaped pods each have three
// WaitForFirstConsumer claims: one over hostname-local volumes (two per
// node), one over zonal volumes (three per zone) and one provisioned for
// the selected node; a seventh pod is one too many for the zonal volumes.
// Six pods must get a node, their claims Bound to volumes whose node
// affinity admits the pod's node, no volume twice, provisioned volumes for
// the pod's node; the seventh stays Pending with the in-tree reason.
func TestSchedulerPlugin(t *testing.T) {
	sched := buildScheduler(t)
	bin := buildVolbind(t)
	f := newFixture(t)
	local, zonal, prov := f.ns+"-local", f.ns+"-zonal", f.ns+"-prov"
	f.createWFFCClass(local, volume.NotSupportedProvisioner)
	f.createWFFCClass(zonal, volume.NotSupportedProvisioner)
	f.createWFFCClass(prov, topologyProvisioner)
	nodes := f.createNodes(4)

	var pvs []*v1.PersistentVolume
	for _, n := range nodes {
		for k := range 2 {
			pv := f.volume(fmt.Sprintf("%s-local-%d", n.Name, k), 1)
			pv.Spec.StorageClassName, pv.Spec.NodeAffinity = local, hostAffinity(n.Labels[v1.LabelHostname])
			pvs = append(pvs, pv)
		}
	}
	for z := range 2 {
		zone := fmt.Sprintf("%s-z%d", f.ns, z)
		for k := range 3 {
			pv := f.volume(fmt.Sprintf("%s-%d", zone, k), 1)
			pv.Spec.StorageClassName, pv.Spec.NodeAffinity = zonal, affinity(v1.LabelTopologyZone, zone)
			pvs = append(pvs, pv)
		}
	}
	for _, pv := range pvs {
		f.create(pv)
	}

	startProcess(t, "volbind-controller", bin, "controller", "--kubeconfig", testCluster.kubeconfig,
		"--kube-api-qps", "100", "--kube-api-burst", "200", "--metrics-addr", "", "--leader-elect=false")
	ctx, cancel := context.WithCancel(t.Context())
	provDone := runTopologyProvisioner(ctx, t, f.cs, f.ns, prov)
	t.Cleanup(func() { cancel(); <-provDone })
	startScheduler(t, sched)

	templates, classes := []string{"data", "shared", "scratch"}, []string{local, zonal, prov}
	for i := range 7 {
		pod, claims := f.statefulPod(i, templates, classes)
		for _, c := range claims {
			f.create(c)
		}
		if _, err := f.cs.CoreV1().Pods(f.ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", pod.Name, err)
		}
	}
	t.Cleanup(func() {
		_ = f.cs.CoreV1().Pods(f.ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
	})

	var scheduled []string
	f.eventually(3*time.Minute, "six pods on nodes with their 18 claims Bound", func(ctx context.Context) (bool, error) {
		pods, err := f.cs.CoreV1().Pods(f.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		scheduled = scheduled[:0]
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				scheduled = append(scheduled, p.Name)
			}
		}
		bound, err := f.boundClaims(ctx)
		return len(scheduled) == 6 && bound == 18, err
	})
	f.checkScheduled(nodes, templates, scheduled)
	f.eventually(time.Minute, "the seventh pod Unschedulable for lack of volumes", func(ctx context.Context) (bool, error) {
		pods, err := f.cs.CoreV1().Pods(f.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable &&
					strings.Contains(c.Message, "4 node(s) didn't find available persistent volumes to bind") {
					return true, nil
				}
			}
		}
		return false, nil
	})
	var i int
	if _, err := fmt.Sscanf(scheduled[0], "web-%d", &i); err != nil {
		t.Fatalf("pod name %q: %v", scheduled[0], err)
	}
	again, _ := f.statefulPod(i, templates, classes)
	f.recreateOnItsNode(again, templates)
}

// recreateOnItsNode deletes the scheduled pod of pod's name and creates pod
// in its place, as a StatefulSet does after an eviction: with every claim
// Bound to a volume pinned to the old pod's node, the scheduler must put it
// back on that node, and its claims must keep their volumes.
func (f *fixture) recreateOnItsNode(pod *v1.Pod, templates []string) {
	f.t.Helper()
	ctx, name := f.t.Context(), pod.Name
	old, err := f.cs.CoreV1().Pods(f.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	volumes := map[string]string{}
	for _, tpl := range templates {
		c := f.getClaim(tpl + "-" + name)
		volumes[c.Name] = c.Spec.VolumeName
	}
	if err := f.cs.CoreV1().Pods(f.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		f.t.Fatalf("delete pod %s: %v", name, err)
	}
	f.eventually(time.Minute, "pod "+name+" deleted", func(ctx context.Context) (bool, error) {
		_, err := f.cs.CoreV1().Pods(f.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if _, err := f.cs.CoreV1().Pods(f.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("create pod %s again: %v", name, err)
	}
	var node string
	f.eventually(time.Minute, "pod "+name+" scheduled again", func(ctx context.Context) (bool, error) {
		p, err := f.cs.CoreV1().Pods(f.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	if node != old.Spec.NodeName {
		f.t.Errorf("pod %s scheduled again on %s, want %s, where its local volumes are", name, node, old.Spec.NodeName)
	}
	for claim, volume := range volumes {
		if c := f.getClaim(claim); c.Spec.VolumeName != volume || c.Status.Phase != v1.ClaimBound {
			f.t.Errorf("claim %s after the pod came back: volume %q, phase %s; want %q, Bound", claim, c.Spec.VolumeName, c.Status.Phase, volume)
		}
	}
}

// checkScheduled asserts, from objects read back from the API server, that
// the scheduled pods run on nodes their volumes admit.
func (f *fixture) checkScheduled(nodes []*v1.Node, templates, scheduled []string) {
	f.t.Helper()
	byName := map[string]*v1.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	owner := map[string]string{} // volume -> claim
	for _, name := range scheduled {
		pod, err := f.cs.CoreV1().Pods(f.ns).Get(f.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		node, ok := byName[pod.Spec.NodeName]
		if !ok {
			f.t.Errorf("pod %s on node %q, not one of the test's nodes", pod.Name, pod.Spec.NodeName)
			continue
		}
		for _, tpl := range templates {
			c := f.getClaim(tpl + "-" + pod.Name)
			if c.Status.Phase != v1.ClaimBound || c.Spec.VolumeName == "" {
				f.t.Errorf("claim %s: phase %s, volume %q; want Bound", c.Name, c.Status.Phase, c.Spec.VolumeName)
				continue
			}
			if prev, dup := owner[c.Spec.VolumeName]; dup {
				f.t.Errorf("volume %s bound to claims %s and %s", c.Spec.VolumeName, prev, c.Name)
			}
			owner[c.Spec.VolumeName] = c.Name
			pv := f.getVolume(c.Spec.VolumeName)
			if err := volume.CheckNodeAffinity(pv, node.Labels); err != nil {
				f.t.Errorf("pod %s on node %s, but its claim %s is bound to volume %s: %v", pod.Name, node.Name, c.Name, pv.Name, err)
			}
			if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != c.Name || ref.UID != c.UID {
				f.t.Errorf("volume %s claimRef %v, want claim %s", pv.Name, ref, c.Name)
			}
			if tpl == "scratch" && c.Annotations[volume.AnnSelectedNode] != node.Name {
				f.t.Errorf("provisioned claim %s selected node %q, pod on %s", c.Name, c.Annotations[volume.AnnSelectedNode], node.Name)
			}
		}
	}
}
