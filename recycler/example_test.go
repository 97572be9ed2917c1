package recycler_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/recycler"
	"github.com/volbind/volbind/recycler/recyclertest"
)

// releasedNFSVolume returns a Released NFS volume whose policy is Recycle.
func releasedNFSVolume(name string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "0b6e6bd1-2f1a-4a63-9d7e-2a1f3c4d5e6f"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRecycle,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				NFS: &v1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/" + name},
			},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeReleased},
	}
}

// Recycle a released NFS volume. In production the PodAPI is
// recycler.NewClientsetPods(clientset) (or use recycler.NewForClientset);
// here recyclertest plays the API server and a kubelet whose scrub pods
// succeed at once.
func ExampleRecycler_Recycle() {
	pods := recyclertest.New()
	pods.FinishOnCreate(&v1.PodStatus{Phase: v1.PodSucceeded})

	r, err := recycler.New(pods, recycler.Config{})
	if err != nil {
		panic(err)
	}
	pv := releasedNFSVolume("pv-data-1")
	if err := recycler.CanRecycle(pv); err != nil {
		fmt.Println("cannot recycle:", err)
		return
	}
	timeout, _ := r.Timeout(pv)
	fmt.Println("pod:", recycler.PodName(pv.Name), "timeout:", timeout)

	if err := r.Recycle(context.Background(), pv); err != nil {
		fmt.Println("recycle failed:", err)
		return
	}
	// The caller now makes the volume Available again.
	fmt.Println("recycled; pods created:", pods.Calls(recyclertest.Create), "pods left:", pods.Len())
	// Output:
	// pod: recycler-for-pv-data-1 timeout: 10m0s
	// recycled; pods created: 1 pods left: 0
}

// A failed recycler pod comes back as a *PodFailedError with the pod's
// reason and message; the pod is deleted all the same.
func ExampleRecycler_Recycle_failed() {
	pods := recyclertest.New()
	pods.FinishOnCreate(&v1.PodStatus{
		Phase:   v1.PodFailed,
		Reason:  "DeadlineExceeded",
		Message: "Pod was active on the node longer than the specified deadline",
	})
	r, err := recycler.New(pods, recycler.Config{})
	if err != nil {
		panic(err)
	}

	err = r.Recycle(context.Background(), releasedNFSVolume("pv-data-2"))
	var failed *recycler.PodFailedError
	if errors.As(err, &failed) {
		fmt.Println("reason:", failed.Reason)
		fmt.Println("message:", failed.Message)
	}
	fmt.Println("pods left:", pods.Len())
	// Output:
	// reason: DeadlineExceeded
	// message: Pod was active on the node longer than the specified deadline
	// pods left: 0
}

// A controller restarted in the middle of a recycle finds the pod of its
// earlier run under the same name and adopts it instead of starting a
// second one.
func ExampleRecycler_Recycle_adopt() {
	pods := recyclertest.New()
	r, err := recycler.New(pods, recycler.Config{})
	if err != nil {
		panic(err)
	}
	pv := releasedNFSVolume("pv-data-3")

	// The pod the earlier run left behind, already finished.
	left, _ := r.PodFor(pv)
	left.Status.Phase = v1.PodSucceeded
	if err := pods.Add(left); err != nil {
		panic(err)
	}

	err = r.Recycle(context.Background(), pv)
	fmt.Println("recycled:", err == nil, "pods left:", pods.Len(), "create calls:", pods.Calls(recyclertest.Create))
	// Output:
	// recycled: true pods left: 0 create calls: 1
}

// Replace the pod template: here a dedicated namespace and image. The
// recycler still sets the name, the annotations, the volume's source on the
// first volume and the deadline.
func ExampleConfig_podTemplate() {
	template := recycler.DefaultPodTemplate()
	template.Namespace = "storage-recycling"
	template.Spec.Containers[0].Image = "registry.example.com/scrubber:v2"

	r, err := recycler.New(recyclertest.New(), recycler.Config{
		PodTemplate: template,
		NFSTimeout:  recycler.Timeout{Minimum: recycler.DefaultNFSMinimumTimeout, PerGiB: 10 * time.Second},
	})
	if err != nil {
		panic(err)
	}
	pod, err := r.PodFor(releasedNFSVolume("pv-data-4"))
	if err != nil {
		panic(err)
	}
	fmt.Println(pod.Namespace+"/"+pod.Name, pod.Spec.Containers[0].Image)
	fmt.Println("mounts:", pod.Spec.Volumes[0].NFS.Server+":"+pod.Spec.Volumes[0].NFS.Path)
	fmt.Println("activeDeadlineSeconds:", *pod.Spec.ActiveDeadlineSeconds)

	_, err = recycler.New(recyclertest.New(), recycler.Config{PodTemplate: &v1.Pod{}})
	fmt.Println(err)
	// Output:
	// storage-recycling/recycler-for-pv-data-4 registry.example.com/scrubber:v2
	// mounts: nfs.example.com:/exports/pv-data-4
	// activeDeadlineSeconds: 400
	// recycler: invalid pod template: no container
}

// Only NFS and HostPath volumes can be recycled, as in Kubernetes.
func ExampleCanRecycle() {
	pv := releasedNFSVolume("pv-csi")
	pv.Spec.NFS = nil
	pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-0abc"}

	err := recycler.CanRecycle(pv)
	fmt.Println(errors.Is(err, recycler.ErrUnsupportedVolume))
	fmt.Println(err)
	// Output:
	// true
	// recycler: recycle volume pv-csi: source csi ebs.csi.aws.com is not supported, only nfs and hostPath are: recycler: volume cannot be recycled
}
