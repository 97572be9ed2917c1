package chaos

import (
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/volbind/volbind/binder/bindertest"
)

// Objects is the cluster Run seeds: the same seed gives the same objects,
// and a Server accepts them.
func TestObjectsIsTheSeededCluster(t *testing.T) {
	c := CaseFor(42, DefaultClasses)
	a, b := Objects(c), Objects(c)
	if !apiequality.Semantic.DeepEqual(a, b) {
		t.Fatalf("Objects(%s) differs between calls", c)
	}
	if len(a) < 2*c.Objects {
		t.Fatalf("Objects(%s) = %d objects, want at least %d volumes and claims", c, len(a), 2*c.Objects)
	}
	if err := bindertest.New().Seed(t.Context(), a...); err != nil {
		t.Fatalf("Seed(Objects(%s)): %v", c, err)
	}
}
