package scheduling

import (
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func decisionPod(name, uid string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid)}}
}

func decisionNode(name string) *v1.Node { return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }

func TestDecisions(t *testing.T) {
	pod, recreated, other := decisionPod("p", "uid1"), decisionPod("p", "uid2"), decisionPod("q", "uid3")
	pvc1 := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
	pvc2 := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c2"}}
	b1 := &BindingInfo{PVC: pvc1, PV: &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}}}

	type record struct {
		pod        *v1.Pod
		node       string
		bindings   []*BindingInfo
		provisions []*v1.PersistentVolumeClaim
	}
	type query struct {
		pod  *v1.Pod
		node string
		// want is nil when nothing is recorded.
		want *PodVolumes
	}
	tests := []struct {
		name    string
		records []record
		forget  []*v1.Pod
		queries []query
		wantLen int
	}{{
		name:    "unknown pod and node",
		records: []record{{pod, "n1", []*BindingInfo{b1}, nil}},
		queries: []query{{other, "n1", nil}, {pod, "n2", nil}},
		wantLen: 1,
	}, {
		name:    "nothing needed reads back empty, not nil",
		records: []record{{pod, "n1", nil, nil}},
		queries: []query{{pod, "n1", &PodVolumes{StaticBindings: []*BindingInfo{}, DynamicProvisions: []*v1.PersistentVolumeClaim{}}}},
		wantLen: 1,
	}, {
		name: "per node, the latest record wins",
		records: []record{
			{pod, "n1", []*BindingInfo{b1}, nil},
			{pod, "n2", nil, []*v1.PersistentVolumeClaim{pvc1, pvc2}},
			{pod, "n1", nil, []*v1.PersistentVolumeClaim{pvc2}},
		},
		queries: []query{
			{pod, "n1", &PodVolumes{StaticBindings: []*BindingInfo{}, DynamicProvisions: []*v1.PersistentVolumeClaim{pvc2}}},
			{pod, "n2", &PodVolumes{StaticBindings: []*BindingInfo{}, DynamicProvisions: []*v1.PersistentVolumeClaim{pvc1, pvc2}}},
		},
		wantLen: 1,
	}, {
		name:    "recreated pod starts over",
		records: []record{{pod, "n1", []*BindingInfo{b1}, nil}, {recreated, "n2", nil, nil}},
		queries: []query{{pod, "n1", nil}, {recreated, "n1", nil},
			{recreated, "n2", &PodVolumes{StaticBindings: []*BindingInfo{}, DynamicProvisions: []*v1.PersistentVolumeClaim{}}}},
		wantLen: 1,
	}, {
		name:    "forget one pod",
		records: []record{{pod, "n1", []*BindingInfo{b1}, nil}, {other, "n1", []*BindingInfo{b1}, nil}},
		forget:  []*v1.Pod{pod},
		queries: []query{{pod, "n1", nil},
			{other, "n1", &PodVolumes{StaticBindings: []*BindingInfo{b1}, DynamicProvisions: []*v1.PersistentVolumeClaim{}}}},
		wantLen: 1,
	}, {
		name:    "forgetting a pod keeps its recreated namesake",
		records: []record{{recreated, "n1", []*BindingInfo{b1}, nil}},
		forget:  []*v1.Pod{pod},
		queries: []query{{recreated, "n1", &PodVolumes{StaticBindings: []*BindingInfo{b1}, DynamicProvisions: []*v1.PersistentVolumeClaim{}}}},
		wantLen: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDecisions()
			for _, r := range tc.records {
				d.record(r.pod, r.node, r.bindings, r.provisions)
			}
			for _, p := range tc.forget {
				d.forget(p)
			}
			for _, q := range tc.queries {
				node := decisionNode(q.node)
				got, ok := d.get(q.pod, node)
				if ok != (q.want != nil) {
					t.Fatalf("get(%s, %s) found = %v, want %v", q.pod.UID, q.node, ok, q.want != nil)
				}
				if !ok {
					continue
				}
				if got.Node != node || !slices.Equal(got.StaticBindings, q.want.StaticBindings) ||
					!slices.Equal(got.DynamicProvisions, q.want.DynamicProvisions) ||
					got.StaticBindings == nil || got.DynamicProvisions == nil {
					t.Errorf("get(%s, %s) = %+v, want %+v", q.pod.UID, q.node, got, q.want)
				}
			}
			if got := d.len(); got != tc.wantLen {
				t.Errorf("len = %d, want %d", got, tc.wantLen)
			}
		})
	}
}

// TestDecisionsAreCopies: neither the recorded slices nor the returned ones
// are shared with the caller.
func TestDecisionsAreCopies(t *testing.T) {
	d := newDecisions()
	pod, node := decisionPod("p", "u"), decisionNode("n1")
	b1 := &BindingInfo{PV: &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}}}
	in := []*BindingInfo{b1}
	d.record(pod, "n1", in, nil)
	in[0] = nil
	got, _ := d.get(pod, node)
	got.StaticBindings[0] = nil
	if again, ok := d.get(pod, node); !ok || len(again.StaticBindings) != 1 || again.StaticBindings[0] != b1 {
		t.Errorf("get after mutating copies = %+v, want [%p]", again, b1)
	}
}

// TestDecisionsConcurrent: concurrent records, gets and forgets (checked
// by the race detector) leave decisions that still record and forget each
// pod.
func TestDecisionsConcurrent(t *testing.T) {
	d := newDecisions()
	node := decisionNode("n1")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				pod := decisionPod(string(rune('a'+i%20)), "u")
				switch (i + w) % 3 {
				case 0:
					d.record(pod, "n1", nil, nil)
				case 1:
					d.get(pod, node)
				default:
					d.forget(pod)
				}
			}
		})
	}
	wg.Wait()
	for i := range 20 {
		d.record(decisionPod(string(rune('a'+i)), "u"), "n1", nil, nil)
	}
	if n := d.len(); n != 20 {
		t.Errorf("len = %d after recording all 20 pods, want 20", n)
	}
	for i := range 20 {
		pod := decisionPod(string(rune('a'+i)), "u")
		if _, ok := d.get(pod, node); !ok {
			t.Errorf("no decision for pod %s after recording it", pod.Name)
		}
		d.forget(pod)
	}
	if n := d.len(); n != 0 {
		t.Errorf("len = %d after forgetting all 20 pods, want 0", n)
	}
}
