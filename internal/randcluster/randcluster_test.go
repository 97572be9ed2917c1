package randcluster_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/internal/randcluster"
)

// Every generated object is one kube-apiserver accepts, so that clusters
// can be seeded into a bindertest.Server.
func TestObjectsAreValid(t *testing.T) {
	t.Parallel()
	for seed := range uint64(500) {
		c := randcluster.Generate(seed)
		for _, obj := range c.Objects() {
			if err := bindertest.Validate(obj); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		if err := bindertest.New().Seed(t.Context(), c.Objects()...); err != nil {
			t.Fatalf("seed %d: Seed: %v", seed, err)
		}
	}
}

// The same seed gives the same cluster.
func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(randcluster.Generate(7), randcluster.Generate(7)); diff != "" {
		t.Errorf("Generate(7) differs between calls (-first +second):\n%s", diff)
	}
}

// The clusters cover the states a differential test needs, over a few
// hundred seeds.
func TestGenerateCoversStates(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for seed := range uint64(300) {
		c := randcluster.Generate(seed)
		for _, pv := range c.Volumes {
			switch {
			case pv.DeletionTimestamp != nil:
				seen["deleting volume"] = true
			case pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == "":
				seen["pre-bound volume"] = true
			case pv.Status.Phase == v1.VolumeReleased:
				seen["released volume"] = true
			case pv.Status.Phase == v1.VolumePending:
				seen["unmarked volume"] = true
			}
			if pv.Spec.NodeAffinity != nil {
				seen["node affinity"] = true
			}
		}
		for _, pvc := range c.Claims {
			switch {
			case pvc.Spec.StorageClassName == nil:
				seen["claim without class"] = true
			case pvc.Annotations[volume.AnnSelectedNode] != "":
				seen["selected node"] = true
			case pvc.Spec.Selector != nil:
				seen["selector"] = true
			}
		}
		if len(c.Pods) > 0 {
			seen["pods"] = true
		}
	}
	for _, want := range []string{"deleting volume", "pre-bound volume", "released volume", "unmarked volume", "node affinity",
		"claim without class", "selected node", "selector", "pods"} {
		if !seen[want] {
			t.Errorf("no cluster has a %s", want)
		}
	}
}
