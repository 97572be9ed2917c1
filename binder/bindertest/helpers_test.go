package bindertest_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/volbind/volbind/binder/bindertest"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newServer(t testing.TB) (*bindertest.Server, *testingclock.FakeClock) {
	t.Helper()
	return newServerWith(t, bindertest.Config{})
}

// newServerWith is newServer with cfg; its Clock is replaced by the fake
// clock returned.
func newServerWith(t testing.TB, cfg bindertest.Config) (*bindertest.Server, *testingclock.FakeClock) {
	t.Helper()
	fc := testingclock.NewFakeClock(t0)
	cfg.Clock = fc
	return bindertest.NewWithConfig(cfg), fc
}

func newVolume(name, size string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: "/tmp/" + name},
			},
			StorageClassName: "gold",
		},
	}
}

func newClaim(namespace, name, size string) *v1.PersistentVolumeClaim {
	class := "gold"
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: &class,
		},
	}
}

func newClass(name string) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/hostpath"}
}

func newPod(namespace, name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// mustCreateVolume creates pv and fails the test on error.
func mustCreateVolume(t testing.TB, s *bindertest.Server, pv *v1.PersistentVolume) *v1.PersistentVolume {
	t.Helper()
	got, err := s.CreateVolume(context.Background(), pv)
	if err != nil {
		t.Fatalf("CreateVolume(%s) = %v", pv.Name, err)
	}
	return got
}

// mustCreateClaim creates pvc and fails the test on error.
func mustCreateClaim(t testing.TB, s *bindertest.Server, pvc *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	t.Helper()
	got, err := s.CreateClaim(context.Background(), pvc)
	if err != nil {
		t.Fatalf("CreateClaim(%s/%s) = %v", pvc.Namespace, pvc.Name, err)
	}
	return got
}

// rvOf parses an object's resourceVersion.
func rvOf(t testing.TB, o metav1.Object) uint64 {
	t.Helper()
	var n uint64
	for _, c := range o.GetResourceVersion() {
		if c < '0' || c > '9' {
			t.Fatalf("resourceVersion %q of %s is not a number", o.GetResourceVersion(), o.GetName())
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}
