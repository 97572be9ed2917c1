package schedgen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// TestGenerateIsDeterministic: a seed names one cluster.
func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		a, b := Generate(seed), Generate(seed)
		if d := cmp.Diff(a.AllObjects(), b.AllObjects()); d != "" {
			t.Fatalf("Generate(%d) twice (-first +second):\n%s", seed, d)
		}
	}
}

// TestGenerateCovers: over 300 seeds the generator draws every feature
// the differential tests rely on.
func TestGenerateCovers(t *testing.T) {
	t.Parallel()
	seen := map[string]int{}
	for seed := range uint64(300) {
		c := Generate(seed)
		for _, o := range c.Objects {
			switch o := o.(type) {
			case *storagev1.CSINode:
				if o.Annotations[v1.MigratedPluginsAnnotationKey] != "" {
					seen["CSINode with migrated plugins"]++
				}
			case *storagev1.StorageClass:
				if len(o.Parameters) > 0 {
					seen["class with zone parameters"]++
				}
			case *storagev1.CSIStorageCapacity:
				seen["CSIStorageCapacity"]++
			case *v1.PersistentVolume:
				bound := o.Spec.ClaimRef != nil && o.Status.Phase == v1.VolumeBound
				_, labelled := o.Labels[v1.LabelTopologyZone]
				_, beta := o.Labels[v1.LabelFailureDomainBetaZone]
				switch {
				case bound && (labelled || beta) && o.Spec.NodeAffinity != nil:
					seen["bound volume with zone labels and affinity"]++
				case bound && (labelled || beta):
					seen["bound volume with zone labels only"]++
				}
				if bound && (o.Spec.AWSElasticBlockStore != nil || o.Spec.GCEPersistentDisk != nil) {
					seen["bound in-tree volume"]++
				}
			case *v1.PersistentVolumeClaim:
				switch {
				case o.Status.Phase == v1.ClaimLost:
					seen["Lost claim"]++
				case len(o.OwnerReferences) > 0:
					seen["ephemeral claim"]++
				}
			}
		}
	}
	for _, want := range []string{"CSINode with migrated plugins", "class with zone parameters", "CSIStorageCapacity",
		"bound volume with zone labels and affinity", "bound volume with zone labels only", "bound in-tree volume",
		"Lost claim", "ephemeral claim"} {
		if seen[want] == 0 {
			t.Errorf("no %s in 300 clusters: %v", want, seen)
		}
	}
}
