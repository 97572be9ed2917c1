//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/storage/volume"
)

// topologyProvisioner is the external provisioner of TestSchedulerPlugin's
// provisioned class.
const topologyProvisioner = "e2e.volbind.io/topology"

// buildScheduler returns volbind's kube-scheduler, built (or taken from
// the cache) by hack/build-scheduler.sh.
func buildScheduler(t *testing.T) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "../hack/build-scheduler.sh")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-scheduler.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// startProcess runs bin with args until the test ends (SIGTERM, then
// SIGKILL after 20 s). The process dies with the test binary, and its PID
// is recorded in the cluster directory for hack/cluster-down.sh. Its log is
// printed when the test fails.
func startProcess(t *testing.T, name, bin string, args ...string) {
	t.Helper()
	startProcessEnv(t, name, bin, nil, args...)
}

// startProcessEnv is startProcess with env added to the test's
// environment.
func startProcessEnv(t *testing.T, name, bin string, env []string, args ...string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	pidFile := filepath.Join(testCluster.dir, "volbind-e2e-"+name+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Logf("cannot record the PID of %s for hack/cluster-down.sh: %v", name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		os.Remove(pidFile)
		if t.Failed() {
			if out, err := os.ReadFile(logPath); err == nil {
				t.Logf("log of %s (last 8 KiB):\n%s", name, tail(out, 8<<10))
			}
		}
	})
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// startScheduler runs volbind's kube-scheduler on the test cluster with
// the in-tree VolumeBinding plugin replaced by VolbindVolumeBinding; env
// is added to its environment.
func startScheduler(t *testing.T, bin string, env ...string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "scheduler.yaml")
	conf := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 100
  burst: 200
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled: [{name: VolbindVolumeBinding}]
        disabled: [{name: VolumeBinding}]
    pluginConfig:
      - name: VolbindVolumeBinding
        args: {bindTimeoutSeconds: 120}
`, testCluster.kubeconfig)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	startProcessEnv(t, "kube-scheduler", bin, env, "--config", cfg, "--secure-port", "0", "-v", "2")
}

// runTopologyProvisioner is the external provisioner of class (whose
// provisioner is topologyProvisioner) in namespace ns: it creates each claim's volume pre-bound to it, with
// node affinity for the hostname of the node named by the claim's
// volume.kubernetes.io/selected-node annotation, as CSI external
// provisioners do for WaitForFirstConsumer claims. It stops with ctx.
func runTopologyProvisioner(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, class string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			claims, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for i := range claims.Items {
				if err := provisionFor(ctx, cs, &claims.Items[i], class); err != nil && ctx.Err() == nil {
					t.Errorf("provision %s/%s: %v", ns, claims.Items[i].Name, err)
				}
			}
			return false, nil
		})
	}()
	return done
}

func provisionFor(ctx context.Context, cs kubernetes.Interface, c *v1.PersistentVolumeClaim, class string) error {
	nodeName := c.Annotations[volume.AnnSelectedNode]
	// The claims of class are this provisioner's (volbind controller
	// annotates claims for external provisioners only when its
	// provisioning is enabled, which the controller command does not do).
	if c.Spec.VolumeName != "" || nodeName == "" || c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != class {
		return nil
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(c.UID), Labels: map[string]string{testLabel: c.Namespace},
			Annotations: map[string]string{volume.AnnDynamicallyProvisioned: topologyProvisioner}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: c.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:                   c.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID},
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + string(c.UID)}},
			NodeAffinity:                  hostAffinity(node.Labels[v1.LabelHostname]),
		},
	}
	_, err = cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func affinity(key, value string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}}}}}}
}

func hostAffinity(host string) *v1.VolumeNodeAffinity { return affinity(v1.LabelHostname, host) }

// createNodes creates n Node objects standing in for kubelets, in two
// zones, with room for pods; the cleanup deletes them.
func (f *fixture) createNodes(n int) []*v1.Node {
	f.t.Helper()
	ctx := f.t.Context()
	var nodes []*v1.Node
	for i := range n {
		name := fmt.Sprintf("%s-n%d", f.ns, i)
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			v1.LabelHostname: name, v1.LabelTopologyZone: fmt.Sprintf("%s-z%d", f.ns, i%2), testLabel: f.ns}}}
		created, err := f.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			f.t.Fatalf("create node %s: %v", name, err)
		}
		room := v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("110")}
		created.Status.Capacity, created.Status.Allocatable = room, room
		created.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
		if created, err = f.cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			f.t.Fatalf("node %s status: %v", name, err)
		}
		// The API server's TaintNodesByCondition admission marks a new
		// node not-ready; no node lifecycle controller runs to lift it.
		created.Spec.Taints = nil
		if created, err = f.cs.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			f.t.Fatalf("untaint node %s: %v", name, err)
		}
		nodes = append(nodes, created)
	}
	f.t.Cleanup(func() {
		err := f.cs.CoreV1().Nodes().DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: testLabel + "=" + f.ns})
		if err != nil {
			f.t.Errorf("delete nodes: %v", err)
		}
	})
	return nodes
}

// createWFFCClass creates a WaitForFirstConsumer class; the cleanup deletes it.
func (f *fixture) createWFFCClass(name, provisioner string) {
	f.t.Helper()
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if _, err := f.cs.StorageV1().StorageClasses().Create(f.t.Context(), sc, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("create StorageClass %s: %v", name, err)
	}
	f.t.Cleanup(func() {
		if err := f.cs.StorageV1().StorageClasses().Delete(context.Background(), name, deleteNow()); err != nil {
			f.t.Errorf("delete StorageClass %s: %v", name, err)
		}
	})
}
