package cache

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestPodBindings(t *testing.T) {
	pod := newPod("ns", "p", "uid1")
	recreated := newPod("ns", "p", "uid2")
	other := newPod("ns", "q", "uid3")
	pv1, pvc1 := newPV("pv1", "gold", "1"), newPVC("ns", "c1", "1")
	pvc2 := newPVC("ns", "c2", "1")
	b1 := &BindingInfo{PVC: pvc1, PV: pv1}

	type update struct {
		pod           *v1.Pod
		node          string
		bindings      []*BindingInfo
		provisionings []*v1.PersistentVolumeClaim
	}
	type query struct {
		pod               *v1.Pod
		node              string
		wantBindings      []*BindingInfo // nil = unknown
		wantProvisionings []*v1.PersistentVolumeClaim
	}
	tests := []struct {
		name    string
		updates []update
		deletes []*v1.Pod
		queries []query
		wantLen int
	}{
		{
			name:    "unknown pod and node give nil",
			updates: []update{{pod, "n1", []*BindingInfo{b1}, nil}},
			queries: []query{
				{pod: other, node: "n1"},
				{pod: pod, node: "n2"},
				{pod: nil, node: "n1"},
			},
			wantLen: 1,
		},
		{
			name:    "nothing needed reads back empty, not nil",
			updates: []update{{pod, "n1", nil, []*v1.PersistentVolumeClaim{}}},
			queries: []query{{pod, "n1", []*BindingInfo{}, []*v1.PersistentVolumeClaim{}}},
			wantLen: 1,
		},
		{
			name: "per node decisions, latest update wins",
			updates: []update{
				{pod, "n1", []*BindingInfo{b1}, nil},
				{pod, "n2", nil, []*v1.PersistentVolumeClaim{pvc1, pvc2}},
				{pod, "n1", nil, []*v1.PersistentVolumeClaim{pvc2}},
			},
			queries: []query{
				{pod, "n1", []*BindingInfo{}, []*v1.PersistentVolumeClaim{pvc2}},
				{pod, "n2", []*BindingInfo{}, []*v1.PersistentVolumeClaim{pvc1, pvc2}},
			},
			wantLen: 1,
		},
		{
			name: "recreated pod starts over",
			updates: []update{
				{pod, "n1", []*BindingInfo{b1}, nil},
				{recreated, "n2", nil, nil},
			},
			queries: []query{
				{pod: pod, node: "n1"},
				{pod: recreated, node: "n1"},
				{recreated, "n2", []*BindingInfo{}, []*v1.PersistentVolumeClaim{}},
			},
			wantLen: 1,
		},
		{
			name: "delete pod",
			updates: []update{
				{pod, "n1", []*BindingInfo{b1}, nil},
				{other, "n1", []*BindingInfo{b1}, nil},
			},
			deletes: []*v1.Pod{pod, nil},
			queries: []query{
				{pod: pod, node: "n1"},
				{other, "n1", []*BindingInfo{b1}, []*v1.PersistentVolumeClaim{}},
			},
			wantLen: 1,
		},
		{
			name:    "delete of a recreated pod keeps the new one",
			updates: []update{{recreated, "n1", []*BindingInfo{b1}, nil}},
			deletes: []*v1.Pod{pod},
			queries: []query{{recreated, "n1", []*BindingInfo{b1}, []*v1.PersistentVolumeClaim{}}},
			wantLen: 1,
		},
		{
			name:    "nil pod ignored",
			updates: []update{{nil, "n1", []*BindingInfo{b1}, nil}},
			wantLen: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := NewPodBindings()
			for _, u := range tc.updates {
				c.Update(u.pod, u.node, u.bindings, u.provisionings)
			}
			for _, p := range tc.deletes {
				c.DeletePod(p)
			}
			for _, q := range tc.queries {
				gotB, gotP := c.Bindings(q.pod, q.node), c.Provisionings(q.pod, q.node)
				if (gotB == nil) != (q.wantBindings == nil) || !cmp.Equal(q.wantBindings, gotB, cmp.Comparer(samePtr[BindingInfo])) {
					t.Errorf("Bindings(%s, %s) = %v, want %v", describePod(q.pod), q.node, gotB, q.wantBindings)
				}
				if (gotP == nil) != (q.wantProvisionings == nil) || !cmp.Equal(q.wantProvisionings, gotP, cmp.Comparer(samePtr[v1.PersistentVolumeClaim])) {
					t.Errorf("Provisionings(%s, %s) = %v, want %v", describePod(q.pod), q.node, gotP, q.wantProvisionings)
				}
				d, ok := c.Decision(q.pod, q.node)
				if ok != (q.wantBindings != nil) || len(d.Bindings) != len(q.wantBindings) || len(d.Provisionings) != len(q.wantProvisionings) {
					t.Errorf("Decision(%s, %s) = %v, %v", describePod(q.pod), q.node, d, ok)
				}
				if ok && (d.Bindings == nil || d.Provisionings == nil) {
					t.Errorf("Decision(%s, %s) has nil slices: %+v", describePod(q.pod), q.node, d)
				}
			}
			if got := c.Len(); got != tc.wantLen {
				t.Errorf("Len = %d, want %d", got, tc.wantLen)
			}
		})
	}
}

func samePtr[T any](a, b *T) bool { return a == b }

func describePod(pod *v1.Pod) string {
	if pod == nil {
		return "<nil>"
	}
	return pod.Namespace + "/" + pod.Name + "[" + string(pod.UID) + "]"
}

func TestPodBindingsDecisionsAreCopies(t *testing.T) {
	c := NewPodBindings()
	pod := newPod("ns", "p", "u")
	b1 := &BindingInfo{PVC: newPVC("ns", "c1", "1"), PV: newPV("pv1", "", "1")}
	in := []*BindingInfo{b1}
	c.Update(pod, "n1", in, nil)
	c.Update(pod, "n2", nil, nil)
	in[0] = nil // the caller's slice is not the cache's

	all := c.Decisions(pod)
	if len(all) != 2 || len(all["n1"].Bindings) != 1 || all["n1"].Bindings[0] != b1 {
		t.Fatalf("Decisions = %+v, want n1 with %p and n2", all, b1)
	}
	if d := all["n2"]; d.Bindings == nil || d.Provisionings == nil {
		t.Errorf("Decisions[n2] = %+v, want empty non-nil slices", d)
	}
	all["n1"].Bindings[0] = nil
	c.Bindings(pod, "n1")[0] = nil
	if got := c.Bindings(pod, "n1"); len(got) != 1 || got[0] != b1 {
		t.Errorf("Bindings after mutating copies = %v, want [%p]", got, b1)
	}
	if got := c.Decisions(newPod("ns", "p", "other")); got != nil {
		t.Errorf("Decisions(other UID) = %v, want nil", got)
	}
	if got := c.Decisions(nil); got != nil {
		t.Errorf("Decisions(nil) = %v, want nil", got)
	}
}

func TestPodBindingsConcurrent(t *testing.T) {
	c := NewPodBindings()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				pod := newPod("ns", pvName(i%20), "u")
				switch (i + w) % 4 {
				case 0:
					c.Update(pod, "n1", nil, nil)
				case 1:
					c.Bindings(pod, "n1")
					c.Provisionings(pod, "n1")
				case 2:
					c.Decisions(pod)
				default:
					c.DeletePod(pod)
				}
			}
		})
	}
	wg.Wait()
	if n := c.Len(); n < 0 || n > 20 {
		t.Errorf("Len = %d, want between 0 and 20", n)
	}
}
