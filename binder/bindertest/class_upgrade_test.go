package bindertest_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
)

// TestClaimClassUpgradeFromNil: as kube-apiserver v1.37.2 (retroactive
// default StorageClass assignment), an unset storageClassName may be set
// once (also to ""), or to the class the beta annotation names; every
// other class change is refused.
func TestClaimClassUpgradeFromNil(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		old, next  *string
		annotated  bool
		wantAccept bool
	}{
		{name: "nil to class", old: nil, next: ptr.To("gold"), wantAccept: true},
		{name: "nil to empty", old: nil, next: ptr.To(""), wantAccept: true},
		{name: "empty to class", old: ptr.To(""), next: ptr.To("gold")},
		{name: "class to other class", old: ptr.To("silver"), next: ptr.To("gold")},
		{name: "class to nil", old: ptr.To("gold"), next: nil},
		{name: "nil to the beta annotation's class", old: nil, next: ptr.To("gold"), annotated: true, wantAccept: true},
		{name: "nil to another class than the beta annotation's", old: nil, next: ptr.To("silver"), annotated: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _ := newServer(t)
			c := newClaim("ns", "c1", "1Gi")
			c.Spec.StorageClassName = tc.old
			if tc.annotated {
				c.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "gold"}
			}
			c = mustCreateClaim(t, s, c)
			c.Spec.StorageClassName = tc.next
			out, err := s.UpdateClaim(ctx, c)
			switch {
			case tc.wantAccept && err != nil:
				t.Fatalf("UpdateClaim = %v, want success", err)
			case tc.wantAccept:
				if got := ptr.Deref(out.Spec.StorageClassName, "<nil>"); got != *tc.next {
					t.Errorf("stored class = %q, want %q", got, *tc.next)
				}
				// Once set, the class is immutable again.
				out.Spec.StorageClassName = ptr.To("silver")
				if _, err := s.UpdateClaim(ctx, out); !apierrors.IsInvalid(err) {
					t.Errorf("second class change = %v, want Invalid", err)
				}
			case !apierrors.IsInvalid(err):
				t.Errorf("UpdateClaim = %v, want Invalid", err)
			}
		})
	}
}
