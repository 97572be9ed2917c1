package explain_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/explain"
)

// zonalCluster has a node in each of zones a and b, a class whose driver
// tracks capacity, with 20Gi left in zone a and 5Gi in zone b, and a pod
// whose claim asks for 10Gi.
func zonalCluster() explain.Objects {
	capacity := func(name, zone, size string) *storagev1.CSIStorageCapacity {
		return &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Namespace: "kube-system", Name: name},
			StorageClassName: "tracked",
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: zone}},
			Capacity:         ptr.To(resource.MustParse(size)),
		}
	}
	return explain.Objects{
		Classes:    []*storagev1.StorageClass{class("tracked", "csi.example.com", wffc)},
		CSIDrivers: []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}}},
		Capacities: []*storagev1.CSIStorageCapacity{capacity("cap-a", "a", "20Gi"), capacity("cap-b", "b", "5Gi")},
		Nodes:      []*v1.Node{zoneNode("a-1", "a"), zoneNode("b-1", "b")},
		Claims:     []*v1.PersistentVolumeClaim{pvc("data", "tracked", "10Gi")},
		Pods:       []*v1.Pod{podUsing("db-0", "data")},
	}
}

// TestPodCapacity names the CSIStorageCapacity that admits the claim on
// the node that fits, and those too small on the other.
func TestPodCapacity(t *testing.T) {
	t.Parallel()
	e := newExplainer(t, zonalCluster(), explain.Config{})
	x, err := e.Pod(t.Context(), "app", "db-0", explain.PodOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if x.Verdict != explain.Schedulable || strings.Join(x.FitNodes, ",") != "a-1" {
		t.Fatalf("verdict %s on %v, want Schedulable on a-1", x.Verdict, x.FitNodes)
	}
	a, b := x.Nodes[0], x.Nodes[1]
	if len(a.Claims) != 1 || a.Claims[0].Action != "provision" || a.Claims[0].Capacity == nil || a.Claims[0].Capacity.Name != "kube-system/cap-a" {
		t.Errorf("node a-1: claims %+v, want app/data provisioned, admitted by kube-system/cap-a", a.Claims)
	}
	if len(b.Reasons) != 1 {
		t.Fatalf("node b-1: reasons %+v, want one", b.Reasons)
	}
	r := b.Reasons[0]
	if r.Message != "node(s) did not have enough free storage" || r.Kind != "NotEnoughSpace" || r.Claim != "app/data" {
		t.Errorf("node b-1: reason %+v, want NotEnoughSpace of app/data", r)
	}
	if len(r.Capacities) != 1 || r.Capacities[0].Name != "kube-system/cap-b" || r.Capacities[0].Detail != "capacity 5Gi < request 10Gi" {
		t.Errorf("node b-1: capacities %+v, want kube-system/cap-b, 5Gi < 10Gi", r.Capacities)
	}
}

// TestPodNodes limits the explanation to the nodes given.
func TestPodNodes(t *testing.T) {
	t.Parallel()
	e := newExplainer(t, zonalCluster(), explain.Config{})
	x, err := e.Pod(t.Context(), "app", "db-0", explain.PodOptions{Nodes: []string{"b-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Nodes) != 1 || x.Nodes[0].Node != "b-1" || x.Verdict != explain.Unschedulable {
		t.Fatalf("nodes %+v, verdict %s; want only b-1, Unschedulable", x.Nodes, x.Verdict)
	}
	if want := "0/1 nodes are available: 1 node(s) did not have enough free storage."; x.Summary != want {
		t.Errorf("Summary = %q, want %q", x.Summary, want)
	}
	if _, err := e.Pod(t.Context(), "app", "db-0", explain.PodOptions{Nodes: []string{"nope"}}); !errors.Is(err, explain.ErrNotFound) {
		t.Errorf("Pod with an unknown node: %v, want ErrNotFound", err)
	}
}

// TestPodUnevaluable: a pod whose claim does not exist gets
// kube-scheduler's text on no node; an unknown pod is ErrNotFound; a pod
// on a node is Scheduled.
func TestPodUnevaluable(t *testing.T) {
	t.Parallel()
	objs := zonalCluster()
	scheduled := podUsing("web-0", "data")
	scheduled.Spec.NodeName = "a-1"
	objs.Pods = append(objs.Pods, podUsing("lost-0", "nope"), scheduled)
	e := newExplainer(t, objs, explain.Config{})
	x, err := e.Pod(t.Context(), "app", "lost-0", explain.PodOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if x.Verdict != explain.Unschedulable || x.Error != `persistentvolumeclaim "nope" not found` || len(x.Nodes) != 0 {
		t.Errorf("verdict %s, error %q, %d nodes; want Unschedulable, claim not found, no nodes", x.Verdict, x.Error, len(x.Nodes))
	}
	if x, err = e.Pod(t.Context(), "app", "web-0", explain.PodOptions{}); err != nil || x.Verdict != explain.Scheduled {
		t.Errorf("scheduled pod: %+v, %v; want Scheduled", x, err)
	}
	if _, err := e.Pod(t.Context(), "app", "nope", explain.PodOptions{}); !errors.Is(err, explain.ErrNotFound) {
		t.Errorf("unknown pod: %v, want ErrNotFound", err)
	}
}

// TestPodText groups nodes with the same outcome.
func TestPodText(t *testing.T) {
	t.Parallel()
	objs := zonalCluster()
	objs.Nodes = append(objs.Nodes, zoneNode("b-2", "b"), zoneNode("b-3", "b"))
	e := newExplainer(t, objs, explain.Config{})
	x, err := e.Pod(t.Context(), "app", "db-0", explain.PodOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := explain.WritePodText(&out, x); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Pod app/db-0: fits on 1 of 4 node(s): a-1\n",
		"  a-1: fits\n    app/data: provisioned by csi.example.com (CSIStorageCapacity kube-system/cap-a: capacity 20Gi admits request 10Gi)\n",
		"  b-1, b-2, b-3: node(s) did not have enough free storage\n",
		"      CSIStorageCapacity kube-system/cap-b: capacity 5Gi < request 10Gi\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPodMigratedVolume: on a node whose CSINode lists the in-tree GCE PD
// plugin as migrated, a bound GCE PD volume's zone is checked as its CSI
// driver's topology, as kube-scheduler does; without CSINodes the volume,
// which has no node affinity, fits every node.
func TestPodMigratedVolume(t *testing.T) {
	t.Parallel()
	cluster := func(csiNodes bool) explain.Objects {
		disk := pv("disk", "", "10Gi")
		disk.Labels = map[string]string{v1.LabelTopologyZone: "us-central1-a"}
		disk.Spec.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: "disk"}
		claim := pvc("data", "", "10Gi")
		bind(disk, claim)
		node := func(name, zone string) *v1.Node {
			n := zoneNode(name, zone)
			n.Labels["topology.gke.io/zone"] = zone
			return n
		}
		objs := explain.Objects{Volumes: []*v1.PersistentVolume{disk}, Claims: []*v1.PersistentVolumeClaim{claim},
			Nodes: []*v1.Node{node("n-a", "us-central1-a"), node("n-b", "us-central1-b")}, Pods: []*v1.Pod{podUsing("db-0", "data")}}
		if csiNodes {
			for _, n := range objs.Nodes {
				objs.CSINodes = append(objs.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: n.Name,
					Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/gce-pd"}}})
			}
		}
		return objs
	}
	for _, tc := range []struct {
		csiNodes bool
		fit      string
	}{{false, "n-a,n-b"}, {true, "n-a"}} {
		e := newExplainer(t, cluster(tc.csiNodes), explain.Config{})
		x, err := e.Pod(t.Context(), "app", "db-0", explain.PodOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(x.FitNodes, ","); got != tc.fit {
			t.Errorf("CSINodes=%t: fits on %q, want %q", tc.csiNodes, got, tc.fit)
		}
		if tc.csiNodes && (len(x.Nodes) != 2 || len(x.Nodes[1].Reasons) != 1 || x.Nodes[1].Reasons[0].Kind != "VolumeNodeAffinityConflict" ||
			x.Nodes[1].Reasons[0].Volume != "disk") {
			t.Errorf("CSINodes=true: nodes %+v, want n-b rejected by VolumeNodeAffinityConflict of volume disk", x.Nodes)
		}
	}
}
