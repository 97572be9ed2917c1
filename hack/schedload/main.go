// Command schedload is the workload of hack/bench-scheduler.sh, which
// compares kube-schedulers on a real API server.
//
//	schedload -kubeconfig K -setup -nodes 100 -volumes 10000
//
// creates a WaitForFirstConsumer class of hostname-local volumes, Node
// objects standing in for kubelets (untainted, with room for pods) and the
// volumes, spread evenly over the nodes' hostnames.
//
//	schedload -kubeconfig K -pods 1000
//
// then, once "schedload -wait-available -volumes N" has seen the volume
// controller mark them Available, creates, while the scheduler runs, StatefulSet-shaped pods with one
// claim each (claim first, as the StatefulSet controller does), waits until
// every pod has a node and every claim is Bound, checks that each claim's
// volume is on its pod's node, and prints the seconds from the first create
// until then and the pods per second, tab-separated.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

const (
	class = "bench-local"
	ns    = "default"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	setup := flag.Bool("setup", false, "create the class, nodes and volumes")
	nodes := flag.Int("nodes", 100, "nodes to create with -setup")
	volumes := flag.Int("volumes", 10000, "hostname-local volumes to create with -setup")
	pods := flag.Int("pods", 1000, "pods (one claim each) to create and wait for")
	timeout := flag.Duration("timeout", 30*time.Minute, "how long to wait for the pods")
	available := flag.Bool("wait-available", false, "wait until -volumes volumes are Available, then exit")
	flag.Parse()
	if err := run(*kubeconfig, *setup, *available, *nodes, *volumes, *pods, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "schedload:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, setup, available bool, nodes, volumes, pods int, timeout time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 5000, 10000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if setup {
		return createSetup(ctx, cs, nodes, volumes)
	}
	if available {
		return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			l, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return false, err
			}
			n := 0
			for _, pv := range l.Items {
				if pv.Status.Phase == v1.VolumeAvailable {
					n++
				}
			}
			return n >= volumes, nil
		})
	}
	return createPods(ctx, cs, pods, timeout)
}

func createSetup(ctx context.Context, cs kubernetes.Interface, nodes, volumes int) error {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: volume.NotSupportedProvisioner, VolumeBindingMode: &mode}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for i := range nodes {
		g.Go(func() error { return createNode(ctx, cs, fmt.Sprintf("node-%03d", i)) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	g, ctx = errgroup.WithContext(context.Background())
	g.SetLimit(64)
	for i := range volumes {
		g.Go(func() error {
			_, err := cs.CoreV1().PersistentVolumes().Create(ctx, localVolume(i, fmt.Sprintf("node-%03d", i%nodes)), metav1.CreateOptions{})
			return err
		})
	}
	return g.Wait()
}

func createNode(ctx context.Context, cs kubernetes.Interface, name string) error {
	n, err := cs.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{v1.LabelHostname: name}}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	room := v1.ResourceList{v1.ResourceCPU: resource.MustParse("64"), v1.ResourceMemory: resource.MustParse("256Gi"), v1.ResourcePods: resource.MustParse("110")}
	n.Status.Capacity, n.Status.Allocatable = room, room
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	if n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return err
	}
	n.Spec.Taints = nil // set by the API server's TaintNodesByCondition admission
	_, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}

func localVolume(i int, host string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("local-%05d", i)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: fmt.Sprintf("/mnt/disk-%05d", i)}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}}}}}},
		},
	}
}

func createPods(ctx context.Context, cs kubernetes.Interface, pods int, timeout time.Duration) error {
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for i := range pods {
		g.Go(func() error { return createPod(gctx, cs, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		done, status, err := progress(ctx, cs, pods)
		last = status
		return done, err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", last, err)
	}
	secs := time.Since(start).Seconds()
	if err := verify(ctx, cs); err != nil {
		return err
	}
	fmt.Printf("%.1f\t%.1f\n", secs, float64(pods)/secs)
	return nil
}

func createPod(ctx context.Context, cs kubernetes.Interface, i int) error {
	name := fmt.Sprintf("web-%d", i)
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-" + name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		return err
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}},
		},
	}
	_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

func progress(ctx context.Context, cs kubernetes.Interface, pods int) (bool, string, error) {
	pl, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return false, "", err
	}
	cl, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return false, "", err
	}
	scheduled, bound := 0, 0
	for _, p := range pl.Items {
		if p.Spec.NodeName != "" {
			scheduled++
		}
	}
	for _, c := range cl.Items {
		if c.Status.Phase == v1.ClaimBound {
			bound++
		}
	}
	return scheduled == pods && bound == pods, fmt.Sprintf("%d/%d pods scheduled, %d claims Bound", scheduled, pods, bound), nil
}

// verify checks that each pod's claim is bound to a volume on its node and
// that no volume serves two claims.
func verify(ctx context.Context, cs kubernetes.Interface) error {
	pl, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	seen := map[string]string{}
	var errs []error
	for _, p := range pl.Items {
		c, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-"+p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if prev, dup := seen[c.Spec.VolumeName]; dup {
			errs = append(errs, fmt.Errorf("volume %s bound to %s and %s", c.Spec.VolumeName, prev, c.Name))
		}
		seen[c.Spec.VolumeName] = c.Name
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := volume.CheckNodeAffinity(pv, map[string]string{v1.LabelHostname: p.Spec.NodeName}); err != nil {
			errs = append(errs, fmt.Errorf("pod %s on %s, volume %s: %w", p.Name, p.Spec.NodeName, pv.Name, err))
		}
	}
	return errors.Join(errs...)
}
