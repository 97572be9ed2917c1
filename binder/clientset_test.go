package binder_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/volbind/volbind/binder"
)

func clientsetVolume() *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

func clientsetClaim() *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "claim-1", UID: "uid-1"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// TestClientsetAPIRoundTrip runs every call against a fake clientset and
// checks both the returned object and the action the clientset received
// (verb, resource, subresource, namespace).
func TestClientsetAPIRoundTrip(t *testing.T) {
	ctx := context.Background()
	type want struct {
		verb, resource, subresource, namespace string
	}
	tests := []struct {
		name string
		call func(*binder.ClientsetAPI) (runtime.Object, error)
		want want
		// check inspects the object returned by call.
		check func(t *testing.T, got runtime.Object)
	}{
		{
			name: "CreateVolume",
			call: func(a *binder.ClientsetAPI) (runtime.Object, error) {
				pv := clientsetVolume()
				pv.Name = "pv-new"
				return a.CreateVolume(ctx, pv)
			},
			want: want{"create", "persistentvolumes", "", ""},
			check: func(t *testing.T, got runtime.Object) {
				if name := got.(*v1.PersistentVolume).Name; name != "pv-new" {
					t.Errorf("CreateVolume() name = %q, want %q", name, "pv-new")
				}
			},
		},
		{
			name: "GetVolume",
			call: func(a *binder.ClientsetAPI) (runtime.Object, error) { return a.GetVolume(ctx, "pv-1") },
			want: want{"get", "persistentvolumes", "", ""},
			check: func(t *testing.T, got runtime.Object) {
				if diff := cmp.Diff(clientsetVolume(), got); diff != "" {
					t.Errorf("GetVolume() mismatch (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "UpdateVolume",
			call: func(a *binder.ClientsetAPI) (runtime.Object, error) {
				pv := clientsetVolume()
				pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "claim-1", UID: "uid-1"}
				return a.UpdateVolume(ctx, pv)
			},
			want: want{"update", "persistentvolumes", "", ""},
			check: func(t *testing.T, got runtime.Object) {
				if ref := got.(*v1.PersistentVolume).Spec.ClaimRef; ref == nil || ref.Name != "claim-1" {
					t.Errorf("UpdateVolume() claimRef = %v, want claim-1", ref)
				}
			},
		},
		{
			name: "UpdateVolumeStatus",
			call: func(a *binder.ClientsetAPI) (runtime.Object, error) {
				pv := clientsetVolume()
				pv.Status.Phase = v1.VolumeBound
				return a.UpdateVolumeStatus(ctx, pv)
			},
			want: want{"update", "persistentvolumes", "status", ""},
			check: func(t *testing.T, got runtime.Object) {
				if phase := got.(*v1.PersistentVolume).Status.Phase; phase != v1.VolumeBound {
					t.Errorf("UpdateVolumeStatus() phase = %q, want %q", phase, v1.VolumeBound)
				}
			},
		},
		{
			name: "DeleteVolume",
			call: func(a *binder.ClientsetAPI) (runtime.Object, error) { return nil, a.DeleteVolume(ctx, "pv-1") },
			want: want{"delete", "persistentvolumes", "", ""},
		},
		{
			name: "GetClaim",
			call: func(a *binder.ClientsetAPI) (runtime.Object, error) { return a.GetClaim(ctx, "ns", "claim-1") },
			want: want{"get", "persistentvolumeclaims", "", "ns"},
			check: func(t *testing.T, got runtime.Object) {
				if diff := cmp.Diff(clientsetClaim(), got); diff != "" {
					t.Errorf("GetClaim() mismatch (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "UpdateClaim",
			call: func(a *binder.ClientsetAPI) (runtime.Object, error) {
				pvc := clientsetClaim()
				pvc.Spec.VolumeName = "pv-1"
				return a.UpdateClaim(ctx, pvc)
			},
			want: want{"update", "persistentvolumeclaims", "", "ns"},
			check: func(t *testing.T, got runtime.Object) {
				if name := got.(*v1.PersistentVolumeClaim).Spec.VolumeName; name != "pv-1" {
					t.Errorf("UpdateClaim() volumeName = %q, want %q", name, "pv-1")
				}
			},
		},
		{
			name: "UpdateClaimStatus",
			call: func(a *binder.ClientsetAPI) (runtime.Object, error) {
				pvc := clientsetClaim()
				pvc.Status.Phase = v1.ClaimBound
				return a.UpdateClaimStatus(ctx, pvc)
			},
			want: want{"update", "persistentvolumeclaims", "status", "ns"},
			check: func(t *testing.T, got runtime.Object) {
				if phase := got.(*v1.PersistentVolumeClaim).Status.Phase; phase != v1.ClaimBound {
					t.Errorf("UpdateClaimStatus() phase = %q, want %q", phase, v1.ClaimBound)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cs := fake.NewClientset(clientsetVolume(), clientsetClaim())
			cs.ClearActions()
			got, err := tc.call(binder.NewClientsetAPI(cs))
			if err != nil {
				t.Fatalf("%s() error = %v, want nil", tc.name, err)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
			actions := cs.Actions()
			if len(actions) != 1 {
				t.Fatalf("%s() made %d API calls, want 1: %v", tc.name, len(actions), actions)
			}
			a := actions[0]
			gotAction := want{a.GetVerb(), a.GetResource().Resource, a.GetSubresource(), a.GetNamespace()}
			if gotAction != tc.want {
				t.Errorf("%s() action = %+v, want %+v", tc.name, gotAction, tc.want)
			}
		})
	}
}

// TestClientsetAPIErrors checks that API errors, including a Conflict from a
// reactor, reach the caller as apierrors values, and that nil objects get a
// BadRequest error instead of a panic.
func TestClientsetAPIErrors(t *testing.T) {
	ctx := context.Background()
	pvResource := schema.GroupResource{Resource: "persistentvolumes"}
	pvcResource := schema.GroupResource{Resource: "persistentvolumeclaims"}
	conflictOn := func(res, subresource string) func(*fake.Clientset) {
		return func(cs *fake.Clientset) {
			cs.PrependReactor("update", res, func(action k8stesting.Action) (bool, runtime.Object, error) {
				if action.GetSubresource() != subresource {
					return false, nil, nil
				}
				gr := schema.GroupResource{Resource: res}
				return true, nil, apierrors.NewConflict(gr, "x", errors.New("the object has been modified"))
			})
		}
	}
	tests := []struct {
		name    string
		react   func(*fake.Clientset)
		call    func(*binder.ClientsetAPI) error
		isError func(error) bool
		want    string // name of the predicate, for messages
	}{
		{
			name:    "UpdateVolume conflict",
			react:   conflictOn("persistentvolumes", ""),
			call:    func(a *binder.ClientsetAPI) error { _, err := a.UpdateVolume(ctx, clientsetVolume()); return err },
			isError: apierrors.IsConflict, want: "IsConflict",
		},
		{
			name:    "UpdateVolumeStatus conflict",
			react:   conflictOn("persistentvolumes", "status"),
			call:    func(a *binder.ClientsetAPI) error { _, err := a.UpdateVolumeStatus(ctx, clientsetVolume()); return err },
			isError: apierrors.IsConflict, want: "IsConflict",
		},
		{
			name:    "UpdateClaim conflict",
			react:   conflictOn("persistentvolumeclaims", ""),
			call:    func(a *binder.ClientsetAPI) error { _, err := a.UpdateClaim(ctx, clientsetClaim()); return err },
			isError: apierrors.IsConflict, want: "IsConflict",
		},
		{
			name:    "UpdateClaimStatus conflict",
			react:   conflictOn("persistentvolumeclaims", "status"),
			call:    func(a *binder.ClientsetAPI) error { _, err := a.UpdateClaimStatus(ctx, clientsetClaim()); return err },
			isError: apierrors.IsConflict, want: "IsConflict",
		},
		{
			name:    "CreateVolume already exists",
			call:    func(a *binder.ClientsetAPI) error { _, err := a.CreateVolume(ctx, clientsetVolume()); return err },
			isError: apierrors.IsAlreadyExists, want: "IsAlreadyExists",
		},
		{
			name:    "GetVolume not found",
			call:    func(a *binder.ClientsetAPI) error { _, err := a.GetVolume(ctx, "missing"); return err },
			isError: apierrors.IsNotFound, want: "IsNotFound",
		},
		{
			name:    "DeleteVolume not found",
			call:    func(a *binder.ClientsetAPI) error { return a.DeleteVolume(ctx, "missing") },
			isError: apierrors.IsNotFound, want: "IsNotFound",
		},
		{
			name:    "GetClaim not found",
			call:    func(a *binder.ClientsetAPI) error { _, err := a.GetClaim(ctx, "ns", "missing"); return err },
			isError: apierrors.IsNotFound, want: "IsNotFound",
		},
		{
			name: "UpdateVolume of a missing volume",
			call: func(a *binder.ClientsetAPI) error {
				pv := clientsetVolume()
				pv.Name = "missing"
				_, err := a.UpdateVolume(ctx, pv)
				return err
			},
			isError: apierrors.IsNotFound, want: "IsNotFound",
		},
		{
			name: "GetVolume server error",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("get", "persistentvolumes", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewServerTimeout(pvResource, "get", 1)
				})
			},
			call:    func(a *binder.ClientsetAPI) error { _, err := a.GetVolume(ctx, "pv-1"); return err },
			isError: apierrors.IsServerTimeout, want: "IsServerTimeout",
		},
		{
			name: "GetClaim forbidden",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("get", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(pvcResource, "claim-1", errors.New("no"))
				})
			},
			call:    func(a *binder.ClientsetAPI) error { _, err := a.GetClaim(ctx, "ns", "claim-1"); return err },
			isError: apierrors.IsForbidden, want: "IsForbidden",
		},
		{
			name:    "CreateVolume nil",
			call:    func(a *binder.ClientsetAPI) error { _, err := a.CreateVolume(ctx, nil); return err },
			isError: apierrors.IsBadRequest, want: "IsBadRequest",
		},
		{
			name:    "UpdateVolume nil",
			call:    func(a *binder.ClientsetAPI) error { _, err := a.UpdateVolume(ctx, nil); return err },
			isError: apierrors.IsBadRequest, want: "IsBadRequest",
		},
		{
			name:    "UpdateVolumeStatus nil",
			call:    func(a *binder.ClientsetAPI) error { _, err := a.UpdateVolumeStatus(ctx, nil); return err },
			isError: apierrors.IsBadRequest, want: "IsBadRequest",
		},
		{
			name:    "UpdateClaim nil",
			call:    func(a *binder.ClientsetAPI) error { _, err := a.UpdateClaim(ctx, nil); return err },
			isError: apierrors.IsBadRequest, want: "IsBadRequest",
		},
		{
			name:    "UpdateClaimStatus nil",
			call:    func(a *binder.ClientsetAPI) error { _, err := a.UpdateClaimStatus(ctx, nil); return err },
			isError: apierrors.IsBadRequest, want: "IsBadRequest",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cs := fake.NewClientset(clientsetVolume(), clientsetClaim())
			if tc.react != nil {
				tc.react(cs)
			}
			err := tc.call(binder.NewClientsetAPI(cs))
			if !tc.isError(err) {
				t.Errorf("%s: error = %v, want apierrors.%s", tc.name, err, tc.want)
			}
		})
	}
}

func TestTrimManagedFields(t *testing.T) {
	t.Parallel()
	pv := clientsetVolume()
	pv.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	want := clientsetVolume()
	got, err := binder.TrimManagedFields(pv)
	if err != nil {
		t.Fatalf("TrimManagedFields: %v", err)
	}
	if got != any(pv) {
		t.Errorf("TrimManagedFields returned another object")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed volume (-want +got):\n%s", diff)
	}
	// Objects without managedFields or without metadata (such as a
	// tombstone's key) pass unchanged.
	for _, tc := range []struct{ in, want any }{
		{"ns/name", "ns/name"},
		{nil, nil},
		{clientsetClaim(), clientsetClaim()},
	} {
		out, err := binder.TrimManagedFields(tc.in)
		if err != nil || !cmp.Equal(out, tc.want) {
			t.Errorf("TrimManagedFields(%v) = %v, %v; want %v", tc.in, out, err, tc.want)
		}
	}
}
