package nodepool

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// benchCluster returns n waiting pods and n available nodes over 20 shapes
// (10 instance types × spot/on-demand) and 3 zones; a third of the pods
// name no zone.
func benchCluster(n int) ([]*v1.Node, []*v1.Pod) {
	r := rand.New(rand.NewPCG(1, 2))
	zonesList := []string{"zone-a", "zone-b", "zone-c"}
	shape := func() (string, string) {
		ct := CapacityOnDemand
		if r.IntN(2) == 0 {
			ct = CapacitySpot
		}
		return fmt.Sprintf("m5.%dxlarge", r.IntN(10)), ct
	}
	pods := make([]*v1.Pod, n)
	for i := range pods {
		it, ct := shape()
		opts := []podOpt{instance(it)}
		if ct == CapacitySpot {
			opts = append(opts, spotPod())
		}
		if z := r.IntN(4); z < 3 {
			opts = append(opts, zonePod(zonesList[z]))
		}
		pods[i] = newPod(fmt.Sprintf("pod-%05d", i), opts...)
	}
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		it, ct := shape()
		nodes[i] = newNode(fmt.Sprintf("node-%05d", i), nodeType(it), lbl(DefaultCapacityTypeKey, ct),
			zoneNode(zonesList[r.IntN(3)]), lbl("kubernetes.io/hostname", fmt.Sprintf("node-%05d", i)))
	}
	return nodes, pods
}

func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		nodes, pods := benchCluster(n)
		s := mustNew(b, Config{Standby: []StandbySpec{{InstanceType: "m5.1xlarge", Count: 5}}})
		b.Run(fmt.Sprintf("pods=%d/nodes=%d", n, n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Compute(nodes, pods); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkComputePinned: every pod pins a node by hostname, so there are
// as many pod classes and node groups as pods and nodes; the group index
// keeps the round linear.
func BenchmarkComputePinned(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		nodes, pods := benchCluster(n)
		for i, p := range pods {
			p = p.DeepCopy()
			p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": nodes[(i*7)%n].Name}
			pods[i] = p
		}
		s := mustNew(b, Config{})
		b.Run(fmt.Sprintf("pods=%d/nodes=%d", n, n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Compute(nodes, pods); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
