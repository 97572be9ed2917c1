//go:build e2e && linux

package e2e

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// The names of the metrics workload.
const (
	metricsNS      = "metrics"
	staticClass    = "static"   // kubernetes.io/no-provisioner
	externalClass  = "external" // external.example.com: the test provisions and deletes
	defaultClass   = "fallback" // made the default once a claim without class waits
	missingClass   = "missing"  // no such StorageClass
	externalDriver = "external.example.com"
	// hostRoot is where the host-path volumes live: under /tmp, where the
	// in-tree host-path deleter deletes them (nothing is there).
	hostRoot = "/tmp/volbind-e2e-metrics/"
)

// metricsWorkload is what TestKubeControllerManagerMetrics does on each
// cluster. Its methods return errors: they run on several goroutines.
type metricsWorkload struct {
	cs kubernetes.Interface
}

// run does the whole workload and returns once every object has reached
// its final state: six static pairs and a retroactively classed pair Bound
// (one volume is CSI), the provisioned and the host-path Delete volumes
// deleted after their claims, a Delete volume outside /tmp Failed, two
// claims Pending.
func (w *metricsWorkload) run(ctx context.Context) error {
	steps := []func(context.Context) error{w.setup, w.bindStatic, w.provision, w.retroactive, w.reclaim}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// pv returns a volume of the class with the given size in GiB.
func (w *metricsWorkload) pv(name, class string, gib int64, policy v1.PersistentVolumeReclaimPolicy) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(gib<<30, resource.BinarySI)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              class,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostRoot + name}},
		},
	}
}

// pvc returns a claim of the class (nil: none) for gib GiB.
func (w *metricsWorkload) pvc(name string, class *string, gib int64) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: metricsNS, Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(gib<<30, resource.BinarySI)}},
		},
	}
}

// class returns a StorageClass with Immediate binding.
func class(name, provisioner string, policy v1.PersistentVolumeReclaimPolicy) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name},
		Provisioner:       provisioner,
		ReclaimPolicy:     &policy,
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
}

// poll waits up to two minutes for cond.
func poll(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, cond); err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

// volumePhase waits until the volume has the phase.
func (w *metricsWorkload) volumePhase(ctx context.Context, name string, phase v1.PersistentVolumePhase) error {
	return poll(ctx, "volume "+name+" to be "+string(phase), func(ctx context.Context) (bool, error) {
		pv, err := w.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && pv.Status.Phase == phase, client(err)
	})
}

// claimBound waits until the claim is Bound.
func (w *metricsWorkload) claimBound(ctx context.Context, name string) error {
	return poll(ctx, "claim "+name+" to be Bound", func(ctx context.Context) (bool, error) {
		pvc, err := w.cs.CoreV1().PersistentVolumeClaims(metricsNS).Get(ctx, name, metav1.GetOptions{})
		return err == nil && pvc.Status.Phase == v1.ClaimBound, client(err)
	})
}

// volumeGone waits until the volume is deleted.
func (w *metricsWorkload) volumeGone(ctx context.Context, name string) error {
	return poll(ctx, "volume "+name+" to be deleted", func(ctx context.Context) (bool, error) {
		_, err := w.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, client(err)
	})
}

// client keeps the errors of a poll that are not the object's absence.
func client(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// setup creates the namespace, the classes but the default one, and the
// volumes, and waits until they are Available (a claim created afterwards
// finds them at its first sync on either controller).
func (w *metricsWorkload) setup(ctx context.Context) error {
	core := w.cs.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metricsNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, sc := range []*storagev1.StorageClass{
		class(staticClass, volume.NotSupportedProvisioner, v1.PersistentVolumeReclaimRetain),
		class(externalClass, externalDriver, v1.PersistentVolumeReclaimDelete),
	} {
		if _, err := w.cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	var pvs []*v1.PersistentVolume
	for i := range 5 {
		pvs = append(pvs, w.pv(fmt.Sprintf("static-%d", i), staticClass, 1, v1.PersistentVolumeReclaimRetain))
	}
	csi := w.pv("static-csi", staticClass, 1, v1.PersistentVolumeReclaimRetain)
	csi.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "static-csi"}}
	pvs = append(pvs, csi,
		w.pv("doomed", staticClass, 5, v1.PersistentVolumeReclaimDelete),
		w.pv("retro", defaultClass, 3, v1.PersistentVolumeReclaimRetain))
	failing := w.pv("failing", staticClass, 6, v1.PersistentVolumeReclaimDelete)
	failing.Spec.HostPath.Path = "/srv/volbind-e2e-metrics/failing" // the in-tree deleter refuses it
	pvs = append(pvs, failing)
	for _, pv := range pvs {
		if _, err := core.PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, pv := range pvs {
		if err := w.volumePhase(ctx, pv.Name, v1.VolumeAvailable); err != nil {
			return err
		}
	}
	return nil
}

// bindStatic creates the claims of the static volumes, two claims that
// stay Pending (too big; a class that does not exist) and those of the
// Delete volumes, and waits until the first and last are Bound.
func (w *metricsWorkload) bindStatic(ctx context.Context) error {
	claims := []*v1.PersistentVolumeClaim{
		w.pvc("big", ptr.To(staticClass), 100),
		w.pvc("nowhere", ptr.To(missingClass), 1),
		w.pvc("doomed", ptr.To(staticClass), 5),
		w.pvc("failing", ptr.To(staticClass), 6),
	}
	for i := range 6 {
		claims = append(claims, w.pvc(fmt.Sprintf("static-%d", i), ptr.To(staticClass), 1))
	}
	for _, pvc := range claims {
		if _, err := w.cs.CoreV1().PersistentVolumeClaims(metricsNS).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, pvc := range claims[2:] {
		if err := w.claimBound(ctx, pvc.Name); err != nil {
			return err
		}
	}
	return nil
}

// provision creates a claim of the external class, waits until the
// controller hands it to external.example.com (the provisioner
// annotation), and plays that provisioner: it creates the volume, bound to
// the claim, and waits until the claim is Bound.
func (w *metricsWorkload) provision(ctx context.Context) error {
	claims := w.cs.CoreV1().PersistentVolumeClaims(metricsNS)
	if _, err := claims.Create(ctx, w.pvc("provisioned", ptr.To(externalClass), 1), metav1.CreateOptions{}); err != nil {
		return err
	}
	var pvc *v1.PersistentVolumeClaim
	err := poll(ctx, "claim provisioned to be handed to "+externalDriver, func(ctx context.Context) (bool, error) {
		var err error
		pvc, err = claims.Get(ctx, "provisioned", metav1.GetOptions{})
		return err == nil && pvc.Annotations[volume.AnnStorageProvisioner] == externalDriver, err
	})
	if err != nil {
		return err
	}
	pv := w.pv("pvc-"+string(pvc.UID), externalClass, 1, v1.PersistentVolumeReclaimDelete)
	pv.Annotations = map[string]string{volume.AnnDynamicallyProvisioned: externalDriver}
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: externalDriver, VolumeHandle: pv.Name}}
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: metricsNS, Name: pvc.Name, UID: pvc.UID}
	if _, err := w.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return err
	}
	return w.claimBound(ctx, "provisioned")
}

// retroactive creates a claim without class, waits until the controller
// has seen it (its FailedBinding event), then creates the default class
// and its volume's claim binds once the class was given to it.
func (w *metricsWorkload) retroactive(ctx context.Context) error {
	if _, err := w.cs.CoreV1().PersistentVolumeClaims(metricsNS).Create(ctx, w.pvc("retro", nil, 3), metav1.CreateOptions{}); err != nil {
		return err
	}
	err := poll(ctx, "a FailedBinding event of claim retro", func(ctx context.Context) (bool, error) {
		evs, err := w.cs.CoreV1().Events(metricsNS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=retro,reason=FailedBinding"})
		return err == nil && len(evs.Items) > 0, err
	})
	if err != nil {
		return err
	}
	def := class(defaultClass, volume.NotSupportedProvisioner, v1.PersistentVolumeReclaimRetain)
	def.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	if _, err := w.cs.StorageV1().StorageClasses().Create(ctx, def, metav1.CreateOptions{}); err != nil {
		return err
	}
	return w.claimBound(ctx, "retro")
}

// reclaim deletes the claims of the three Delete volumes: the host-path
// one under /tmp is deleted by the controller, the provisioned one by the
// test (its provisioner) once it is Released, the one outside /tmp
// becomes Failed.
func (w *metricsWorkload) reclaim(ctx context.Context) error {
	claims := w.cs.CoreV1().PersistentVolumeClaims(metricsNS)
	pvc, err := claims.Get(ctx, "provisioned", metav1.GetOptions{})
	if err != nil {
		return err
	}
	provisioned := pvc.Spec.VolumeName
	for _, name := range []string{"doomed", "failing", "provisioned"} {
		if err := claims.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	if err := w.volumePhase(ctx, provisioned, v1.VolumeReleased); err != nil {
		return err
	}
	if err := w.cs.CoreV1().PersistentVolumes().Delete(ctx, provisioned, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return errors.Join(w.volumeGone(ctx, provisioned), w.volumeGone(ctx, "doomed"), w.volumePhase(ctx, "failing", v1.VolumeFailed))
}
