package bindertest

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDiffersAtSight checks that differsAtSight never calls two versions
// different that encode alike (it only spares the encoding), and that it
// does tell the four writes of a binding from their old versions.
func TestDiffersAtSight(t *testing.T) {
	basePV := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	baseClaim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claim1", Namespace: "ns"},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	ref := &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "claim1", UID: "u1", ResourceVersion: "7"}
	pvEdits := map[string]func(*v1.PersistentVolume){
		"same":             func(*v1.PersistentVolume) {},
		"claimRef":         func(pv *v1.PersistentVolume) { pv.Spec.ClaimRef = ref },
		"empty claimRef":   func(pv *v1.PersistentVolume) { pv.Spec.ClaimRef = &v1.ObjectReference{} },
		"phase":            func(pv *v1.PersistentVolume) { pv.Status.Phase = v1.VolumeBound },
		"message":          func(pv *v1.PersistentVolume) { pv.Status.Message = "m" },
		"reason":           func(pv *v1.PersistentVolume) { pv.Status.Reason = "r" },
		"annotation added": func(pv *v1.PersistentVolume) { pv.Annotations = map[string]string{"c": "d", "e": "f"} },
		"annotation value": func(pv *v1.PersistentVolume) { pv.Annotations = map[string]string{"c": "x"} },
		"no annotations":   func(pv *v1.PersistentVolume) { pv.Annotations = nil },
		"label removed":    func(pv *v1.PersistentVolume) { pv.Labels = map[string]string{} },
		"finalizer":        func(pv *v1.PersistentVolume) { pv.Finalizers = []string{"f"} },
		"capacity": func(pv *v1.PersistentVolume) {
			pv.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")}
		},
		"capacity, same": func(pv *v1.PersistentVolume) {
			pv.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1024Mi")}
		},
		"claimRef rv": func(pv *v1.PersistentVolume) { r := *ref; r.ResourceVersion = "8"; pv.Spec.ClaimRef = &r },
	}
	pvs := map[string]*v1.PersistentVolume{}
	for name, edit := range pvEdits {
		pv := basePV.DeepCopy()
		edit(pv)
		pvs[name] = pv
	}
	// A claimRef on both sides that differs only in its resourceVersion
	// ("claimRef rv" against this one).
	withRef := basePV.DeepCopy()
	withRef.Spec.ClaimRef = ref
	pvs["claimRef base"] = withRef

	claims := map[string]*v1.PersistentVolumeClaim{"same": baseClaim.DeepCopy()}
	for name, edit := range map[string]func(*v1.PersistentVolumeClaim){
		"volumeName": func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv1" },
		"phase":      func(c *v1.PersistentVolumeClaim) { c.Status.Phase = v1.ClaimBound },
		"capacity": func(c *v1.PersistentVolumeClaim) {
			c.Status.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
		},
		"modes": func(c *v1.PersistentVolumeClaim) {
			c.Status.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		},
		"annotated": func(c *v1.PersistentVolumeClaim) { c.Annotations = map[string]string{"x": "y"} },
	} {
		c := baseClaim.DeepCopy()
		edit(c)
		claims[name] = c
	}

	sure := 0
	check := func(an, bn string, a, b object) {
		for _, status := range []bool{false, true} {
			if !differsAtSight(a, b, status) {
				continue
			}
			sure++
			var same bool
			if status {
				same = equalEncoding(statusOf(a), statusOf(b))
			} else {
				same = equalEncoding(asMessage(a), asMessage(b))
			}
			if same {
				t.Errorf("differsAtSight(%s, %s, status=%v) = true, but they encode alike", an, bn, status)
			}
		}
	}
	for an, a := range pvs {
		for bn, b := range pvs {
			check(an, bn, a, b)
		}
	}
	for an, a := range claims {
		for bn, b := range claims {
			check(an, bn, a, b)
		}
	}
	if sure == 0 {
		t.Fatal("differsAtSight was never sure: the test checks nothing")
	}

	// The writes of a binding are told apart at sight.
	for _, w := range []struct {
		name      string
		next, old object
		status    bool
	}{
		{"volume claimRef", pvs["claimRef"], pvs["same"], false},
		{"volume phase", pvs["phase"], pvs["same"], true},
		{"claim volumeName", claims["volumeName"], claims["same"], false},
		{"claim phase", claims["phase"], claims["same"], true},
	} {
		if !differsAtSight(w.next, w.old, w.status) {
			t.Errorf("%s: differsAtSight = false, want true", w.name)
		}
	}
}
