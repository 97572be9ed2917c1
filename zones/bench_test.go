package zones

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

func BenchmarkParseZones(b *testing.B) {
	for _, n := range []int{1, 2, 3} {
		value := strings.Join([]string{"us-east-1a", "us-east-1b", "us-east-1c"}[:n], MultiZoneDelimiter)
		b.Run(fmt.Sprintf("zones=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseZones(value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchVolumes returns the placements measured by BenchmarkMatch:
//
//   - label: a zone label only, as on volumes labelled before node
//     affinity existed (CheckNodeAffinity does not read labels, so it is
//     not measured on this one);
//   - zone: what LabelVolume writes for a zonal disk, a zone label and the
//     equivalent node-affinity term (CheckNodeAffinity reads only the
//     latter, so both sides decide the same thing);
//   - affinity: a regional disk's zone and region labels plus three node
//     affinity terms using every operator, the last of which matches.
func benchVolumes(b *testing.B) map[string]*v1.PersistentVolume {
	b.Helper()
	zonal, err := LabelVolume(testVolume("pv-zonal", nil), Placement{Zones: sets.New("zone-1")})
	if err != nil {
		b.Fatal(err)
	}
	in := v1.NodeSelectorOpIn
	full := testVolume("pv-full", map[string]string{ZoneLabel: "zone-0__zone-1", RegionLabel: "region-1"},
		term(expr(ZoneLabel, in, "zone-0", "zone-1"), expr("disktype", in, "nvme"), expr("gen", v1.NodeSelectorOpGt, "8")),
		term(expr(ZoneLabel, v1.NodeSelectorOpNotIn, "zone-2", "zone-3"), expr("spot", v1.NodeSelectorOpExists),
			expr("gen", v1.NodeSelectorOpLt, "3")),
		term(expr(ZoneLabel, in, "zone-0", "zone-1"), expr(RegionLabel, in, "region-1"), expr("disktype", in, "ssd", "nvme"),
			expr("gen", v1.NodeSelectorOpGt, "3"), expr("cordoned", v1.NodeSelectorOpDoesNotExist)))
	label := testVolume("pv-label", map[string]string{ZoneLabel: "zone-1"})
	return map[string]*v1.PersistentVolume{"label": label, "zone": zonal, "affinity": full}
}

// benchNodes returns n nodes spread over 4 zones, so a quarter to a half of
// them match each benchmark volume.
func benchNodes(n int) []*v1.Node {
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		nodes[i] = testNode(fmt.Sprintf("node-%d", i), map[string]string{
			ZoneLabel:                fmt.Sprintf("zone-%d", i%4),
			RegionLabel:              "region-1",
			BetaZoneLabel:            fmt.Sprintf("zone-%d", i%4),
			BetaRegionLabel:          "region-1",
			"kubernetes.io/hostname": fmt.Sprintf("node-%d", i),
			"kubernetes.io/os":       "linux",
			"disktype":               "ssd",
			"gen":                    fmt.Sprint(4 + i%3),
		})
	}
	return nodes
}

// BenchmarkMatch matches one volume against many nodes, as the binder does
// when it checks a volume for a pod's candidate nodes: the cached Matcher,
// the uncached Matches, and component-helpers' CheckNodeAffinity on the
// same inputs.
func BenchmarkMatch(b *testing.B) {
	nodes := benchNodes(64)
	for _, placement := range []string{"label", "zone", "affinity"} {
		pv := benchVolumes(b)[placement]
		// All three must agree before they are compared.
		var m Matcher
		for _, n := range nodes {
			cached, err1 := m.Matches(pv, n)
			uncached, err2 := Matches(pv, n)
			helper := storagehelpers.CheckNodeAffinity(pv, n.Labels) == nil
			if placement == "label" {
				helper = n.Labels[ZoneLabel] == "zone-1"
			}
			if err1 != nil || err2 != nil || cached != uncached || cached != helper {
				b.Fatalf("%s on %s: Matcher %v, %v; Matches %v, %v; CheckNodeAffinity %v", pv.Name, n.Name, cached, err1, uncached, err2, helper)
			}
		}
		b.Run(fmt.Sprintf("placement=%s/impl=matcher", placement), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := m.Matches(pv, nodes[i%len(nodes)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("placement=%s/impl=matcher-parallel", placement), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					if _, err := m.Matches(pv, nodes[i%len(nodes)]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(fmt.Sprintf("placement=%s/impl=uncached", placement), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := Matches(pv, nodes[i%len(nodes)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		if placement == "label" {
			continue
		}
		b.Run(fmt.Sprintf("placement=%s/impl=CheckNodeAffinity", placement), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = storagehelpers.CheckNodeAffinity(pv, nodes[i%len(nodes)].Labels)
				i++
			}
		})
	}
}

// benchClaimNames returns n claim names: three quarters StatefulSet claims
// of 50 sets, the rest plain names.
func benchClaimNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		if i%4 == 3 {
			names[i] = fmt.Sprintf("scratch-%x", i*7919)
		} else {
			names[i] = fmt.Sprintf("data-set%d-%d", i%50, i/50)
		}
	}
	return names
}

// BenchmarkChooseZones chooses zones for 10,000 claims per op, with
// ChooseZones, SelectZones and cloud-provider's ChooseZonesForVolume.
func BenchmarkChooseZones(b *testing.B) {
	const claims = 10_000
	names := benchClaimNames(claims)
	zs := sets.New("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f")
	legacy := sets.NewString(sets.List(zs)...)
	for _, replicas := range []uint32{1, 2} {
		b.Run(fmt.Sprintf("claims=%d/replicas=%d/impl=ChooseZones", claims, replicas), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, name := range names {
					if _, err := ChooseZones(zs, name, replicas); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("claims=%d/replicas=%d/impl=SelectZones", claims, replicas), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, name := range names {
					if _, err := SelectZones(Request{ClaimName: name, Replicas: replicas, ZonesWithNodes: zs}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("claims=%d/replicas=%d/impl=ChooseZonesForVolume", claims, replicas), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, name := range names {
					_ = volumehelpers.ChooseZonesForVolume(legacy, name, replicas)
				}
			}
		})
	}
}

// BenchmarkLabelVolume labels a new volume with a regional placement.
func BenchmarkLabelVolume(b *testing.B) {
	pv := testVolume("pv", nil)
	p := Placement{Zones: sets.New("us-east-1a", "us-east-1b"), Region: "us-east-1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LabelVolume(pv, p); err != nil {
			b.Fatal(err)
		}
	}
}
