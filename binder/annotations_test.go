package binder

import (
	"maps"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
)

// checkBindingAnnotations checks, when t ends, that b's shared annotation
// maps still hold exactly what newBindingAnnotations put in them: every
// object bound without annotations shares them, so a write that modified
// one in place would change the annotations of every such object. Every
// test Binder made by env.newBinder is checked.
func checkBindingAnnotations(t testing.TB, b *Binder) {
	want := newBindingAnnotations()
	t.Cleanup(func() {
		for _, c := range []struct {
			name      string
			got, want map[string]string
		}{{"bound-by-controller", b.annotations.boundBy, want.boundBy},
			{"bind-completed", b.annotations.completed, want.completed},
			{"both", b.annotations.both, want.both}} {
			if !maps.Equal(c.got, c.want) {
				t.Errorf("the shared %s annotations were modified: %v, want %v", c.name, c.got, c.want)
			}
		}
	})
}

func TestBindingAnnotationsWith(t *testing.T) {
	a := newBindingAnnotations()
	const (
		boundBy   = volume.AnnBoundByController
		completed = volume.AnnBindCompleted
	)
	own := map[string]string{"a": "b"}
	for _, tc := range []struct {
		name       string
		in         map[string]string
		by, compl  bool
		want       map[string]string
		wantShared map[string]string // the shared map expected, or nil for a new one
	}{
		{"neither asked for: the argument itself", own, false, false, map[string]string{"a": "b"}, own},
		{"none, both", nil, true, true, map[string]string{boundBy: "yes", completed: "yes"}, a.both},
		{"empty, both", map[string]string{}, true, true, map[string]string{boundBy: "yes", completed: "yes"}, a.both},
		{"none, bound-by", nil, true, false, map[string]string{boundBy: "yes"}, a.boundBy},
		{"none, completed", nil, false, true, map[string]string{completed: "yes"}, a.completed},
		{"others kept", map[string]string{"a": "b"}, true, true, map[string]string{"a": "b", boundBy: "yes", completed: "yes"}, nil},
		{"completed added to bound-by", map[string]string{boundBy: "yes"}, false, true, map[string]string{boundBy: "yes", completed: "yes"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.in)
			got := a.with(tc.in, tc.by, tc.compl)
			if !maps.Equal(got, tc.want) {
				t.Errorf("with = %v, want %v", got, tc.want)
			}
			if !maps.Equal(tc.in, before) {
				t.Errorf("with modified its argument: %v, was %v", tc.in, before)
			}
			switch shared := tc.wantShared; {
			case shared != nil && !sameMap(got, shared):
				t.Errorf("with built a map, want the shared one")
			case shared == nil && (sameMap(got, a.both) || sameMap(got, a.boundBy) || sameMap(got, a.completed)):
				t.Errorf("with returned a shared map for annotations of its own")
			}
		})
	}
}

// TestBindingAnnotationsOnObjects binds claims without annotations (the
// shared maps) and one with an annotation of its own (a new map), and
// checks the annotations each object is stored with; env's check of the
// shared maps then asserts that no write of the run modified them.
func TestBindingAnnotationsOnObjects(t *testing.T) {
	e := newEnv(t, newPV("pv1", "1Gi"), newPV("pv2", "1Gi"), newPV("pv3", "1Gi", pvAnn("a")),
		newPVC("claim1", "1Gi"), newPVC("claim2", "1Gi"), newPVC("claim3", "1Gi", pvcAnn("b"), pvcVolume("pv3")))
	e.run(e.b)
	e.settle(e.b)
	want := map[string]string{volume.AnnBoundByController: "yes", volume.AnnBindCompleted: "yes"}
	for _, name := range []string{"claim1", "claim2"} {
		if c := e.claim(name); c.Status.Phase != v1.ClaimBound || !maps.Equal(c.Annotations, want) {
			t.Errorf("claim %s: phase %s, annotations %v; want Bound with %v", name, c.Status.Phase, c.Annotations, want)
		}
	}
	if c := e.claim("claim3"); c.Status.Phase != v1.ClaimBound || !maps.Equal(c.Annotations, map[string]string{"b": "yes", volume.AnnBindCompleted: "yes"}) {
		t.Errorf("claim3 (asked for pv3): phase %s, annotations %v; want Bound with b and bind-completed only", c.Status.Phase, c.Annotations)
	}
	for name, want := range map[string]map[string]string{
		"pv1": {volume.AnnBoundByController: "yes"}, "pv2": {volume.AnnBoundByController: "yes"},
		"pv3": {"a": "yes", volume.AnnBoundByController: "yes"}} {
		if pv := e.volume(name); pv.Status.Phase != v1.VolumeBound || !maps.Equal(pv.Annotations, want) {
			t.Errorf("volume %s: phase %s, annotations %v; want Bound with %v", name, pv.Status.Phase, pv.Annotations, want)
		}
	}
}

// sameMap reports whether a and b are the same map (not only equal).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
