package chaos

import (
	"math/rand/v2"

	"k8s.io/apimachinery/pkg/runtime"
)

// Objects returns the StorageClasses, volumes and claims that Run seeds
// for c, before any fault, churn or Binder: the chaos suite's random
// cluster, for other randomized tests (internal/explain's differential
// test explains them and compares with what a Binder does). The objects
// are new on every call.
func Objects(c Case) []runtime.Object {
	r := &run{c: c, rng: rand.New(rand.NewPCG(uint64(c.Seed), 0x5eed))}
	// As Run draws them, in the same order from the same source.
	r.defaultClass = r.pickDefaultClass()
	vols, claims := cluster(r.rng, c.Objects, r.newClaim, r.staticClass, r.policy)
	objs := classesWithDefault(r.defaultClass)
	for _, pv := range vols {
		objs = append(objs, pv)
	}
	for _, pvc := range claims {
		objs = append(objs, pvc)
	}
	return objs
}
