package pvsource

import (
	"reflect"
	"testing"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src    v1.PersistentVolumeSource
		want   Source
		wantOK bool
	}{
		{v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "disk.example.com"}},
			Source{Field: "csi", Plugin: "disk.example.com", Driver: "disk.example.com"}, true},
		{v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/x"}}, Source{Field: "nfs", Plugin: "kubernetes.io/nfs"}, true},
		{v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "v"}},
			Source{Field: "awsElasticBlockStore", Plugin: "kubernetes.io/aws-ebs"}, true},
		{v1.PersistentVolumeSource{FlexVolume: &v1.FlexPersistentVolumeSource{Driver: "vendor/x"}},
			Source{Field: "flexVolume", Driver: "vendor/x"}, true},
		{v1.PersistentVolumeSource{Glusterfs: &v1.GlusterfsPersistentVolumeSource{}}, Source{Field: "glusterfs"}, true},
		// Two members (invalid): CSI wins, as the table puts it first.
		{v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{}, CSI: &v1.CSIPersistentVolumeSource{Driver: "d"}},
			Source{Field: "csi", Plugin: "d", Driver: "d"}, true},
		// hostPath comes before flexVolume: the flex driver is not hostPath's.
		{v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{}, FlexVolume: &v1.FlexPersistentVolumeSource{Driver: "vendor/x"}},
			Source{Field: "hostPath", Plugin: "kubernetes.io/host-path"}, true},
		{v1.PersistentVolumeSource{}, Source{}, false},
	}
	for _, tc := range tests {
		got, ok := Of(&tc.src)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("Of(%+v) = %+v, %v; want %+v, %v", tc.src, got, ok, tc.want, tc.wantOK)
		}
	}
}

// TestEveryMember sets each pointer field of the union in turn: the table
// must know every member of the API's union, so that a member added to
// k8s.io/api shows up here instead of as "(none or other)".
func TestEveryMember(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(v1.PersistentVolumeSource{})
	if typ.NumField() != len(members) {
		t.Errorf("PersistentVolumeSource has %d members, the table %d", typ.NumField(), len(members))
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		var s v1.PersistentVolumeSource
		reflect.ValueOf(&s).Elem().Field(i).Set(reflect.New(f.Type.Elem()))
		got, ok := Of(&s)
		if !ok {
			t.Errorf("member %s: Of found none", f.Name)
			continue
		}
		if want := jsonName(f); got.Field != want {
			t.Errorf("member %s: Field = %q, want %q", f.Name, got.Field, want)
		}
	}
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	return tag
}
