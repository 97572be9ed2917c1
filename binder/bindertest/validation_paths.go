package bindertest

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Field paths of the checks every create or spec update of a volume or a
// claim makes, built once. A field.Path is never modified once built
// (Child, Index and Key return new ones, errors keep its string), so
// checks may share them. Built per check, they were 12 of the 29
// allocations of a volume's validation (BenchmarkValidate/kind=volume);
// paths of a failed check only are still built where it fails.
var (
	specPath             = field.NewPath("spec")
	specAccessModes      = specPath.Child("accessModes")
	specCapacity         = specPath.Child("capacity")
	specNodeAffinity     = specPath.Child("nodeAffinity")
	specStorageClassName = specPath.Child("storageClassName")
	specRequestedStorage = specPath.Child("resources").Key(string(v1.ResourceStorage))
	// sourcePaths[i] is the path of volumeSources[i].
	sourcePaths = func() (p [len(volumeSources)]*field.Path) {
		for i, src := range volumeSources {
			p[i] = specPath.Child(src.name)
		}
		return p
	}()
)
