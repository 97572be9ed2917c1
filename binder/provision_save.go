package binder

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/zones"
)

// saveProvisioned creates the object of a volume the Provisioner created,
// pre-bound to the claim; the claim's next sync binds them. The storage is
// deleted again (or a ProvisioningCleanupFailed event asks for it to be
// deleted by hand) only when the Binder knows that no volume object refers
// to it: the object was never created, or the name is taken by a volume
// that is not this claim's. When the outcome is unknown (the create failed
// and the read that would tell failed too) the storage is kept and the
// error returned: the next run of the operation finds the object, or
// provisions again under the same volume name.
func (b *Binder) saveProvisioned(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, p Provisioner, req *ProvisionRequest, pv *v1.PersistentVolume) error {
	logger := klog.FromContext(ctx)
	logger.V(3).Info("Volume for claim created", "PVC", klog.KObj(claim), "volumeName", req.VolumeName)
	pv, err := completeVolume(pv, req)
	var res createResult
	if err == nil {
		pv.Finalizers = b.provisionedFinalizers(pv, req.Class.Provisioner)
		res, err = b.createProvisioned(ctx, pv, claim)
	} else {
		res = createAbsent
	}
	switch {
	case err == nil:
	case res == createUnknown || ctx.Err() != nil:
		// The next run finds the object if it was created, and
		// otherwise provisions again under the same volume name.
		logger.V(2).Info("Cannot tell whether the provisioned volume's object exists; keeping its storage", "PVC", klog.KObj(claim), "volumeName", req.VolumeName, "err", err)
		return err
	default:
		b.warn(claim, ReasonProvisioningFailed, fmt.Sprintf("Error creating provisioned PV object for claim %s: %v. Deleting the volume.", cache.ClaimKey(claim.Namespace, claim.Name), err))
		if derr := b.deleteProvisioned(ctx, class, p, pv); derr != nil {
			b.warn(claim, ReasonProvisioningCleanupFailed, fmt.Sprintf("Error cleaning provisioned volume for claim %s: %v. Please delete manually.", cache.ClaimKey(claim.Namespace, claim.Name), derr))
		}
		return err
	}
	if res.volume != nil {
		b.keepVolume(ctx, res.volume)
	}
	logger.V(2).Info("Volume provisioned for claim", "PVC", klog.KObj(claim), "volumeName", pv.Name)
	b.event(claim, v1.EventTypeNormal, ReasonProvisioningSucceeded,
		fmt.Sprintf("Successfully provisioned volume %s using %s", pv.Name, class.Provisioner))
	b.work.add(claimWork(cache.ClaimKey(claim.Namespace, claim.Name)))
	return nil
}

// completeVolume returns a copy of the Provisioner's volume named
// req.VolumeName, pre-bound to the claim by the controller, annotated with
// its provisioner, in the claim's class, with the defaults of req wherever
// the Provisioner left a field empty, and labelled with its zones.
func completeVolume(in *v1.PersistentVolume, req *ProvisionRequest) (*v1.PersistentVolume, error) {
	pv := in.DeepCopy()
	claim := req.Claim
	pv.TypeMeta = metav1.TypeMeta{}
	pv.Name, pv.GenerateName, pv.UID, pv.ResourceVersion = req.VolumeName, "", "", ""
	pv.Status = v1.PersistentVolumeStatus{}
	pv.Spec.ClaimRef = claimRef(claim)
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, volume.AnnBoundByController, "yes")
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, volume.AnnDynamicallyProvisioned, req.Class.Provisioner)
	pv.Spec.StorageClassName = volume.GetPersistentVolumeClaimClass(claim)
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = req.ReclaimPolicy
	}
	if pv.Spec.MountOptions == nil && len(req.MountOptions) > 0 {
		pv.Spec.MountOptions = append([]string(nil), req.MountOptions...)
	}
	if len(pv.Spec.AccessModes) == 0 {
		pv.Spec.AccessModes = append([]v1.PersistentVolumeAccessMode(nil), claim.Spec.AccessModes...)
	}
	if pv.Spec.VolumeMode == nil && claim.Spec.VolumeMode != nil {
		mode := *claim.Spec.VolumeMode
		pv.Spec.VolumeMode = &mode
	}
	if _, ok := pv.Spec.Capacity[v1.ResourceStorage]; !ok {
		if pv.Spec.Capacity == nil {
			pv.Spec.Capacity = v1.ResourceList{}
		}
		pv.Spec.Capacity[v1.ResourceStorage] = req.Size.Quantity()
	}
	if req.Zones.Len() > 0 {
		return zones.LabelVolume(pv, zones.Placement{Zones: req.Zones})
	}
	return pv, nil
}

// createResult is what createProvisioned learned about the volume object.
type createResult struct {
	// volume is the object, when it was created or read back.
	volume *v1.PersistentVolume
	// state tells whether the object exists.
	state createState
}

// createState is whether a provisioned volume's object exists.
type createState int

const (
	// stateUnknown: the create failed and no read told whether an
	// earlier attempt was applied; the storage must be kept.
	stateUnknown createState = iota
	// stateAbsent: no object of the volume's name refers to the storage
	// (none exists, or another claim's does).
	stateAbsent
	// stateExists: the object exists.
	stateExists
)

var (
	createUnknown = createResult{state: stateUnknown}
	createAbsent  = createResult{state: stateAbsent}
)

// createProvisioned creates the volume's object, retrying
// CreateVolumeRetries times CreateVolumeInterval apart. AlreadyExists is a
// success, as in Kubernetes (which then records ProvisioningSucceeded): the
// name depends only on the claim's UID, so the object is the one an
// earlier attempt (whose answer was lost) or run created. It is read back
// to be cached when possible, else left for the informer to deliver. After
// the last failure the object is read once to learn whether some attempt
// was applied after all.
func (b *Binder) createProvisioned(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) (createResult, error) {
	pc := b.cfg.Provisioning
	logger := klog.FromContext(ctx)
	var err error
	for i := range pc.CreateVolumeRetries {
		if i > 0 {
			if werr := b.sleep(ctx, pc.CreateVolumeInterval); werr != nil {
				return createUnknown, errors.Join(err, werr)
			}
		}
		var out *v1.PersistentVolume
		out, err = b.api.CreateVolume(ctx, pv)
		switch {
		case err == nil:
			b.metrics.wrote(resourceVolumes, "create")
			return createResult{volume: out, state: stateExists}, nil
		case apierrors.IsAlreadyExists(err):
			logger.V(3).Info("Volume for claim already exists, reusing", "PVC", klog.KObj(claim), "volumeName", pv.Name)
			return b.readExisting(ctx, pv, claim), nil
		}
		logger.V(3).Info("Failed to save provisioned volume", "volumeName", pv.Name, "PVC", klog.KObj(claim), "err", err)
		if ctx.Err() != nil {
			return createUnknown, err
		}
	}
	res, rerr := b.readProvisioned(ctx, pv, claim)
	switch {
	case rerr == nil && res.state == stateExists:
		logger.V(3).Info("Provisioned volume was created by a failed attempt, reusing", "volumeName", pv.Name)
		return res, nil
	case rerr != nil && res.state == stateUnknown:
		return res, errors.Join(err, rerr)
	}
	return res, err
}

// readExisting reads the volume whose create answered AlreadyExists, to
// cache it when it is this claim's. Whatever it finds, the create
// succeeded: a read error or a volume that is not the claim's is logged,
// and the claim's sync deals with what the informer delivers.
func (b *Binder) readExisting(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) createResult {
	existing, err := b.api.GetVolume(ctx, pv.Name)
	switch {
	case err != nil:
		klog.FromContext(ctx).V(3).Info("Cannot read provisioned volume that exists; the informer will deliver it", "volumeName", pv.Name, "err", err)
	case !provisionedFor(existing, claim):
		klog.FromContext(ctx).V(2).Info("Provisioned volume's name is taken by a volume of another claim", "volumeName", pv.Name, "PVC", klog.KObj(claim))
	default:
		return createResult{volume: existing, state: stateExists}
	}
	return createResult{state: stateExists}
}

// readProvisioned reads the volume named like pv after every create
// failed and tells whether the object is this claim's: NotFound, or a
// volume of that name bound to another claim (an error), means none
// refers to the storage; a failed read leaves it unknown.
func (b *Binder) readProvisioned(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) (createResult, error) {
	existing, err := b.api.GetVolume(ctx, pv.Name)
	switch {
	case apierrors.IsNotFound(err):
		return createAbsent, nil
	case err != nil:
		return createUnknown, err
	case !provisionedFor(existing, claim):
		return createAbsent, fmt.Errorf("volume %q already exists and is not bound to claim %s", pv.Name, cache.ClaimKey(claim.Namespace, claim.Name))
	}
	return createResult{volume: existing, state: stateExists}, nil
}

// errNoDeleter is the cleanup failure of a provisioner that cannot delete:
// Kubernetes' text for a plugin that is not deletable.
var errNoDeleter = errors.New("no deletable volume plugin matched")

// deleteProvisioned deletes the storage of a provisioned volume whose
// object could not be created, as Kubernetes does with the plugin that
// provisioned it: the Provisioner itself when it is a Deleter, or else the
// Deleter registered under its name (errNoDeleter when neither). Each of
// up to CreateVolumeRetries attempts, CreateVolumeInterval apart, first
// makes the volume's Deleter through a DeleterFactory's NewDeleter ("failed
// to create deleter for volume ...") and then calls Delete.
func (b *Binder) deleteProvisioned(ctx context.Context, class *storagev1.StorageClass, p Provisioner, pv *v1.PersistentVolume) error {
	d, ok := p.(Deleter)
	if !ok && b.cfg.Reclaim != nil {
		d = b.cfg.Reclaim.Deleters[class.Provisioner]
	}
	if d == nil {
		return errNoDeleter
	}
	pc := b.cfg.Provisioning
	var err error
	for i := range pc.CreateVolumeRetries {
		if i > 0 {
			if werr := b.sleep(ctx, pc.CreateVolumeInterval); werr != nil {
				return errors.Join(err, werr)
			}
		}
		if err = b.fenced(ctx); err != nil {
			return err
		}
		var vd Deleter
		if vd, err = volumeDeleter(ctx, d, pv); err == nil {
			start := b.cfg.Clock.Now()
			err = vd.Delete(ctx, pv)
			b.kube.pluginCall(class.Provisioner, kubeOpPluginDelete, start, err)
			if err == nil {
				return nil
			}
		}
		klog.FromContext(ctx).V(3).Info("Failed to delete provisioned storage", "volumeName", pv.Name, "err", err)
	}
	return err
}
