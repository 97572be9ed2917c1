package volumebinding

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"
)

func TestQueueingHints(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0"}, Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web-0"}}},
		{Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "csi.example.com"}}},
	}}}
	claim := func(ns, name string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	class := func(zone string) *storagev1.StorageClass {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}}
		if zone != "" {
			sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: "zone", Values: []string{zone}}}}}
		}
		return sc
	}
	csiNode := func(migrated string) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: migrated}}}
	}
	capacity := func(size string) *storagev1.CSIStorageCapacity {
		return &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}, Capacity: ptr.To(resource.MustParse(size))}
	}
	driver := func(name string, tracks bool) *storagev1.CSIDriver {
		return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(tracks)}}
	}
	hints := registeredHints(t)
	claimHint, classHint, csiNodeHint := hints[fwk.PersistentVolumeClaim], hints[fwk.StorageClass], hints[fwk.CSINode]
	capacityHint, driverHint := hints[fwk.CSIStorageCapacity], hints[fwk.CSIDriver]
	tests := []struct {
		name     string
		hint     fwk.QueueingHintFn
		old, new any
		want     fwk.QueueingHint
	}{
		{"claim of the pod created", claimHint, nil, claim("ns", "data-web-0"), fwk.Queue},
		{"claim of the pod updated", claimHint, claim("ns", "data-web-0"), claim("ns", "data-web-0"), fwk.Queue},
		{"other claim", claimHint, nil, claim("ns", "other"), fwk.QueueSkip},
		{"same name, other namespace", claimHint, nil, claim("other", "data-web-0"), fwk.QueueSkip},
		{"class created", classHint, nil, class(""), fwk.Queue},
		{"class topology changed", classHint, class("a"), class("b"), fwk.Queue},
		{"class otherwise updated", classHint, class("a"), class("a"), fwk.QueueSkip},
		{"CSINode created", csiNodeHint, nil, csiNode(""), fwk.Queue},
		{"CSINode migrated plugins changed", csiNodeHint, csiNode(""), csiNode("kubernetes.io/gce-pd"), fwk.Queue},
		{"CSINode otherwise updated", csiNodeHint, csiNode("x"), csiNode("x"), fwk.QueueSkip},
		{"capacity created", capacityHint, nil, capacity("1Gi"), fwk.Queue},
		{"capacity grew", capacityHint, capacity("1Gi"), capacity("2Gi"), fwk.Queue},
		{"capacity shrank", capacityHint, capacity("2Gi"), capacity("1Gi"), fwk.QueueSkip},
		{"pod's driver stopped tracking capacity", driverHint, driver("csi.example.com", true), driver("csi.example.com", false), fwk.Queue},
		{"pod's driver started tracking capacity", driverHint, driver("csi.example.com", false), driver("csi.example.com", true), fwk.QueueSkip},
		{"other driver", driverHint, driver("other", true), driver("other", false), fwk.QueueSkip},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hint == nil {
				t.Fatal("no queueing hint registered")
			}
			got, err := tc.hint(klog.Background(), pod, tc.old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := claimHint(klog.Background(), pod, nil, class("")); err == nil {
		t.Error("the claim hint given a StorageClass did not fail")
	}
}

// registeredHints returns the queueing hint of each resource
// EventsToRegister lists; it fails the test for a resource listed twice.
func registeredHints(t *testing.T) map[fwk.EventResource]fwk.QueueingHintFn {
	t.Helper()
	events, err := (&Plugin{}).EventsToRegister(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hints := map[fwk.EventResource]fwk.QueueingHintFn{}
	for _, e := range events {
		if _, dup := hints[e.Event.Resource]; dup {
			t.Fatalf("two events for %s", e.Event.Resource)
		}
		hints[e.Event.Resource] = e.QueueingHintFn
	}
	return hints
}

func TestEventsToRegister(t *testing.T) {
	events, err := (&Plugin{}).EventsToRegister(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[fwk.EventResource]bool{fwk.StorageClass: true, fwk.PersistentVolumeClaim: true, fwk.PersistentVolume: false,
		fwk.Node: false, fwk.CSINode: true, fwk.CSIDriver: true, fwk.CSIStorageCapacity: true}
	for _, e := range events {
		hinted, ok := want[e.Event.Resource]
		if !ok {
			t.Errorf("unexpected event %v", e.Event)
			continue
		}
		if hinted != (e.QueueingHintFn != nil) {
			t.Errorf("event %v has a queueing hint: %v, want %v", e.Event, e.QueueingHintFn != nil, hinted)
		}
		delete(want, e.Event.Resource)
	}
	for r := range want {
		t.Errorf("no event for %s", r)
	}
}
