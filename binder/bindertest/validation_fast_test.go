package bindertest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/randfill"
)

// TestUpdateFastPathMatchesFullValidation: for updates of validated stored
// versions, the verdict of validateUpdate with the rules metaRuleFor
// picks (and its fast path) is that of the full validation, error for
// error; the updates a binding makes take the fast path.
func TestUpdateFastPathMatchesFullValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New()
	csi := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-csi", Annotations: map[string]string{"a": "b"}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h1"},
			},
		},
	}
	class := "gold"
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: &class,
		},
	}
	if _, err := s.CreateVolume(ctx, csi); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateClaim(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	claimRef := func(pv *v1.PersistentVolume) {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "c1", UID: "u1"}
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, "pv.kubernetes.io/bound-by-controller", "yes")
	}
	volumeName := func(c *v1.PersistentVolumeClaim) {
		c.Spec.VolumeName = "pv-csi"
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	}
	for _, tc := range []struct {
		name  string
		kind  Kind
		key   string
		edit  func(object)
		fast  bool // the update takes the fast path
		valid bool
	}{
		{name: "pv claimRef and annotation", kind: KindVolume, key: "pv-csi", fast: true, valid: true,
			edit: func(o object) { claimRef(o.(*v1.PersistentVolume)) }},
		{name: "pv nothing", kind: KindVolume, key: "pv-csi", fast: true, valid: true, edit: func(object) {}},
		{name: "pv claimRef and bad annotation key", kind: KindVolume, key: "pv-csi", edit: func(o object) {
			claimRef(o.(*v1.PersistentVolume))
			o.(*v1.PersistentVolume).Annotations["bad key!"] = "x"
		}},
		{name: "pv claimRef and annotations over the size limit", kind: KindVolume, key: "pv-csi", edit: func(o object) {
			claimRef(o.(*v1.PersistentVolume))
			o.(*v1.PersistentVolume).Annotations["a"] = strings.Repeat("x", 256*1024)
		}},
		{name: "pv claimRef and a changed annotation", kind: KindVolume, key: "pv-csi", fast: true, valid: true, edit: func(o object) {
			claimRef(o.(*v1.PersistentVolume))
			o.(*v1.PersistentVolume).Annotations["a"] = "c"
		}},
		{name: "pv mount options annotation", kind: KindVolume, key: "pv-csi", edit: func(o object) {
			o.(*v1.PersistentVolume).Annotations[mountOptionsAnnotation] = "ro"
		}},
		{name: "pv claimRef and capacity 0", kind: KindVolume, key: "pv-csi", edit: func(o object) {
			claimRef(o.(*v1.PersistentVolume))
			o.(*v1.PersistentVolume).Spec.Capacity[v1.ResourceStorage] = resource.MustParse("0")
		}},
		{name: "pv claimRef and new handle", kind: KindVolume, key: "pv-csi", edit: func(o object) {
			claimRef(o.(*v1.PersistentVolume))
			o.(*v1.PersistentVolume).Spec.CSI.VolumeHandle = "h2"
		}},
		{name: "pv label", kind: KindVolume, key: "pv-csi", valid: true, edit: func(o object) {
			o.(*v1.PersistentVolume).Labels = map[string]string{"tier": "fast"}
		}},
		{name: "pv bad label", kind: KindVolume, key: "pv-csi", edit: func(o object) {
			o.(*v1.PersistentVolume).Labels = map[string]string{"tier": "bad value!"}
		}},
		{name: "pvc volumeName and annotation", kind: KindClaim, key: "ns/c1", fast: true, valid: true,
			edit: func(o object) { volumeName(o.(*v1.PersistentVolumeClaim)) }},
		{name: "pvc volumeName and bad annotation key", kind: KindClaim, key: "ns/c1", edit: func(o object) {
			volumeName(o.(*v1.PersistentVolumeClaim))
			o.(*v1.PersistentVolumeClaim).Annotations["bad key!"] = "x"
		}},
		{name: "pvc beta class annotation", kind: KindClaim, key: "ns/c1", edit: func(o object) {
			metav1.SetMetaDataAnnotation(&o.(*v1.PersistentVolumeClaim).ObjectMeta, betaStorageClassAnnotation, "gold")
		}},
		{name: "pvc volumeName and bigger request", kind: KindClaim, key: "ns/c1", edit: func(o object) {
			volumeName(o.(*v1.PersistentVolumeClaim))
			o.(*v1.PersistentVolumeClaim).Spec.Resources.Requests[v1.ResourceStorage] = resource.MustParse("2Gi")
		}},
		{name: "pvc volumeName and class", kind: KindClaim, key: "ns/c1", edit: func(o object) {
			volumeName(o.(*v1.PersistentVolumeClaim))
			o.(*v1.PersistentVolumeClaim).Spec.StorageClassName = nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, name, err := toolscache.SplitMetaNamespaceKey(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			old, ok := s.objs[tc.kind].get(ns, name)
			if !ok {
				t.Fatalf("%s %s is not stored", tc.kind, tc.key)
			}
			in := deepCopy(old)
			tc.edit(in)
			next, _ := withMetaAndSpec(in, old, sharer{&s.intern})
			applyDefaults(next)
			keepSystemFields(next, old)

			full := validateUpdate(tc.kind, next, old, revalidateMeta)
			s.mu.RLock()
			_, unvalidated := s.unvalidated[old]
			s.mu.RUnlock()
			rule := metaRuleFor(next, old, unvalidated, &s.annotationKeys)
			fast := rule == metaValid && specStillValid(next, old)
			got := validateUpdate(tc.kind, next, old, rule)
			if fmt.Sprint(got) != fmt.Sprint(full) {
				t.Errorf("validateUpdate with rule %d = %v, full validation = %v", rule, got, full)
			}
			if (full == nil) != tc.valid {
				t.Errorf("full validation = %v, want valid %t", full, tc.valid)
			}
			if fast != tc.fast {
				t.Errorf("fast path taken = %t, want %t", fast, tc.fast)
			}
		})
	}
}

// TestAnnotationKeysRemembersValidKeysOnly checks the memo of annotation
// keys: an added invalid key is refused however often it is tried, a valid
// one is accepted and remembered, keys already in old are not checked
// again, the size limit still applies, and the memo stops growing at
// maxAnnotationKeys.
func TestAnnotationKeysRemembersValidKeysOnly(t *testing.T) {
	var keys annotationKeys
	old := map[string]string{"a": "1"}
	for range 2 {
		if keys.addedValid(map[string]string{"a": "1", "bad key!": "x"}, old) {
			t.Errorf("an added invalid key was accepted")
		}
		if !keys.addedValid(map[string]string{"a": "1", "example.com/good": "x"}, old) {
			t.Errorf("an added valid key was refused")
		}
	}
	if keys.n.Load() != 1 {
		t.Errorf("the memo holds %d keys, want 1 (the valid one)", keys.n.Load())
	}
	if keys.addedValid(map[string]string{"a": strings.Repeat("x", 256*1024)}, old) {
		t.Errorf("annotations over the size limit were accepted")
	}
	for i := range maxAnnotationKeys + 10 {
		if !keys.addedValid(map[string]string{fmt.Sprintf("k%d", i): ""}, nil) {
			t.Fatalf("valid key k%d refused", i)
		}
	}
	if got := keys.n.Load(); got != maxAnnotationKeys {
		t.Errorf("the memo holds %d keys, want at most %d", got, maxAnnotationKeys)
	}
}

// TestMetaRuleRemembersValidAnnotationMaps: metaRuleFor remembers an
// annotation map it accepted, and the same map is accepted again over any
// stored version without its keys being checked; a map with an invalid
// key is neither accepted nor remembered, and the memo stops growing at
// maxAnnotationKeys maps.
func TestMetaRuleRemembersValidAnnotationMaps(t *testing.T) {
	var keys annotationKeys
	old := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}}
	withAnnotations := func(m map[string]string) *v1.PersistentVolume {
		next := old.DeepCopy()
		next.Annotations = m
		return next
	}
	good := map[string]string{"example.com/bound": "yes"}
	if rule := metaRuleFor(withAnnotations(good), old, false, &keys); rule != metaValid || !keys.validMap(good) {
		t.Fatalf("a valid added annotation: rule %d, remembered %t; want metaValid, remembered", rule, keys.validMap(good))
	}
	// Forget the keys: checking them again would remember them again.
	keys.valid.Clear()
	keys.n.Store(0)
	otherOld := withAnnotations(map[string]string{"example.com/other": "x"})
	if rule := metaRuleFor(withAnnotations(good), otherOld, false, &keys); rule != metaValid {
		t.Errorf("a remembered map over another stored version: rule %d, want metaValid", rule)
	}
	if keys.n.Load() != 0 {
		t.Errorf("the remembered map's keys were checked again")
	}
	bad := map[string]string{"bad key!": "x"}
	if rule := metaRuleFor(withAnnotations(bad), old, false, &keys); rule != revalidateMeta || keys.validMap(bad) {
		t.Errorf("an invalid added key: rule %d, remembered %t; want revalidateMeta, not remembered", rule, keys.validMap(bad))
	}
	if rule := metaRuleFor(withAnnotations(good), old, true, &keys); rule != revalidateMeta {
		t.Errorf("over a version stored unvalidated: rule %d, want revalidateMeta", rule)
	}
	for i := range maxAnnotationKeys + 10 {
		metaRuleFor(withAnnotations(map[string]string{fmt.Sprintf("k%d", i): ""}), old, false, &keys)
	}
	if got := keys.nMaps.Load(); got != maxAnnotationKeys {
		t.Errorf("the memo holds %d maps, want at most %d", got, maxAnnotationKeys)
	}
}

// TestSameSpecCoversEveryField: the identity checks of the fast path see a
// change of every field of a volume's or claim's spec (but the claimRef,
// and volumeName, that they leave out), also of fields the API adds later,
// and see no change in a shallow copy.
func TestSameSpecCoversEveryField(t *testing.T) {
	t.Parallel()
	f := randfill.NewWithSeed(1).NilChance(0).NumElements(1, 2).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(1+c.Int63n(1000), resource.DecimalSI)
		})
	var pv v1.PersistentVolumeSpec
	var pvc v1.PersistentVolumeClaimSpec
	f.Fill(&pv)
	f.Fill(&pvc)
	for _, tc := range []struct {
		name   string
		spec   any // pointer to a filled spec
		same   func(n, o any) bool
		ignore string
	}{
		{"volume", &pv, func(n, o any) bool {
			return sameVolumeSpecButClaimRef(n.(*v1.PersistentVolumeSpec), o.(*v1.PersistentVolumeSpec))
		}, "ClaimRef"},
		{"claim", &pvc, func(n, o any) bool {
			return sameClaimSpecButVolumeName(n.(*v1.PersistentVolumeClaimSpec), o.(*v1.PersistentVolumeClaimSpec))
		}, "VolumeName"},
		{"claim resources", &pvc, func(n, o any) bool {
			return sameClaimSpecButVolumeName(n.(*v1.PersistentVolumeClaimSpec), o.(*v1.PersistentVolumeClaimSpec))
		}, "VolumeName"},
	} {
		o := reflect.ValueOf(tc.spec)
		if !tc.same(o.Interface(), o.Interface()) {
			t.Errorf("%s: a spec compared with itself: not the same", tc.name)
		}
		// The struct whose fields are replaced one by one: the spec, or
		// the claim's resources.
		fields := func(v reflect.Value) reflect.Value { return v.Elem() }
		if tc.name == "claim resources" {
			fields = func(v reflect.Value) reflect.Value { return v.Elem().FieldByName("Resources") }
		}
		for i := range fields(o).NumField() {
			n := reflect.New(o.Elem().Type())
			n.Elem().Set(o.Elem())
			field := fields(n).Field(i)
			name := fields(n).Type().Field(i).Name
			fresh := reflect.New(field.Type())
			f.Fill(fresh.Interface())
			field.Set(fresh.Elem())
			if got, want := tc.same(n.Interface(), o.Interface()), name == tc.ignore; got != want {
				t.Errorf("%s: the spec with a new %s: same = %v, want %v", tc.name, name, got, want)
			}
		}
	}
}
