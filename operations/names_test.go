package operations

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestOpNames(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{VolumeOpName("delete", "pv-1", types.UID("u1")), "delete-pv-1[u1]"},
		{VolumeOpName("recycle", "pv-1", ""), "recycle-pv-1"},
		{ClaimOpName("provision", "default", "data", types.UID("u2")), "provision-default/data[u2]"},
		{ClaimOpName("provision", "ns", "c", ""), "provision-ns/c"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("name = %q, want %q", tc.got, tc.want)
		}
	}
}
