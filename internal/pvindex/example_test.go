package pvindex_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/volbind/volbind/internal/pvindex"
)

func volume(name, size string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:      modes,
			StorageClassName: "fast",
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

func claim(name, size string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	class := "fast"
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: &class,
			Resources: v1.VolumeResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			},
		},
	}
}

// The smallest volume that fits wins, and volumes with fewer access modes are
// preferred: the 20Gi RWO volume is chosen over the smaller RWO+RWX one.
func Example() {
	ix := pvindex.New()
	ix.Upsert(volume("pv-small", "5Gi", v1.ReadWriteOnce))
	ix.Upsert(volume("pv-multi", "10Gi", v1.ReadWriteOnce, v1.ReadWriteMany))
	ix.Upsert(volume("pv-large", "20Gi", v1.ReadWriteOnce))
	ix.Upsert(volume("pv-huge", "100Gi", v1.ReadWriteOnce))

	pv, err := ix.FindBestMatch(claim("data", "8Gi", v1.ReadWriteOnce), pvindex.FindOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pv.Name)

	pv, _ = ix.FindBestMatch(claim("shared", "8Gi", v1.ReadWriteMany), pvindex.FindOptions{})
	fmt.Println(pv.Name)
	// Output:
	// pv-large
	// pv-multi
}

// A scheduler that picks volumes for several claims of one pod excludes the
// volumes it already chose.
func ExampleIndex_FindBestMatch_exclude() {
	ix := pvindex.New()
	ix.Upsert(volume("pv-a", "10Gi", v1.ReadWriteOnce))
	ix.Upsert(volume("pv-b", "10Gi", v1.ReadWriteOnce))

	chosen := map[string]bool{}
	for _, c := range []*v1.PersistentVolumeClaim{
		claim("first", "1Gi", v1.ReadWriteOnce),
		claim("second", "1Gi", v1.ReadWriteOnce),
		claim("third", "1Gi", v1.ReadWriteOnce),
	} {
		pv, _ := ix.FindBestMatch(c, pvindex.FindOptions{Exclude: chosen})
		if pv == nil {
			fmt.Println(c.Name, "-> none")
			continue
		}
		chosen[pv.Name] = true
		fmt.Println(c.Name, "->", pv.Name)
	}
	// Output:
	// first -> pv-a
	// second -> pv-b
	// third -> none
}

// The scheduler passes the node it is trying: volumes pinned to another zone
// by their node affinity are skipped. SchedulerSearch runs kube-scheduler's
// search, which takes the smallest volume over all access-mode sets.
func ExampleIndex_FindBestMatch_node() {
	zonal := func(pv *v1.PersistentVolume, zone string) *v1.PersistentVolume {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
				Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{zone},
			}}}},
		}}
		return pv
	}
	ix := pvindex.New()
	ix.Upsert(zonal(volume("pv-a-small", "10Gi", v1.ReadWriteOnce), "zone-a"))
	ix.Upsert(zonal(volume("pv-b-large", "50Gi", v1.ReadWriteOnce), "zone-b"))
	ix.Upsert(zonal(volume("pv-b-multi", "20Gi", v1.ReadWriteOnce, v1.ReadOnlyMany), "zone-b"))

	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   "node-1",
		Labels: map[string]string{"topology.kubernetes.io/zone": "zone-b"},
	}}
	c := claim("data", "5Gi", v1.ReadWriteOnce)
	controller, _ := ix.FindBestMatch(c, pvindex.FindOptions{Node: node})
	scheduler, _ := ix.FindBestMatch(c, pvindex.FindOptions{Node: node, SchedulerSearch: true})
	fmt.Println("PV controller rules:", controller.Name)
	fmt.Println("scheduler search:", scheduler.Name)
	// Output:
	// PV controller rules: pv-b-large
	// scheduler search: pv-b-multi
}
