package controller

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHostPathDeleter: as Kubernetes' in-tree host-path deleter, a path
// with /tmp/ in it is removed (gone already is fine), any other path fails
// with Kubernetes' message and is left alone, and a volume that is not a
// host-path one fails.
func TestHostPathDeleter(t *testing.T) {
	t.Parallel()
	tmp := filepath.Join(t.TempDir(), "tmp") // "/tmp/" in the path wherever $TMPDIR is
	if err := os.MkdirAll(filepath.Join(tmp, "vol", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	hostPath := func(path string) *v1.PersistentVolume {
		return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: v1.PersistentVolumeSpec{
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path}}}}
	}
	for _, tc := range []struct {
		name    string
		pv      *v1.PersistentVolume
		wantErr string
		gone    string
	}{
		{name: "under /tmp/", pv: hostPath(filepath.Join(tmp, "vol")), gone: filepath.Join(tmp, "vol")},
		{name: "under /tmp/, gone already", pv: hostPath(filepath.Join(tmp, "never"))},
		{name: "outside /tmp", pv: hostPath("/srv/volumes/pv1"), wantErr: "host_path deleter only supports /tmp/.+ but received provided /srv/volumes/pv1"},
		{name: "/tmp itself", pv: hostPath("/tmp/"), wantErr: "host_path deleter only supports /tmp/.+ but received provided /tmp/"},
		{name: "not a host path", pv: &v1.PersistentVolume{}, wantErr: "spec.PersistentVolumeSource.HostPath is nil"},
	} {
		err := hostPathDeleter{}.Delete(t.Context(), tc.pv)
		if got := errString(err); got != tc.wantErr {
			t.Errorf("%s: Delete = %q, want %q", tc.name, got, tc.wantErr)
		}
		if tc.gone != "" {
			if _, err := os.Stat(tc.gone); !os.IsNotExist(err) {
				t.Errorf("%s: %s still exists (%v)", tc.name, tc.gone, err)
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
