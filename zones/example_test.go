package zones_test

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/volbind/volbind/zones"
)

func ExampleParseZones() {
	zs, err := zones.ParseZones("us-east-1c__us-east-1a")
	fmt.Println(sets.List(zs), err)
	fmt.Println(zones.FormatZones(zs))

	_, err = zones.ParseZones("us-east-1a__")
	fmt.Println(errors.Is(err, zones.ErrInvalidZones))
	fmt.Println(err)
	// Output:
	// [us-east-1a us-east-1c] <nil>
	// us-east-1a__us-east-1c
	// true
	// zones: invalid zones: zone label value "us-east-1a__": element 1 "" is empty
}

func ExampleVolumeZones() {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", Labels: map[string]string{
			zones.BetaZoneLabel: "europe-west1-b__europe-west1-c",
		}},
	}
	zs, err := zones.VolumeZones(pv)
	fmt.Println(sets.List(zs), err)
	// Output:
	// [europe-west1-b europe-west1-c] <nil>
}

func ExampleMatcher() {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", ResourceVersion: "7", Labels: map[string]string{
			zones.ZoneLabel: "us-east-1a__us-east-1b",
		}},
		Spec: v1.PersistentVolumeSpec{NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: "disktype", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}},
			}}},
		}}},
	}
	node := func(zone, disk string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: zone + "-" + disk, Labels: map[string]string{
			zones.ZoneLabel: zone, "disktype": disk,
		}}}
	}

	// One Matcher serves every sync: pv-1 is parsed once for all nodes.
	var m zones.Matcher
	for _, n := range []*v1.Node{node("us-east-1a", "ssd"), node("us-east-1b", "hdd"), node("us-east-1c", "ssd")} {
		ok, err := m.Matches(pv, n)
		fmt.Println(n.Name, ok, err)
	}
	m.Forget(pv) // when the volume is deleted
	// Output:
	// us-east-1a-ssd true <nil>
	// us-east-1b-hdd false <nil>
	// us-east-1c-ssd false <nil>
}

func ExampleSelectZones() {
	nodes := []*v1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{zones.ZoneLabel: "us-east-1a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{zones.ZoneLabel: "us-east-1b"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n3", Labels: map[string]string{zones.ZoneLabel: "us-east-1c"}}},
	}
	// The claims of a 4-replica StatefulSet "web" spread across the zones
	// with nodes, as the in-tree provisioners placed them.
	for ordinal := range 4 {
		zs, err := zones.SelectZones(zones.Request{
			ClaimName:      fmt.Sprintf("data-web-%d", ordinal),
			ZonesWithNodes: zones.ZonesWithNodes(nodes),
		})
		fmt.Println(ordinal, sets.List(zs), err)
	}

	// A regional disk (2 replicas) restricted by allowedTopologies, with
	// delayed binding: the selected node's zone is one of the two.
	class := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "regional"},
		AllowedTopologies: []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: zones.ZoneLabel, Values: []string{"us-east-1a", "us-east-1b", "us-east-1c"}},
		}}},
	}
	zs, err := zones.SelectZones(zones.Request{ClaimName: "data-db-0", Replicas: 2, Class: class, SelectedNode: nodes[2]})
	fmt.Println(sets.List(zs), err)
	// Output:
	// 0 [us-east-1a] <nil>
	// 1 [us-east-1b] <nil>
	// 2 [us-east-1c] <nil>
	// 3 [us-east-1a] <nil>
	// [us-east-1b us-east-1c] <nil>
}

func ExampleLabelVolume() {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-0b7c"}}
	labelled, err := zones.LabelVolume(pv, zones.Placement{
		Zones:  sets.New("us-east-1b", "us-east-1a"),
		Region: "us-east-1",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(labelled.Labels[zones.ZoneLabel], labelled.Labels[zones.RegionLabel])
	for _, e := range labelled.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions {
		fmt.Println(e.Key, e.Operator, e.Values)
	}

	// A label that disagrees is refused, not overwritten.
	_, err = zones.LabelVolume(labelled, zones.Placement{Zones: sets.New("us-east-1c")})
	fmt.Println(err)
	// Output:
	// us-east-1a__us-east-1b us-east-1
	// topology.kubernetes.io/zone In [us-east-1a us-east-1b]
	// topology.kubernetes.io/region In [us-east-1]
	// volume "pvc-0b7c": metadata.labels[topology.kubernetes.io/zone] is "us-east-1a__us-east-1b", want "us-east-1c": zones: conflicting placement
}

func ExampleRoundUp() {
	// AWS EBS sizes are whole GiB (the default unit): a 1500Mi claim gets
	// a 2 GiB volume, and the volume's capacity says so.
	a, err := zones.RoundUp(resource.MustParse("1500Mi"), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	size, _ := a.Int32() // the EC2 API takes an int32 count of GiB
	capacity := a.Quantity()
	fmt.Println(a, size, capacity.String())

	mb, _ := zones.RoundUp(resource.MustParse("1500Mi"), zones.MB)
	capacity = mb.Quantity()
	fmt.Println(mb, capacity.String())

	_, err = zones.RoundUp(resource.MustParse("16Ei"), zones.GiB)
	fmt.Println(errors.Is(err, zones.ErrOverflow))
	// Output:
	// 2GiB 2 2Gi
	// 1573MB 1573M
	// true
}
