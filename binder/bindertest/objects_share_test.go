package bindertest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/randfill"

	"github.com/volbind/volbind/internal/dedup"
)

// TestUpdateSharesOnlyStoredSubstructures checks withMetaAndSpec and
// withStatus on volumes and claims whose every field is set: the new
// version equals the caller's metadata and spec (or status), shares every
// substructure the caller took from the stored version, and shares nothing
// that is the caller's own (the Server never retains its argument). Each
// round replaces a random half of the caller's fields (and of a volume's
// source's) with its own.
func TestUpdateSharesOnlyStoredSubstructures(t *testing.T) {
	f := randfill.NewWithSeed(1).NilChance(0).NumElements(1, 2).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		})
	rng := rand.New(rand.NewPCG(1, 2))
	sh := sharer{&dedup.Table{}}
	var shared int
	for round := range 400 {
		var oldObj, inObj object
		status := round%4 >= 2
		if round%2 == 0 {
			old := &v1.PersistentVolume{}
			f.Fill(old)
			in := *old
			replaceSome(f, rng, &in.ObjectMeta, &in.Spec, &in.Spec.PersistentVolumeSource, &in.Status)
			oldObj, inObj = old, &in
		} else {
			old := &v1.PersistentVolumeClaim{}
			f.Fill(old)
			in := *old
			replaceSome(f, rng, &in.ObjectMeta, &in.Spec, &in.Spec.Resources, &in.Status)
			oldObj, inObj = old, &in
		}
		var next object
		if status {
			next, _ = withStatus(oldObj, inObj, sh)
		} else {
			next, _ = withMetaAndSpec(inObj, oldObj, sh)
		}
		if !apiequality.Semantic.DeepEqual(parts(next, status), parts(inObj, status)) {
			t.Fatalf("round %d (status %v): the new version differs from the caller's:\n%s", round, status, cmp.Diff(parts(inObj, status), parts(next, status)))
		}
		inRefs, oldRefs := refsOf(inObj, status), refsOf(oldObj, status)
		for ref, path := range refsOf(next, status) {
			switch {
			case oldRefs[ref] != "":
				shared++
			case inRefs[ref] != "":
				t.Errorf("round %d: the new version's %s is the caller's own %s", round, path, inRefs[ref])
			}
		}
	}
	if shared == 0 {
		t.Errorf("the new versions shared nothing with the stored ones")
	}
}

// replaceSome sets a random half of the fields of each struct (pointers
// to structs) to new random values.
func replaceSome(f *randfill.Filler, rng *rand.Rand, structs ...any) {
	for _, s := range structs {
		v := reflect.ValueOf(s).Elem()
		for i := range v.NumField() {
			if rng.IntN(2) == 0 {
				fresh := reflect.New(v.Field(i).Type())
				f.Fill(fresh.Interface())
				v.Field(i).Set(fresh.Elem())
			}
		}
	}
}

// parts returns an object's metadata and spec, or its status.
func parts(o object, status bool) []any {
	switch t := o.(type) {
	case *v1.PersistentVolume:
		if status {
			return []any{t.Status}
		}
		return []any{t.ObjectMeta, t.Spec}
	case *v1.PersistentVolumeClaim:
		if status {
			return []any{t.Status}
		}
		return []any{t.ObjectMeta, t.Spec}
	}
	panic("parts: unexpected kind")
}

// refsOf returns the maps, slice arrays and pointers reachable from o's
// metadata and spec (or status), with the path of each.
func refsOf(o object, status bool) map[uintptr]string {
	refs := map[uintptr]string{}
	for i, p := range parts(o, status) {
		walkRefs(reflect.ValueOf(p), fmt.Sprint("part", i), refs)
	}
	return refs
}

func walkRefs(v reflect.Value, path string, refs map[uintptr]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			refs[v.Pointer()] = path
			walkRefs(v.Elem(), path, refs)
		}
	case reflect.Map:
		if !v.IsNil() {
			refs[v.Pointer()] = path
			for it := v.MapRange(); it.Next(); {
				walkRefs(it.Value(), path+"["+it.Key().String()+"]", refs)
			}
		}
	case reflect.Slice:
		if v.Len() > 0 {
			refs[v.Pointer()] = path
			for i := range v.Len() {
				walkRefs(v.Index(i), path+"[i]", refs)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkRefs(v.Field(i), path+"."+v.Type().Field(i).Name, refs)
			}
		}
	}
}
