package nodepool_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/volbind/volbind/nodepool"
	"github.com/volbind/volbind/zones"
)

func exampleNode(name, instanceType, zone string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{nodepool.InstanceTypeLabel: instanceType, zones.ZoneLabel: zone},
		Annotations: map[string]string{nodepool.PhaseAnnotation: string(nodepool.PhaseAvailable)},
	}}
}

func examplePod(name string, selector map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.PodSpec{NodeSelector: selector},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// Example runs one round of a pool loop against an API server: list,
// compute, write the binding updates, boot, stop, publish to the
// dispenser, and dispatch a pod.
func Example() {
	ctx := context.Background()
	cs := fake.NewClientset(
		exampleNode("idle-a", "m5.large", "zone-a"),
		exampleNode("idle-b", "m5.large", "zone-b"),
		exampleNode("idle-c", "c5.large", "zone-c"),
		// web-1 may run in any zone, web-2 only in zone-a: a maximum
		// matching gives both an idle node.
		examplePod("web-1", map[string]string{nodepool.InstanceTypeLabel: "m5.large"}),
		examplePod("web-2", map[string]string{nodepool.InstanceTypeLabel: "m5.large", zones.ZoneLabel: "zone-a"}),
		examplePod("gpu-1", map[string]string{nodepool.InstanceTypeLabel: "p3.2xlarge"}),
	)
	scaler, err := nodepool.New(nodepool.Config{
		Standby: []nodepool.StandbySpec{{InstanceType: "t3.small", Count: 1}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	dispenser := nodepool.NewDispenser(nodepool.ClientsetNodes{Client: cs})

	// One round.
	nodes, _ := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	pods, _ := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	round, err := scaler.Compute(pointers(nodes.Items), pointers(pods.Items))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range round.Updates {
		if _, err := cs.CoreV1().Nodes().Patch(ctx, u.Node.Name, types.MergePatchType, u.MergePatch(), metav1.PatchOptions{}); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("bind %s to %s\n", u.Node.Name, u.Pod)
	}
	for _, b := range round.Boots {
		// A real API server names the node from b.Node.GenerateName.
		if b.Pod != nil {
			fmt.Printf("boot %s for %s\n", b.Node.Labels[nodepool.InstanceTypeLabel], b.Pod.Name)
		} else {
			fmt.Printf("boot %s for standby\n", b.Node.Labels[nodepool.InstanceTypeLabel])
		}
	}
	for _, n := range round.Stop {
		fmt.Printf("stop %s\n", n.Name)
	}
	dispenser.Publish(round)

	// The dispatch path.
	for _, p := range pointers(pods.Items) {
		reply, err := dispenser.Request(ctx, p)
		if err != nil {
			fmt.Println(err)
			return
		}
		if reply.Status == nodepool.StatusBound {
			fmt.Printf("%s: %s on %s (%s)\n", p.Name, reply.Status, reply.Node.Name, nodepool.NodePhase(reply.Node))
		} else {
			fmt.Printf("%s: %s\n", p.Name, reply.Status)
		}
	}
	// Output:
	// bind idle-b to default/web-1
	// bind idle-a to default/web-2
	// boot p3.2xlarge for gpu-1
	// boot t3.small for standby
	// stop idle-c
	// gpu-1: Retry
	// web-1: Bound on idle-b (Claimed)
	// web-2: Bound on idle-a (Claimed)
}

// ExampleBootLimiter shows a shape held unavailable after a capacity error,
// with an injected clock.
func ExampleBootLimiter() {
	clk := testingclock.NewFakePassiveClock(time.Unix(0, 0))
	limiter := nodepool.NewBootLimiter(nodepool.BootLimiterConfig{Clock: clk})
	spot := nodepool.Shape{InstanceType: "m5.large", CapacityType: nodepool.CapacitySpot, Zone: "zone-a"}

	limiter.MarkUnavailable(spot) // the cloud said: no capacity
	fmt.Println(limiter.Unavailable(spot))
	clk.SetTime(clk.Now().Add(nodepool.DefaultUnavailableFor))
	fmt.Println(limiter.Unavailable(spot))
	// Output:
	// true
	// false
}
