package binder

import (
	"context"
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/volbind/volbind/internal/pvsource"
	"github.com/volbind/volbind/zones"
)

// Provisioner creates the storage of a new volume for a claim: the
// internal provisioner of a StorageClass, registered in
// ProvisioningConfig.Provisioners under the class's provisioner name.
type Provisioner interface {
	// Provision creates the storage described by req and returns the
	// volume that exposes it: at least its volume source; the Binder fills
	// in what the volume leaves empty (see ProvisioningConfig) and creates
	// it. It blocks until the storage exists. It is called at most once at
	// a time for one claim, but may be called again for the same
	// req.VolumeName after a failure or a restart: it should then return
	// the storage it created before rather than create a second one. An
	// error is reported in a ProvisioningFailed event and retried with
	// backoff. req is shared: do not modify it.
	Provision(ctx context.Context, req *ProvisionRequest) (*v1.PersistentVolume, error)
}

// ZonalProvisioner is a Provisioner whose volumes live in zones (cloud
// disks). For it the Binder chooses the zones with zones.SelectZones before
// Provision (ProvisionRequest.Zones) and labels the returned volume with
// them (zones.LabelVolume). The volumes of other provisioners get no zone.
type ZonalProvisioner interface {
	Provisioner
	// Replicas returns the number of zones a volume of class spans: 1 for
	// a zonal disk, 2 for a regional one. It must not block.
	Replicas(class *storagev1.StorageClass) uint32
}

// ProvisionRequest is what a Provisioner gets: Kubernetes' VolumeOptions
// plus the size and zones the Binder chose. Every field is set by the
// Binder; objects are shared and must not be modified.
type ProvisionRequest struct {
	// VolumeName is the name the volume will have, "pvc-<claim UID>".
	VolumeName string
	// Claim is the claim the volume is for, as last read from the API.
	Claim *v1.PersistentVolumeClaim
	// Class is the claim's StorageClass.
	Class *storagev1.StorageClass
	// Parameters are the class's parameters.
	Parameters map[string]string
	// ReclaimPolicy is the class's reclaim policy (Delete when it has
	// none).
	ReclaimPolicy v1.PersistentVolumeReclaimPolicy
	// MountOptions are the class's mount options.
	MountOptions []string
	// Size is the claim's storage request rounded up to whole allocation
	// units (ProvisioningConfig.AllocationUnit): the size to allocate.
	Size zones.Allocation
	// Zones are the zones chosen for the volume of a ZonalProvisioner; nil
	// for other provisioners.
	Zones sets.Set[string]
	// SelectedNode is the node the scheduler chose for the claim's first
	// consumer when binding is delayed (WaitForFirstConsumer), or nil.
	SelectedNode *v1.Node
	// AllowedTopologies are the class's allowed topologies.
	AllowedTopologies []v1.TopologySelectorTerm
	// CloudTags are the tags Kubernetes puts on cloud volumes:
	// kubernetes.io/created-for/pvc/name, .../pvc/namespace and
	// kubernetes.io/created-for/pv/name.
	CloudTags map[string]string
}

// Cloud tags of provisioned volumes, as Kubernetes sets them.
const (
	// CloudTagClaimName is the tag holding the claim's name.
	CloudTagClaimName = "kubernetes.io/created-for/pvc/name"
	// CloudTagClaimNamespace is the tag holding the claim's namespace.
	CloudTagClaimNamespace = "kubernetes.io/created-for/pvc/namespace"
	// CloudTagVolumeName is the tag holding the volume's name.
	CloudTagVolumeName = "kubernetes.io/created-for/pv/name"
)

// Deleter deletes the storage of a released volume whose reclaim policy is
// Delete. Register it in ReclaimConfig.Deleters under the name of the
// provisioner that created the volumes (their pv.kubernetes.io/provisioned-by
// annotation) or of their volume source (VolumePluginName).
type Deleter interface {
	// Delete deletes pv's storage and blocks until it is gone. Storage
	// already gone is a success: Delete is called again when the Binder
	// restarted after Delete but before the volume object was deleted. An
	// error wrapping ErrDeletedVolumeInUse only postpones the deletion
	// (Normal event VolumeDelete); any other error makes the volume Failed
	// with the error's message (Warning event VolumeFailedDelete). Both are
	// retried with backoff. pv is shared: do not modify it.
	Delete(ctx context.Context, pv *v1.PersistentVolume) error
}

// ErrDeletedVolumeInUse is wrapped by a Deleter's error when the storage
// cannot be deleted yet because it is still in use (Kubernetes'
// DeletedVolumeInUseError): the volume is not marked Failed.
var ErrDeletedVolumeInUse = errors.New("binder: deleted volume is still in use")

// VolumeRecycler scrubs a released volume whose reclaim policy is Recycle.
// *recycler.Recycler implements it.
type VolumeRecycler interface {
	// Recycle deletes the data on pv and blocks until it is done. An error
	// wrapping recycler.ErrUnsupportedVolume means the volume cannot be
	// recycled. pv is shared: do not modify it.
	Recycle(ctx context.Context, pv *v1.PersistentVolume) error
}

// NodeGetter reads nodes for provisioning: the selected node of a claim
// whose binding was delayed, and the zones that have nodes.
type NodeGetter interface {
	// GetNode returns the named node; an apierrors NotFound error when
	// there is none.
	GetNode(ctx context.Context, name string) (*v1.Node, error)
	// ListNodes returns every node. The result is shared: do not modify
	// it.
	ListNodes(ctx context.Context) ([]*v1.Node, error)
}

// Defaults of ProvisioningConfig.
const (
	// DefaultCreateVolumeRetries is how often a provisioned volume's
	// object is created before the storage is deleted again (Kubernetes'
	// createProvisionedPVRetryCount).
	DefaultCreateVolumeRetries = 5
	// DefaultCreateVolumeInterval is the pause between those attempts
	// (Kubernetes' createProvisionedPVInterval).
	DefaultCreateVolumeInterval = 10 * time.Second
)

// ProvisioningConfig turns dynamic provisioning on. A claim of a
// StorageClass that no volume matches is then provisioned:
//
//   - by the Provisioner registered under the class's provisioner name: the
//     claim is annotated with the provisioner
//     (volume.kubernetes.io/storage-provisioner and the beta key), the
//     Provisioner creates the storage, and the Binder creates the volume
//     "pvc-<claim UID>" pre-bound to the claim (claimRef,
//     pv.kubernetes.io/bound-by-controller, pv.kubernetes.io/provisioned-by
//     set to the provisioner name), which the next claim sync binds;
//   - by an external provisioner when none is registered under that name
//     and the name does not start with "kubernetes.io/": the claim gets the
//     annotations and an ExternalProvisioning event, and is left to it;
//   - not at all for an unregistered "kubernetes.io/" name or a missing
//     class: a ProvisioningFailed event, retried at the next sync.
//
// The volume the Provisioner returns gets the class's name, reclaim policy
// and mount options, the claim's access modes and volume mode, and the
// allocated size as capacity, wherever it leaves them empty.
type ProvisioningConfig struct {
	// Provisioners are the internal provisioners by provisioner name (a
	// StorageClass's provisioner field). Not modified.
	Provisioners map[string]Provisioner
	// Nodes reads the selected node of delayed binding and the zones with
	// nodes for ZonalProvisioners. Nil means no node is known: claims with
	// a selected node fail to provision, and zones come only from the
	// class.
	Nodes NodeGetter
	// AllocationUnit is the unit sizes are rounded up to. Zero means
	// zones.DefaultUnit (GiB).
	AllocationUnit zones.Unit
	// CreateVolumeRetries and CreateVolumeInterval bound the creation of
	// a provisioned volume's object; zero means DefaultCreateVolumeRetries
	// and DefaultCreateVolumeInterval (measured on Config.Clock).
	CreateVolumeRetries  int
	CreateVolumeInterval time.Duration
}

// ReclaimConfig turns the Delete and Recycle reclaim policies on.
type ReclaimConfig struct {
	// Deleters delete the storage of released Delete volumes, by provisioner
	// name or volume plugin name (see Deleter and DeleterFactory). Left
	// Released, without error, for someone else: a volume provisioned by a
	// provisioner that has no Deleter here and whose name does not start
	// with "kubernetes.io/" (an external provisioner), a CSI volume whose
	// driver has no Deleter here (the CSI external provisioner) and a
	// volume migrated to CSI. Any other volume without a Deleter becomes
	// Failed ("no volume plugin matched"). Volumes provisioned under these
	// names (and under "kubernetes.io/" names) carry FinalizerPVController
	// while they have the Delete policy. Not modified.
	Deleters map[string]Deleter
	// Recycler scrubs released Recycle volumes; nil makes them Failed
	// ("No recycler plugin found for the volume!").
	Recycler VolumeRecycler
}

// VolumePluginName returns the name of the Kubernetes volume plugin of pv's
// source ("kubernetes.io/host-path", "kubernetes.io/nfs",
// "kubernetes.io/gce-pd", ...), the CSI driver's name for CSI volumes, or
// "" for a source it does not know.
func VolumePluginName(pv *v1.PersistentVolume) string {
	src, _ := pvsource.Of(&pv.Spec.PersistentVolumeSource)
	return src.Plugin
}

// ProvisionedVolumeName returns the name of the volume provisioned for
// claim, "pvc-<claim UID>", as Kubernetes names it.
func ProvisionedVolumeName(claim *v1.PersistentVolumeClaim) string {
	return "pvc-" + string(claim.UID)
}

// MountOptionsSupport is implemented by a Provisioner that may not support
// mount options (Kubernetes' SupportsMountOption). When SupportsMountOption
// returns false, a claim whose StorageClass has mount options is not
// provisioned: it gets a Warning ProvisioningFailed event "Mount options
// are not supported by the provisioner but StorageClass "<class>" has
// mount options [...]" and the operation backs off, as in Kubernetes (the
// volume would be rejected anyway). A Provisioner that does not implement
// it supports mount options.
type MountOptionsSupport interface {
	// SupportsMountOption reports whether volumes of the provisioner
	// accept mount options. It must not block.
	SupportsMountOption() bool
}
