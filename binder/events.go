package binder

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Event reasons. The ones Kubernetes' PV controller uses have its names and
// messages, so that alerts and dashboards written for it keep working.
const (
	// ReasonFailedBinding: no volume for a claim without storage class, or
	// the requested volume is bound to another claim.
	ReasonFailedBinding = "FailedBinding"
	// ReasonVolumeMismatch: the requested volume does not satisfy the claim
	// (size, class, access or volume mode).
	ReasonVolumeMismatch = "VolumeMismatch"
	// ReasonClaimLost: a bound claim lost its volume.
	ReasonClaimLost = "ClaimLost"
	// ReasonClaimMisbound: the claim's volume is bound to another claim.
	ReasonClaimMisbound = "ClaimMisbound"
	// ReasonWaitForFirstConsumer: the claim's class delays binding until a
	// pod using it is scheduled.
	ReasonWaitForFirstConsumer = "WaitForFirstConsumer"
	// ReasonWaitForPodScheduled: the claim's class delays binding and the
	// pods using the claim are not scheduled yet (needs Config.Pods).
	ReasonWaitForPodScheduled = "WaitForPodScheduled"
	// ReasonVolumeUnknownReclaimPolicy: the released volume's reclaim policy
	// is not Retain, Recycle or Delete.
	ReasonVolumeUnknownReclaimPolicy = "VolumeUnknownReclaimPolicy"
	// ReasonVolumeFailedDelete: the Deleter of a released volume failed
	// (the message is its error); the volume is Failed.
	ReasonVolumeFailedDelete = "VolumeFailedDelete"
	// ReasonVolumeDelete: the Deleter reported the storage still in use
	// (ErrDeletedVolumeInUse); the deletion is retried.
	ReasonVolumeDelete = "VolumeDelete"
	// ReasonVolumeFailedRecycle: recycling a released volume failed; the
	// volume is Failed.
	ReasonVolumeFailedRecycle = "VolumeFailedRecycle"
	// ReasonVolumeRecycled: a released volume was scrubbed and is
	// Available again.
	ReasonVolumeRecycled = "VolumeRecycled"
	// ReasonProvisioningFailed: a claim's volume could not be provisioned
	// (no class, no provisioner, a Provisioner error, ...).
	ReasonProvisioningFailed = "ProvisioningFailed"
	// ReasonProvisioningSucceeded: a claim's volume was provisioned.
	ReasonProvisioningSucceeded = "ProvisioningSucceeded"
	// ReasonProvisioningCleanupFailed: the storage of a volume whose object
	// could not be created could not be deleted either; it must be
	// deleted by hand.
	ReasonProvisioningCleanupFailed = "ProvisioningCleanupFailed"
	// ReasonExternalProvisioning: the claim waits for an external
	// provisioner.
	ReasonExternalProvisioning = "ExternalProvisioning"
	// ReasonInvalidVolume: the volume is malformed and is not offered to
	// claims (the message names the problem).
	ReasonInvalidVolume = "InvalidVolume"
	// ReasonInvalidClaim: the claim is malformed and is not bound (the
	// message names the problem).
	ReasonInvalidClaim = "InvalidClaim"
)

// Event messages Kubernetes uses verbatim.
const (
	msgNoClass         = "no persistent volumes available for this claim and no storage class is set"
	msgLostReference   = "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!"
	msgLostVolume      = "Bound claim has lost its PersistentVolume. Data on the volume is lost!"
	msgMisbound        = "Two claims are bound to the same volume, this one is bound incorrectly"
	msgWaitForConsumer = "waiting for first consumer to be created before binding"
	msgUnknownReclaim  = "Volume has unrecognized PersistentVolumeReclaimPolicy"
	msgNoRecycler      = "No recycler plugin found for the volume!"
	msgRecycled        = "Volume recycled"
	msgExternal        = "Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."
)

// event records an event when a recorder is configured.
func (b *Binder) event(obj runtime.Object, eventType, reason, message string) {
	if b.cfg.Recorder == nil {
		return
	}
	b.cfg.Recorder.Event(obj, eventType, reason, message)
}

// warn records a Warning event.
func (b *Binder) warn(obj runtime.Object, reason, message string) {
	b.event(obj, v1.EventTypeWarning, reason, message)
}

// invalidEvent records the event of a malformed object.
func (b *Binder) invalidEvent(obj runtime.Object, err error) {
	reason := ReasonInvalidClaim
	if _, ok := obj.(*v1.PersistentVolume); ok {
		reason = ReasonInvalidVolume
	}
	b.warn(obj, reason, err.Error())
}
