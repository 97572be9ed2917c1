// Package binder binds PersistentVolumeClaims to PersistentVolumes with the
// semantics of the PersistentVolume controller of kube-controller-manager
// (pkg/controller/volume/persistentvolume), as an embeddable library.
//
// A [Binder] learns about volumes, claims and storage classes from event
// handlers ([Binder.VolumeHandler], [Binder.ClaimHandler],
// [Binder.ClassHandler]) that callers register on informers or call from
// their own watches, and writes to the API server only through the small
// [API] interface. [NewForClientset] wires both to a client-go
// kubernetes.Interface and a SharedInformerFactory.
//
// [Binder.Run] drives two client-go typed workqueues, one of claims and one
// of volumes, with a configurable number of workers each (a key is never
// processed by two workers at once), a rate-limited requeue for syncs that
// fail (conflicts are retried from fresh state, never re-sent) and a
// jittered periodic resync of every object. [Binder.SyncClaim] and
// [Binder.SyncVolume] run one synchronous step, the equivalent of
// Kubernetes' syncClaim and syncVolume, and [Binder.WaitForQuiescence]
// waits until no work is queued or in flight.
//
// # Semantics
//
// The state machine is Kubernetes': a Pending claim is bound to the best
// volume (the one FindMatchingVolume would choose, found in O(log N) by
// internal/pvindex; among volumes of equal capacity the name that sorts
// first wins), a claim pre-bound to a volume (spec.volumeName) is bound only
// to that volume, a volume pre-bound to a claim (claimRef without UID) is
// offered only to that claim, a bound claim whose volume is gone or bound
// elsewhere becomes Lost (events ClaimLost, ClaimMisbound), a bound volume
// whose claim is gone or was re-created (checked against the API before
// acting) becomes Released, and a binding the controller started but did
// not finish is completed or rolled back. A binding is four writes, in this
// order: the volume's claimRef (with pv.kubernetes.io/bound-by-controller
// when the binder chose the volume), the volume's status (Bound), the
// claim's volumeName with pv.kubernetes.io/bind-completed (and
// bound-by-controller), and the claim's status (Bound, with the volume's
// capacity and access modes). Every write is skipped when the object
// already has the wanted value, so a consistent bound pair costs no write,
// and a Binder restarted between any two writes finishes the binding.
//
// Kubernetes first marks every new volume Available (a fifth write) and
// binds claims only to Available volumes. With [Config.AvailableDelay] set,
// a claim may also take a new volume whose phase is still empty or Pending,
// and the Available write waits: for AvailableDelay after the Binder first
// saw the volume, then for as long as a claim in the claim queue might take
// it. A statically provisioned volume that a claim takes then costs the
// four writes of its binding only, and claims get their best fit among all
// new volumes instead of among those marked so far. Register informers with
// [TrimManagedFields] (as kube-controller-manager does) to cache and send
// objects without their managedFields.
//
// Claims of a WaitForFirstConsumer class are bound only to volumes
// pre-bound to them (the scheduler-side binder chooses the others) and are
// provisioned only once the scheduler has selected a node
// (volume.kubernetes.io/selected-node); until then they get a
// WaitForFirstConsumer event. A claim without class gets the default class
// retroactively when no volume matches, as Kubernetes does; a claim with an
// empty class and no matching volume gets a FailedBinding event.
// CSI-migration annotations and the PV-protection finalizers of provisioned
// volumes are not managed.
//
// # Reclaim and provisioning
//
// A released volume's reclaim policy decides what happens to it. Retain
// keeps it Released and untouched. With [Config.Reclaim] set, Delete runs
// the [Deleter] registered for the volume's provisioner
// (pv.kubernetes.io/provisioned-by) or volume plugin ([VolumePluginName]),
// then deletes the volume; volumes of an external provisioner (a name
// without a Deleter and without the "kubernetes.io/" prefix) are left to
// it. Recycle scrubs the volume with a [VolumeRecycler] (a
// *recycler.Recycler) and makes it Available again. Failures make the
// volume Failed with the error's message and an event (VolumeFailedDelete,
// VolumeFailedRecycle). Without Config.Reclaim, Delete and Recycle volumes
// stay Released for another controller; an unknown policy makes the volume
// Failed.
//
// With [Config.Provisioning] set, a claim of a StorageClass that no volume
// matches is provisioned by the [Provisioner] registered under the class's
// provisioner name, or handed to an external provisioner through the
// volume.kubernetes.io/storage-provisioner annotations; see
// [ProvisioningConfig]. The new volume, "pvc-<claim UID>", is sized by
// zones.RoundUp, placed by zones.SelectZones (class parameters,
// allowedTopologies, the selected node) for a [ZonalProvisioner] and
// labelled by zones.LabelVolume; it is created pre-bound to the claim and
// bound by the claim's next sync. Events: ProvisioningSucceeded,
// ProvisioningFailed, ExternalProvisioning.
//
// Deletions, recycles and provisionings are long-running operations. Each
// runs in its own goroutine through an operations.Map under a name made of
// the volume's or claim's name and UID (delete-<pv>[<uid>],
// recycle-<pv>[<uid>], provision-<namespace>/<name>[<uid>]), so a sync that
// fires again while one runs, or while it backs off after a failure, never
// starts a second one. Each operation reads the latest volume or claim from
// the API before it acts, and is safe across restarts: a provisioned volume
// is found by its deterministic name before anything is provisioned again,
// a Deleter is called again when its volume was not deleted, and a
// recycler pod left running is adopted. Run cancels the running operations
// when it returns and waits for them.
//
// Storage is deleted only when the Binder knows that no volume object
// refers to it: AlreadyExists on a provisioned volume's create is a
// success (the object of an earlier attempt whose answer was lost), and
// when neither the create nor a read tells whether the object exists, the
// storage is kept and provisioning is retried under the same name. Two
// Binders that overlap (a leader-election handover) do not delete or
// recycle one volume twice: right before the Deleter or the recycler runs,
// the volume gets an [AnnOperation] mark (owner [Config.Identity], start
// time) by a resourceVersion-checked update, and a fresh mark of another
// owner makes the other Binder skip it. [Config.Fence] (a leader-elected
// controller's Lease) is consulted right before every write and every
// Provision, Delete and Recycle call.
//
// # Caches and writes
//
// The Binder keeps the latest version of every object it has seen, from
// events and from the API server's answers to its own writes (a
// cache.Latest), so that the events of its own writes (spec first, then
// status) find nothing left to do. An object learned from a write or a
// read rather than an event (a provisioned volume's create) is tracked and
// queued like one from an event. A failed write leaves the caches as they
// were; after a Conflict the object is read again, so that the retry does
// not resend a stale version. Objects that cannot be bound because they are malformed (a
// volume without capacity, a negative size, an unknown access mode, a label
// selector that does not parse) get a Warning event naming the object and
// the problem; the Binder keeps serving every other object.
//
// Events go to the configured record.EventRecorder, logs to the logger of
// the context (klog.FromContext) with structured keys, and Prometheus
// metrics to the configured Registerer. There is no package-level state.
package binder
