package bindertest_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// causes returns the "field type" causes of an Invalid error.
func causes(t *testing.T, err error) []string {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error %v, want Invalid", err)
	}
	var out []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		out = append(out, c.Field+" "+string(c.Type))
	}
	return out
}

// TestRejectedWritesChangeNothing: a create, seed or update that
// validation rejects stores nothing and sends no event.
func TestRejectedWritesChangeNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newServer(t)
	pv := mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	rv := s.ResourceVersion()
	events := 0
	defer s.AddEventHandler(bindertest.KindVolume, eventCounter(&events))()
	events = 0 // the replay of pv1

	bad := newVolume("pv2", "0")
	if _, err := s.CreateVolume(ctx, bad); !apierrors.IsInvalid(err) {
		t.Errorf("CreateVolume(capacity 0) = %v, want Invalid", err)
	}
	if err := s.Seed(ctx, newVolume("pv3", "1Gi"), bad); !apierrors.IsInvalid(err) {
		t.Errorf("Seed(valid, capacity 0) = %v, want Invalid", err)
	}
	changed := pv.DeepCopy()
	changed.Spec.HostPath.Path = "/elsewhere"
	if _, err := s.UpdateVolume(ctx, changed); !apierrors.IsInvalid(err) {
		t.Errorf("UpdateVolume(new source) = %v, want Invalid", err)
	}
	if got := s.ResourceVersion(); got != rv || len(s.Volumes()) != 1 || events != 0 {
		t.Errorf("after rejected writes: resourceVersion %s (want %s), %d volumes (want 1), %d events (want 0)", got, rv, len(s.Volumes()), events)
	}
	stored, _ := s.GetVolume(ctx, "pv1")
	if diff := cmp.Diff(pv, stored); diff != "" {
		t.Errorf("stored volume changed (-before +after):\n%s", diff)
	}
}

func eventCounter(n *int) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { *n++ },
		UpdateFunc: func(any, any) { *n++ },
		DeleteFunc: func(any) { *n++ },
	}
}

// TestValidateLeavesObjectAlone: Validate applies the defaults to a copy
// and reports the same causes as Create.
func TestValidateLeavesObjectAlone(t *testing.T) {
	t.Parallel()
	pvc := newClaim("ns", "c1", "1Gi")
	pvc.Spec.AccessModes = nil
	delete(pvc.Spec.Resources.Requests, v1.ResourceStorage)
	before := pvc.DeepCopy()
	err := bindertest.Validate(pvc)
	want := []string{"spec.accessModes FieldValueRequired", "spec.resources[storage] FieldValueRequired"}
	if diff := cmp.Diff(want, causes(t, err)); diff != "" {
		t.Errorf("Validate causes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, pvc); diff != "" {
		t.Errorf("Validate modified its argument (-before +after):\n%s", diff)
	}
	s, _ := newServer(t)
	_, createErr := s.CreateClaim(context.Background(), pvc)
	if diff := cmp.Diff(want, causes(t, createErr)); diff != "" {
		t.Errorf("CreateClaim causes (-want +got):\n%s", diff)
	}
}

// TestSeedInvalidStoresAsIs: SeedInvalid stores an object Validate
// rejects; a status update of it is accepted (status updates do not
// validate the spec), a spec update is validated.
func TestSeedInvalidStoresAsIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newServer(t)
	pv := newVolume("pv1", "1Gi")
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{}
	if err := s.SeedInvalid(ctx, pv); err != nil {
		t.Fatalf("SeedInvalid: %v", err)
	}
	got, err := s.GetVolume(ctx, "pv1")
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Phase = v1.VolumeAvailable
	if got, err = s.UpdateVolumeStatus(ctx, got); err != nil {
		t.Errorf("UpdateVolumeStatus of an invalid volume: %v", err)
	}
	got.Spec.Capacity[v1.ResourceStorage] = resource.MustParse("2Gi")
	if _, err := s.UpdateVolume(ctx, got); !apierrors.IsInvalid(err) {
		t.Errorf("UpdateVolume of an invalid volume = %v, want Invalid", err)
	}
}

// TestUpdateMetadataValidation: an update whose metadata is unchanged skips
// its validation only when the stored version was validated; the metadata
// of an object stored by SeedInvalid is validated on every update, as
// kube-apiserver validates the metadata of every update, and a change of
// the metadata is always validated.
func TestUpdateMetadataValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newServer(t)
	bad := newVolume("pv-bad-meta", "1Gi")
	bad.Annotations = map[string]string{"bad key!": "x"}
	if err := s.SeedInvalid(ctx, bad); err != nil {
		t.Fatalf("SeedInvalid: %v", err)
	}
	got, err := s.GetVolume(ctx, bad.Name)
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Phase = v1.VolumeAvailable
	if _, err := s.UpdateVolumeStatus(ctx, got); !apierrors.IsInvalid(err) {
		t.Errorf("UpdateVolumeStatus of a volume with an invalid annotation key = %v, want Invalid", err)
	}

	good := mustCreateVolume(t, s, newVolume("pv-good", "1Gi"))
	good.Status.Phase = v1.VolumeAvailable
	if good, err = s.UpdateVolumeStatus(ctx, good); err != nil {
		t.Fatalf("UpdateVolumeStatus of a valid volume: %v", err)
	}
	good.Annotations = map[string]string{"bad key!": "x"}
	if _, err := s.UpdateVolume(ctx, good); !apierrors.IsInvalid(err) {
		t.Errorf("UpdateVolume adding an invalid annotation key = %v, want Invalid", err)
	}
}

// TestSeedInvalidMarkOutlivesStatusWrites: a version that keeps the
// metadata and spec of an object stored by SeedInvalid (a status update's,
// a deletion's) is validated as that object is: the metadata on every
// update, the spec on every spec update.
func TestSeedInvalidMarkOutlivesStatusWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newServer(t)

	badMeta := newVolume("pv-bad-meta", "1Gi")
	badMeta.Annotations = map[string]string{"bad key!": "x"}
	badMeta.Finalizers = []string{"example.com/keep"}
	badSpec := newVolume("pv-bad-spec", "1Gi")
	badSpec.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{}
	if err := s.SeedInvalid(ctx, badMeta, badSpec); err != nil {
		t.Fatalf("SeedInvalid: %v", err)
	}

	if err := s.DeleteVolume(ctx, badMeta.Name); err != nil {
		t.Fatalf("DeleteVolume(%s): %v", badMeta.Name, err)
	}
	got, err := s.GetVolume(ctx, badMeta.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.DeletionTimestamp == nil {
		t.Fatalf("DeleteVolume(%s) did not mark it for deletion", badMeta.Name)
	}
	got.Status.Phase = v1.VolumeReleased
	_, err = s.UpdateVolumeStatus(ctx, got)
	// The create and the update rules of the metadata both report it, as
	// kube-apiserver's do.
	if diff := cmp.Diff([]string{"metadata.annotations FieldValueInvalid"}, slices.Compact(causes(t, err))); diff != "" {
		t.Errorf("UpdateVolumeStatus of a deleted volume with an invalid annotation key: causes (-want +got):\n%s", diff)
	}

	got, err = s.GetVolume(ctx, badSpec.Name)
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Phase = v1.VolumeAvailable
	if got, err = s.UpdateVolumeStatus(ctx, got); err != nil {
		t.Fatalf("UpdateVolumeStatus of a volume without a source: %v", err)
	}
	got.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "c1"}
	_, err = s.UpdateVolume(ctx, got)
	if diff := cmp.Diff([]string{"spec FieldValueRequired"}, causes(t, err)); diff != "" {
		t.Errorf("UpdateVolume(claimRef) of a volume without a source: causes (-want +got):\n%s", diff)
	}
}

// TestClaimStatusQuantities: a claim status update with a quantity that is
// negative, or negative below one unit, fails with kube-apiserver's causes
// and field paths; a valid one passes.
func TestClaimStatusQuantities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		capacity  string // "" for none
		allocated string
		want      []string // nil: accepted
	}{
		{name: "valid", capacity: "1Gi", allocated: "1Gi"},
		{name: "negative capacity", capacity: "-1Gi", want: []string{"status.capacity[storage] FieldValueInvalid"}},
		{name: "negative allocated", allocated: "-1Gi", want: []string{"status.allocatedResources[storage] FieldValueInvalid"}},
		{name: "allocated below zero by a fraction", allocated: "-500m", want: []string{"status.allocatedResources[storage] FieldValueInvalid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			pvc := mustCreateClaim(t, s, newClaim("ns", "c", "1Gi"))
			if tc.capacity != "" {
				pvc.Status.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse(tc.capacity)}
			}
			if tc.allocated != "" {
				pvc.Status.AllocatedResources = v1.ResourceList{v1.ResourceStorage: resource.MustParse(tc.allocated)}
			}
			_, err := s.UpdateClaimStatus(ctx, pvc)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("UpdateClaimStatus = %v, want nil", err)
				}
				return
			}
			if diff := cmp.Diff(tc.want, causes(t, err)); diff != "" {
				t.Errorf("UpdateClaimStatus causes (-want +got):\n%s", diff)
			}
		})
	}
}
