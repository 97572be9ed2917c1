package bindertest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/volbind/volbind/binder/bindertest"
)

func TestResourceVersionIncreases(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	pv := mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	claim := mustCreateClaim(t, s, newClaim("ns", "c1", "1Gi"))

	steps := []struct {
		name string
		// write returns the resourceVersion it produced.
		write  func(t *testing.T) metav1.Object
		bumped bool
	}{
		{"create", func(t *testing.T) metav1.Object { return mustCreateVolume(t, s, newVolume("pv2", "2Gi")) }, true},
		{"update", func(t *testing.T) metav1.Object {
			pv.Labels = map[string]string{"a": "b"}
			got, err := s.UpdateVolume(ctx, pv)
			if err != nil {
				t.Fatalf("UpdateVolume = %v", err)
			}
			pv = got
			return got
		}, true},
		{"no-op update", func(t *testing.T) metav1.Object {
			got, err := s.UpdateVolume(ctx, pv)
			if err != nil {
				t.Fatalf("UpdateVolume = %v", err)
			}
			return got
		}, false},
		{"semantically equal update", func(t *testing.T) metav1.Object {
			same := pv.DeepCopy()
			same.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1024Mi")} // = 1Gi
			same.Spec.MountOptions = []string{}                                                    // = nil
			got, err := s.UpdateVolume(ctx, same)
			if err != nil {
				t.Fatalf("UpdateVolume = %v", err)
			}
			return got
		}, false},
		{"status update", func(t *testing.T) metav1.Object {
			pv.Status.Phase = v1.VolumeAvailable
			got, err := s.UpdateVolumeStatus(ctx, pv)
			if err != nil {
				t.Fatalf("UpdateVolumeStatus = %v", err)
			}
			pv = got
			return got
		}, true},
		{"no-op status update", func(t *testing.T) metav1.Object {
			got, err := s.UpdateVolumeStatus(ctx, pv)
			if err != nil {
				t.Fatalf("UpdateVolumeStatus = %v", err)
			}
			return got
		}, false},
		{"claim update", func(t *testing.T) metav1.Object {
			claim.Spec.VolumeName = "pv1"
			got, err := s.UpdateClaim(ctx, claim)
			if err != nil {
				t.Fatalf("UpdateClaim = %v", err)
			}
			return got
		}, true},
	}
	last := rvOf(t, pv)
	if c := rvOf(t, claim); c <= last {
		t.Fatalf("claim created after volume has resourceVersion %d <= %d", c, last)
	}
	last = rvOf(t, claim)
	for _, st := range steps {
		got := rvOf(t, st.write(t))
		cur := mustParseRV(t, s.ResourceVersion())
		switch {
		case st.bumped && (got != last+1 || cur != got):
			t.Errorf("%s: resourceVersion = %d (server %d), want %d", st.name, got, cur, last+1)
		case !st.bumped && cur != last:
			t.Errorf("%s: server resourceVersion = %d, want unchanged %d", st.name, cur, last)
		}
		last = cur
	}
}

func mustParseRV(t *testing.T, rv string) uint64 {
	t.Helper()
	return rvOf(t, &metav1.ObjectMeta{ResourceVersion: rv})
}

func TestUpdateConflict(t *testing.T) {
	ctx := context.Background()
	wantMsg := `Operation cannot be fulfilled on persistentvolumes "pv1": the object has been modified; please apply your changes to the latest version and try again`
	tests := []struct {
		name  string
		write func(s *bindertest.Server, stale *v1.PersistentVolume) error
	}{
		{"update", func(s *bindertest.Server, stale *v1.PersistentVolume) error {
			stale.Labels = map[string]string{"x": "y"}
			_, err := s.UpdateVolume(ctx, stale)
			return err
		}},
		{"status update", func(s *bindertest.Server, stale *v1.PersistentVolume) error {
			stale.Status.Phase = v1.VolumeReleased
			_, err := s.UpdateVolumeStatus(ctx, stale)
			return err
		}},
		{"generic update", func(s *bindertest.Server, stale *v1.PersistentVolume) error {
			stale.Labels = map[string]string{"x": "y"}
			_, err := s.Update(ctx, stale)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			stale := mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
			fresh := stale.DeepCopy()
			fresh.Annotations = map[string]string{"fresh": "1"}
			if _, err := s.UpdateVolume(ctx, fresh); err != nil {
				t.Fatalf("UpdateVolume = %v", err)
			}
			s.ResetStats()
			err := tc.write(s, stale)
			if !apierrors.IsConflict(err) {
				t.Fatalf("write with stale resourceVersion = %v, want Conflict", err)
			}
			if err.Error() != wantMsg {
				t.Errorf("error = %q, want %q", err.Error(), wantMsg)
			}
			if got := s.Stats().Conflicts; got != 1 {
				t.Errorf("Stats().Conflicts = %d, want 1", got)
			}
			got, err := s.GetVolume(ctx, "pv1")
			if err != nil {
				t.Fatalf("GetVolume = %v", err)
			}
			if got.Labels["x"] != "" || got.Status.Phase != v1.VolumePending {
				t.Errorf("conflicting write changed the volume: labels %v, phase %s", got.Labels, got.Status.Phase)
			}
		})
	}
}

func TestUnconditionalUpdate(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	pv := newVolume("pv1", "1Gi") // no resourceVersion, no uid
	pv.Labels = map[string]string{"a": "b"}
	got, err := s.UpdateVolume(ctx, pv)
	if err != nil {
		t.Fatalf("UpdateVolume without resourceVersion = %v, want success", err)
	}
	if got.Labels["a"] != "b" || got.UID == "" {
		t.Errorf("UpdateVolume = labels %v uid %q, want the label and the stored uid", got.Labels, got.UID)
	}
}

func TestStatusSubresource(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// change modifies spec, metadata and status of the volume sent.
		status    bool
		wantPhase v1.PersistentVolumePhase
		wantLabel string
		wantClaim bool
	}{
		{name: "update ignores status", status: false, wantPhase: v1.VolumePending, wantLabel: "new", wantClaim: true},
		{name: "status update ignores spec and metadata", status: true, wantPhase: v1.VolumeBound, wantLabel: "", wantClaim: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			pv := mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
			pv.Labels = map[string]string{"l": "new"}
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "c1"}
			pv.Status.Phase = v1.VolumeBound
			var (
				got *v1.PersistentVolume
				err error
			)
			if tc.status {
				got, err = s.UpdateVolumeStatus(ctx, pv)
			} else {
				got, err = s.UpdateVolume(ctx, pv)
			}
			if err != nil {
				t.Fatalf("write = %v", err)
			}
			stored, err := s.GetVolume(ctx, "pv1")
			if err != nil {
				t.Fatalf("GetVolume = %v", err)
			}
			if diff := cmp.Diff(stored, got); diff != "" {
				t.Errorf("returned object differs from the stored one (-stored +returned):\n%s", diff)
			}
			if stored.Status.Phase != tc.wantPhase || stored.Labels["l"] != tc.wantLabel || (stored.Spec.ClaimRef != nil) != tc.wantClaim {
				t.Errorf("stored phase %s, label %q, claimRef %v; want %s, %q, set=%v",
					stored.Status.Phase, stored.Labels["l"], stored.Spec.ClaimRef, tc.wantPhase, tc.wantLabel, tc.wantClaim)
			}
		})
	}
}

func TestStatusUpdateStampsPhaseTransition(t *testing.T) {
	ctx := context.Background()
	s, fc := newServer(t)
	pv := mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	if pv.Status.LastPhaseTransitionTime == nil || !pv.Status.LastPhaseTransitionTime.Time.Equal(t0) {
		t.Fatalf("created lastPhaseTransitionTime = %v, want %v", pv.Status.LastPhaseTransitionTime, t0)
	}
	fc.Step(90e9)
	pv.Status.Phase = v1.VolumeAvailable
	got, err := s.UpdateVolumeStatus(ctx, pv)
	if err != nil {
		t.Fatalf("UpdateVolumeStatus = %v", err)
	}
	if want := t0.Add(90e9); !got.Status.LastPhaseTransitionTime.Time.Equal(want) {
		t.Errorf("lastPhaseTransitionTime = %v, want %v", got.Status.LastPhaseTransitionTime, want)
	}
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	in := newClaim("ns", "", "1Gi")
	in.GenerateName = "data-"
	in.Status.Phase = v1.ClaimBound // dropped on create
	in.UID = "client-uid"           // replaced on create
	got, err := s.CreateClaim(ctx, in)
	if err != nil {
		t.Fatalf("CreateClaim = %v", err)
	}
	if len(got.Name) != len("data-")+5 || got.Name[:5] != "data-" {
		t.Errorf("generated name = %q, want data- and 5 characters", got.Name)
	}
	if got.UID == "" || got.UID == "client-uid" {
		t.Errorf("uid = %q, want a new uid", got.UID)
	}
	if !got.CreationTimestamp.Time.Equal(t0) {
		t.Errorf("creationTimestamp = %v, want %v", got.CreationTimestamp, t0)
	}
	if got.ResourceVersion == "" || got.Status.Phase != v1.ClaimPending {
		t.Errorf("resourceVersion %q phase %s, want set and Pending", got.ResourceVersion, got.Status.Phase)
	}
	if got.Spec.VolumeMode == nil || *got.Spec.VolumeMode != v1.PersistentVolumeFilesystem {
		t.Errorf("volumeMode = %v, want the default Filesystem", got.Spec.VolumeMode)
	}
	if in.Name != "" || in.ResourceVersion != "" {
		t.Errorf("CreateClaim modified its argument: name %q resourceVersion %q", in.Name, in.ResourceVersion)
	}
	got.Labels = map[string]string{"mutated": "yes"}
	again, err := s.GetClaim(ctx, "ns", got.Name)
	if err != nil {
		t.Fatalf("GetClaim = %v", err)
	}
	if again.Labels["mutated"] != "" {
		t.Errorf("mutating a returned object changed the stored one")
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		call func(s *bindertest.Server) error
		is   func(error) bool
	}{
		{"create taken name", func(s *bindertest.Server) error {
			_, err := s.CreateVolume(ctx, newVolume("pv1", "1Gi"))
			return err
		}, apierrors.IsAlreadyExists},
		{"get missing", func(s *bindertest.Server) error { _, err := s.GetVolume(ctx, "nope"); return err }, apierrors.IsNotFound},
		{"get missing claim", func(s *bindertest.Server) error { _, err := s.GetClaim(ctx, "ns", "nope"); return err }, apierrors.IsNotFound},
		{"update missing", func(s *bindertest.Server) error {
			_, err := s.UpdateVolume(ctx, newVolume("nope", "1Gi"))
			return err
		}, apierrors.IsNotFound},
		{"status update missing", func(s *bindertest.Server) error {
			_, err := s.UpdateClaimStatus(ctx, newClaim("ns", "nope", "1Gi"))
			return err
		}, apierrors.IsNotFound},
		{"delete missing", func(s *bindertest.Server) error { return s.DeleteClaim(ctx, "ns", "nope") }, apierrors.IsNotFound},
		{"nil volume", func(s *bindertest.Server) error { _, err := s.CreateVolume(ctx, nil); return err }, apierrors.IsBadRequest},
		{"unsupported type", func(s *bindertest.Server) error { _, err := s.Create(ctx, &v1.Secret{}); return err }, apierrors.IsBadRequest},
		{"no name", func(s *bindertest.Server) error {
			_, err := s.CreateVolume(ctx, newVolume("", "1Gi"))
			return err
		}, apierrors.IsInvalid},
		{"claim without namespace", func(s *bindertest.Server) error {
			_, err := s.CreateClaim(ctx, newClaim("", "c", "1Gi"))
			return err
		}, apierrors.IsInvalid},
		{"immutable volume source", func(s *bindertest.Server) error {
			pv, _ := s.GetVolume(ctx, "pv1")
			pv.Spec.HostPath.Path = "/elsewhere"
			_, err := s.UpdateVolume(ctx, pv)
			return err
		}, apierrors.IsInvalid},
		{"immutable claim spec", func(s *bindertest.Server) error {
			c, _ := s.GetClaim(ctx, "ns", "c1")
			c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
			_, err := s.UpdateClaim(ctx, c)
			return err
		}, apierrors.IsInvalid},
		{"class has no status", func(s *bindertest.Server) error {
			_, err := s.UpdateStatus(ctx, newClass("gold"))
			return err
		}, apierrors.IsMethodNotSupported},
		// kube-apiserver's storage layer answers a version that does not
		// parse with an error its registry does not convert: a 500 of no
		// reason (e2e TestValidationMatchesKubeAPIServer).
		{"invalid resourceVersion", func(s *bindertest.Server) error {
			pv := newVolume("pv1", "1Gi")
			pv.ResourceVersion = "abc"
			_, err := s.UpdateVolume(ctx, pv)
			return err
		}, func(err error) bool {
			var st apierrors.APIStatus
			return errors.As(err, &st) && st.Status().Code == 500 && st.Status().Reason == metav1.StatusReasonUnknown
		}},
		// It looks the object up first (e2e TestUpdateOfMissingMatchesKubeAPIServer).
		{"invalid resourceVersion of a missing volume", func(s *bindertest.Server) error {
			pv := newVolume("nope", "1Gi")
			pv.ResourceVersion = "abc"
			_, err := s.UpdateVolume(ctx, pv)
			return err
		}, apierrors.IsNotFound},
		{"stale resourceVersion", func(s *bindertest.Server) error {
			pv, _ := s.GetVolume(ctx, "pv1")
			pv.ResourceVersion = "1" + pv.ResourceVersion
			_, err := s.UpdateVolume(ctx, pv)
			return err
		}, apierrors.IsConflict},
		{"done context", func(s *bindertest.Server) error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := s.GetVolume(cctx, "pv1")
			return err
		}, func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			if err := s.Seed(ctx, newVolume("pv1", "1Gi"), newClaim("ns", "c1", "1Gi"), newClass("gold")); err != nil {
				t.Fatalf("Seed = %v", err)
			}
			if err := tc.call(s); !tc.is(err) {
				t.Errorf("error = %v (%T), want the other kind", err, err)
			}
		})
	}
}

// TestUpdateResourceVersionIsANumber checks that an update's
// resourceVersion is compared as the number kube-apiserver parses, not as
// a string: leading zeros name the same version.
func TestUpdateResourceVersionIsANumber(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	pv := mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	pv.ResourceVersion = "00" + pv.ResourceVersion
	pv.Labels = map[string]string{"k": "v"}
	if _, err := s.UpdateVolume(ctx, pv); err != nil {
		t.Fatalf("update with the stored version written %q = %v, want success", pv.ResourceVersion, err)
	}
}

func TestClaimVolumeNameSetOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	c := mustCreateClaim(t, s, newClaim("ns", "c1", "1Gi"))
	c.Spec.VolumeName = "pv1"
	c, err := s.UpdateClaim(ctx, c)
	if err != nil {
		t.Fatalf("set volumeName = %v, want success", err)
	}
	c.Spec.VolumeName = "pv2"
	if _, err := s.UpdateClaim(ctx, c); !apierrors.IsInvalid(err) {
		t.Errorf("change volumeName = %v, want Invalid", err)
	}
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		finalizers []string
		// wantMarked: the first delete only sets deletionTimestamp.
		wantMarked bool
	}{
		{name: "without finalizers", wantMarked: false},
		{name: "with finalizers", finalizers: []string{"kubernetes.io/pv-protection"}, wantMarked: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, fc := newServer(t)
			pv := newVolume("pv1", "1Gi")
			pv.Finalizers = tc.finalizers
			created := mustCreateVolume(t, s, pv)
			fc.Step(5e9)
			if err := s.DeleteVolume(ctx, "pv1"); err != nil {
				t.Fatalf("DeleteVolume = %v", err)
			}
			got, err := s.GetVolume(ctx, "pv1")
			if !tc.wantMarked {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("GetVolume after delete = %v, want NotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("GetVolume after delete = %v, want the volume being deleted", err)
			}
			if got.DeletionTimestamp == nil || !got.DeletionTimestamp.Time.Equal(t0.Add(5e9)) {
				t.Errorf("deletionTimestamp = %v, want %v", got.DeletionTimestamp, t0.Add(5e9))
			}
			if rvOf(t, got) <= rvOf(t, created) {
				t.Errorf("resourceVersion after delete = %s, want > %s", got.ResourceVersion, created.ResourceVersion)
			}
			// A second delete changes nothing.
			if err := s.DeleteVolume(ctx, "pv1"); err != nil {
				t.Fatalf("second DeleteVolume = %v", err)
			}
			// New finalizers are forbidden while deleting.
			add := got.DeepCopy()
			add.Finalizers = append(add.Finalizers, "example.com/other")
			if _, err := s.UpdateVolume(ctx, add); !apierrors.IsInvalid(err) {
				t.Errorf("adding a finalizer while deleting = %v, want Invalid", err)
			}
			// Removing the last finalizer completes the deletion.
			got.Finalizers = nil
			if _, err := s.UpdateVolume(ctx, got); err != nil {
				t.Fatalf("remove finalizers = %v", err)
			}
			if _, err := s.GetVolume(ctx, "pv1"); !apierrors.IsNotFound(err) {
				t.Errorf("GetVolume after the last finalizer went = %v, want NotFound", err)
			}
		})
	}
}

func TestSeedAndList(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	bound := newVolume("pv-b", "1Gi")
	bound.Status.Phase = v1.VolumeBound
	bound.UID = "pv-b-uid"
	objs := []runtime.Object{newClaim("ns", "c2", "1Gi"), newClaim("ns", "c1", "1Gi"), bound, newVolume("pv-a", "2Gi"), newClass("gold")}
	if err := s.Seed(ctx, objs...); err != nil {
		t.Fatalf("Seed = %v", err)
	}
	vols := s.Volumes()
	if len(vols) != 2 || vols[0].Name != "pv-a" || vols[1].Name != "pv-b" {
		t.Fatalf("Volumes() = %v, want pv-a, pv-b", names(vols))
	}
	if vols[1].Status.Phase != v1.VolumeBound || vols[1].UID != "pv-b-uid" {
		t.Errorf("seeded volume phase %s uid %q, want Bound and the seeded uid", vols[1].Status.Phase, vols[1].UID)
	}
	if claims := s.Claims(); len(claims) != 2 || claims[0].Name != "c1" {
		t.Errorf("Claims() = %v, want c1, c2", names(claims))
	}
	if got := len(s.List(bindertest.KindStorageClass)); got != 1 {
		t.Errorf("List(StorageClass) has %d objects, want 1", got)
	}
	if got := len(s.Objects()); got != 5 {
		t.Errorf("Objects() has %d objects, want 5", got)
	}
	sc := s.List(bindertest.KindStorageClass)[0].(*storagev1.StorageClass)
	if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		t.Errorf("seeded class volumeBindingMode = %v, want the default Immediate", sc.VolumeBindingMode)
	}
	if st := s.Stats(); st.TotalWrites() != 0 {
		t.Errorf("Seed counted %d writes, want 0", st.TotalWrites())
	}
	// All or nothing: a taken name fails the whole seed.
	if err := s.Seed(ctx, newVolume("pv-new", "1Gi"), newVolume("pv-a", "1Gi")); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("Seed with a taken name = %v, want AlreadyExists", err)
	}
	if _, err := s.GetVolume(ctx, "pv-new"); !apierrors.IsNotFound(err) {
		t.Errorf("failed Seed stored pv-new: GetVolume = %v", err)
	}
	if err := s.Seed(ctx, newVolume("dup", "1Gi"), newVolume("dup", "1Gi")); !apierrors.IsAlreadyExists(err) {
		t.Errorf("Seed with a duplicate = %v, want AlreadyExists", err)
	}
	// The error names the first object of the seed that is taken, whether
	// stored already or named earlier in the seed.
	for _, tc := range []struct {
		seed []string
		want string
	}{
		{[]string{"x", "pv-a", "x"}, "pv-a"},
		{[]string{"x", "x", "pv-a"}, "x"},
	} {
		var objs []runtime.Object
		for _, name := range tc.seed {
			objs = append(objs, newVolume(name, "1Gi"))
		}
		err := s.Seed(ctx, objs...)
		var status apierrors.APIStatus
		if !apierrors.IsAlreadyExists(err) || !errors.As(err, &status) || status.Status().Details.Name != tc.want {
			t.Errorf("Seed(%v) = %v, want AlreadyExists naming %s", tc.seed, err, tc.want)
		}
	}
}

func names[T metav1.Object](objs []T) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetName()
	}
	return out
}

func TestClaimResizeWhenBound(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	c := mustCreateClaim(t, s, newClaim("ns", "c1", "1Gi"))
	c.Status.Phase = v1.ClaimBound
	c, err := s.UpdateClaimStatus(ctx, c)
	if err != nil {
		t.Fatalf("UpdateClaimStatus = %v", err)
	}
	c.Spec.Resources.Requests[v1.ResourceStorage] = resource.MustParse("2Gi")
	if _, err := s.UpdateClaim(ctx, c); err != nil {
		t.Errorf("grow a bound claim = %v, want success", err)
	}
}

func TestGenericRequests(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		kind   bindertest.Kind
		obj    func() runtime.Object
		change func(runtime.Object) // a spec or metadata change
		status func(runtime.Object) // a status change; nil: no status
	}{
		{"storage class", bindertest.KindStorageClass, func() runtime.Object { return newClass("gold") },
			func(o runtime.Object) { o.(*storagev1.StorageClass).Labels = map[string]string{"a": "b"} }, nil},
		{"node", bindertest.KindNode, func() runtime.Object {
			return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Phase: v1.NodeRunning}}
		},
			func(o runtime.Object) { o.(*v1.Node).Spec.Unschedulable = true },
			func(o runtime.Object) { o.(*v1.Node).Status.Phase = v1.NodeTerminated }},
		{"claim", bindertest.KindClaim, func() runtime.Object { return newClaim("ns", "c1", "1Gi") },
			func(o runtime.Object) { o.(*v1.PersistentVolumeClaim).Spec.VolumeName = "pv1" },
			func(o runtime.Object) { o.(*v1.PersistentVolumeClaim).Status.Phase = v1.ClaimBound }},
		{"pod", bindertest.KindPod, func() runtime.Object { return newPod("ns", "p1") },
			func(o runtime.Object) { o.(*v1.Pod).Labels = map[string]string{"a": "b"} },
			func(o runtime.Object) { o.(*v1.Pod).Status.Phase = v1.PodRunning }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			created, err := s.Create(ctx, tc.obj())
			if err != nil {
				t.Fatalf("Create = %v", err)
			}
			m := created.(metav1.Object)
			tc.change(created)
			updated, err := s.Update(ctx, created)
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			if tc.status != nil {
				tc.status(updated)
				if updated, err = s.UpdateStatus(ctx, updated); err != nil {
					t.Fatalf("UpdateStatus = %v", err)
				}
			}
			got, err := s.Get(ctx, tc.kind, m.GetNamespace(), m.GetName())
			if err != nil {
				t.Fatalf("Get = %v", err)
			}
			if diff := cmp.Diff(updated, got); diff != "" {
				t.Errorf("Get differs from the last write (-write +get):\n%s", diff)
			}
			if n := len(s.List(tc.kind)); n != 1 {
				t.Errorf("List has %d objects, want 1", n)
			}
			if err := s.Delete(ctx, tc.kind, m.GetNamespace(), m.GetName()); err != nil {
				t.Fatalf("Delete = %v", err)
			}
			if _, err := s.Get(ctx, tc.kind, m.GetNamespace(), m.GetName()); !apierrors.IsNotFound(err) {
				t.Errorf("Get after Delete = %v, want NotFound", err)
			}
		})
	}
}

func TestNodeKeepsStatusOnCreate(t *testing.T) {
	s, _ := newServer(t)
	n, err := s.CreateNode(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Phase: v1.NodeRunning}})
	if err != nil {
		t.Fatalf("CreateNode = %v", err)
	}
	if n.Status.Phase != v1.NodeRunning {
		t.Errorf("created node phase = %q, want Running", n.Status.Phase)
	}
}
