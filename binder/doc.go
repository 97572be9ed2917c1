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
// [Binder.Run] drives two workqueues (client-go's rate-limiting and
// delaying layers over an inner queue of the Binder's own that lets go of
// its maps after a burst), one of claims and one of volumes, with a configurable number of workers each (a key is never
// processed by two workers at once), a rate-limited requeue for syncs that
// fail (conflicts are retried from fresh state, never re-sent) and a
// jittered periodic resync of every object. [Binder.SyncClaim] and
// [Binder.SyncVolume] run one synchronous step, the equivalent of
// Kubernetes' syncClaim and syncVolume, and [Binder.WaitForQuiescence]
// waits until no work is queued or in flight.
//
// # How it works
//
// The Binder composes four parts, each an unexported type with its own
// lock and a stated invariant:
//
//   - the work tracker (tracker.go) owns the claim and volume queues, their
//     resyncs, the retries of failed syncs and the accounting
//     WaitForQuiescence reads. Every producer of work goes through it: the
//     event handlers, the Binder's own writes, the resyncs, retries and
//     held volumes. It also knows which claims wait in the claim queue,
//     which is what AvailableDelay's holds (available.go) ask before
//     marking a volume Available.
//   - the reservations (reservations.go) keep two claim workers from
//     binding one volume: a claim searches the volume index without a
//     shared lock, on a snapshot of the reserved volumes, and reserves what
//     it found with check-and-retry. A reservation outlives its sync as
//     the claim's hold when the volume's claimRef write may have landed
//     unseen (claimed.go).
//   - the store (store.go) holds the latest version of every volume and
//     claim, from events and from the answers to the Binder's writes, and
//     the volume index built from the same versions.
//   - the write layer (writes.go) sends every write through the API and
//     keeps its answer in the store, so that the write's own event finds
//     nothing left to do.
//
// One path of a claim: an event handler stores the claim and hands its key
// to the tracker; a claim worker takes it, locks the claim's key (one
// mutex per key, operations.Locks), finds the best volume in the index,
// reserves it and locks the volume's key, and writes the four steps of the
// binding through the write layer; the reservation and the locks end with
// the sync, and the tracker forgets the key unless it was queued again.
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
// A volume whose claimRef names a claim by UID is that claim's before any
// search: the claim's sync finishes that binding before it looks for
// another volume or writes anything else for the claim (a default class, a
// provisioning, a Pending status), and no other claim worker may reserve
// the volume. When the write of the claimRef fails in a way that may
// still have been carried out (a timeout), the volume stays reserved for
// the claim until its next sync has found out, from the cache or by
// reading the volume, whether the volume points at it. A binding the
// Binder began (pv.kubernetes.io/bound-by-controller on the volume)
// completes only if the volume still satisfies the claim (class, access
// modes, volume mode, capacity, VolumeAttributesClass, selector), and is
// rolled back otherwise; Kubernetes completes it regardless. A volume a
// user pre-bound keeps Kubernetes' rule: its claim takes it whatever its
// class and labels.
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
// empty class and no matching volume gets a FailedBinding event. With
// [Config.Pods] set (NewForClientset sets it from a trimmed pod informer
// indexed by claim, see [TrimPod] and [AddPodClaimIndex]), such a claim's
// event names the unscheduled pods that use it (WaitForPodScheduled).
//
// # Reclaim and provisioning
//
// A released volume's reclaim policy decides what happens to it. Retain
// keeps it Released and untouched. With [Config.Reclaim] set, Delete runs
// the [Deleter] registered for the volume's provisioner
// (pv.kubernetes.io/provisioned-by) or volume plugin ([VolumePluginName];
// a [DeleterFactory] first makes a per-volume Deleter), removes the
// kubernetes.io/pv-controller finalizer and deletes the volume, also when
// the volume is already being deleted (a user deleted it while it was
// bound: the finalizer held it until now). Volumes left to someone else
// stay Released without error or event: those of an external provisioner
// (a name without a Deleter and without the "kubernetes.io/" prefix),
// statically provisioned CSI volumes without a Deleter of their driver
// (the CSI external provisioner deletes them) and volumes migrated to CSI.
// Only a volume that no Deleter and no external provisioner can delete
// becomes Failed. Recycle scrubs the volume with a [VolumeRecycler] (a
// *recycler.Recycler) and makes it Available again, unless pods that have
// not terminated still use its deleted claim ([Config.Pods]): then a Normal
// VolumeFailedRecycle event names them and the next sync tries again.
// Failures make the volume Failed with the error's message and an event
// (VolumeFailedDelete, VolumeFailedRecycle). Without Config.Reclaim, Delete
// and Recycle volumes stay Released for another controller; an unknown
// policy makes the volume Failed.
//
// # Finalizers and CSI migration
//
// Like Kubernetes' PV controller, the Binder keeps the finalizer
// kubernetes.io/pv-controller ([FinalizerPVController]) on the dynamically
// provisioned volumes whose storage it deletes, so that a volume object is
// never removed before its storage: it puts it on the volumes it
// provisions with the Delete policy, adds it at the volume sync to such
// volumes that lack it (made by an older controller), removes it when the
// policy becomes Retain or Recycle, and removes it right after the
// storage is deleted. It also removes the external provisioner's finalizer
// from those volumes (a CSI migration rolled back). "Whose storage it
// deletes" is Kubernetes' in-tree test (a provisioner name starting with
// "kubernetes.io/") extended to the names a Deleter or Provisioner is
// registered under, and requires Config.Reclaim: without it the Binder
// deletes nothing and adds no finalizer.
//
// [Config.CSIMigration] (by default k8s.io/csi-translation-lib's plugins,
// all migrated as in Kubernetes v1.37) says which in-tree plugins moved to
// a CSI driver. A claim of such a plugin's class is handed to the CSI
// driver's external provisioner (the provisioner annotations name the
// driver; event ExternalProvisioning), and claims and volumes whose
// provisioner annotation names a migrated plugin get
// pv.kubernetes.io/migrated-to (removed again when migration is turned off);
// their volumes lose kubernetes.io/pv-controller and are left to the CSI
// driver. A claim that already carries the GA provisioner annotation is
// never written again just to add the beta one.
//
// With [Config.Provisioning] set, a claim of a StorageClass that no volume
// matches is provisioned by the [Provisioner] registered under the class's
// provisioner name, or handed to an external provisioner through the
// volume.kubernetes.io/storage-provisioner annotations; see
// [ProvisioningConfig]. The new volume, "pvc-<claim UID>", is sized by
// zones.RoundUp, placed by zones.SelectZones (class parameters,
// allowedTopologies, the selected node) for a [ZonalProvisioner] and
// labelled by zones.LabelVolume; it is created pre-bound to the claim and
// bound by the claim's next sync. While the operation runs, the claim binds
// no other volume (Kubernetes would, and then unbind the provisioned one).
// Events: ProvisioningSucceeded,
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
// and a recycler pod left running is adopted. Run cancels the running
// operations when it returns and waits for them.
//
// A Deleter runs at most once per volume UID. Once it has deleted the
// storage, the Binder remembers it and records it in the volume's
// [AnnOperation] mark ("done"), in the write that removes
// kubernetes.io/pv-controller (or, for a volume without that finalizer,
// when the volume object cannot be deleted at once); whatever fails next
// (a read, that write, the deletion of the object) and across a restart
// once the mark is written, later runs only finish deleting the object.
// Kubernetes calls the Deleter again after any of those failures. Only a
// Binder that stops between the Deleter's return and that write calls it
// again after a restart, as nothing says the storage is gone: Deleters
// must still accept storage that is already deleted.
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
// status) find nothing left to do. An event that arrives while the Binder's
// update of the same object is in flight (before its answer) stores its
// version but queues nothing yet: when the update answers, an event that
// was its own is settled, and anything else (a failed update, another
// version) queues the object as the event would have. When the event of a write arrives, the
// informer's copy of that version replaces the write's answer in the
// caches, so that each object is held once. An object learned from a write or a
// read rather than an event (a provisioned volume's create, a claim
// re-created under its name and read after a conflict) is tracked and
// queued like one from an event, and a newer version of a known object
// learned from a read is synced when its own event arrives. Events are
// kept apart by UID: the delete event of an object that was deleted and
// re-created under its name never removes the new object, nor keeps the
// new object's own events out; it has the key read at its next sync, and
// again once per resync period while the read finds the new object and no
// event of it comes, so that a new object deleted again unseen (a relist
// reports only the first deletion; an informer whose reordered watch lost
// the key drops the new object's delete) is forgotten rather than kept for
// ever. A failed write leaves the caches as they
// were; after a Conflict the object is read again, so that the retry does
// not resend a stale version. [Config.Observer] (a [SyncObserver]) is told
// which version of each object the Binder acted on, so that a test can
// check that every object was synced at its latest version. Objects that cannot be bound because they are malformed (a
// volume without capacity, a negative size, an unknown access mode, a label
// selector that does not parse) get a Warning event naming the object and
// the problem; the Binder keeps serving every other object.
//
// # Texts
//
// Every status message and event message the Binder emits, with
// Kubernetes v1.37.2's beside it ("same" when equal; %q, %s and %v are
// filled in as Kubernetes does). Messages made of an error are the
// error's text, like Kubernetes'.
//
//	Reason (type) / status                  Kubernetes volbind text
//	FailedBinding (Normal)                  same       no persistent volumes available for this claim and no
//	                                                   storage class is set
//	FailedBinding (Warning)                 same       volume %q already bound to a different claim.
//	VolumeMismatch (Warning)                same       Cannot bind to requested volume %q: %s
//	VolumeMismatch (Warning, volume/claim)  same       Cannot bind PersistentVolume to requested
//	                                                   PersistentVolumeClaim %q due to incompatible volumeMode. /
//	                                                   Cannot bind PersistentVolume %q to requested
//	                                                   PersistentVolumeClaim due to incompatible volumeMode.
//	ClaimLost (Warning), claim Lost         same       Bound claim has lost reference to PersistentVolume. Data on
//	                                                   the volume is lost! / Bound claim has lost its
//	                                                   PersistentVolume. Data on the volume is lost!
//	ClaimMisbound (Warning), claim Lost     same       Two claims are bound to the same volume, this one is bound
//	                                                   incorrectly
//	WaitForFirstConsumer (Normal)           same       waiting for first consumer to be created before binding
//	WaitForPodScheduled (Normal)            same       waiting for pod %s to be scheduled / waiting for pods %s to
//	                                                   be scheduled
//	VolumeUnknownReclaimPolicy (Warning),   same       Volume has unrecognized PersistentVolumeReclaimPolicy
//	volume Failed
//	VolumeFailedDelete (Warning),           same       error getting deleter volume plugin for volume %q: no volume
//	volume Failed                                      plugin matched / no volume plugin matched name: %s /
//	                                                   failed to create deleter for volume %q: %v / the Deleter's
//	                                                   error / persistent volume controller can't update
//	                                                   finalizer: %v
//	VolumeDelete (Normal)                   same       the Deleter's ErrDeletedVolumeInUse error
//	VolumeFailedRecycle (Warning),                     No recycler plugin found for the volume! / Recycle failed: %s same
//	volume Failed
//	VolumeFailedRecycle (Normal)            same       Volume is used by pods: %s
//	VolumeRecycled (Normal)                 same       Volume recycled
//	ProvisioningFailed (Warning)            same       storageclass.storage.k8s.io %q not found / no volume plugin
//	                                                   matched name: %s / Mount options are not supported by the
//	                                                   provisioner but StorageClass %q has mount options %v /
//	                                                   Failed to get target node: %v / Failed to provision volume
//	                                                   with StorageClass %q: %v / Error creating provisioned PV
//	                                                   object for claim %s: %v. Deleting the volume. / error
//	                                                   getting CSI name for In tree plugin %s: %v / Error saving
//	                                                   claim: %v
//	ProvisioningFailed (Warning)            none (1)   volume %q already exists and is not bound to claim %s
//	ProvisioningCleanupFailed (Warning)     same       Error cleaning provisioned volume for claim %s: %v. Please
//	                                                   delete manually. (%v: no deletable volume plugin matched /
//	                                                   failed to create deleter for volume %q: %v / the
//	                                                   Deleter's error)
//	ProvisioningSucceeded (Normal)          same       Successfully provisioned volume %s using %s (also when the
//	                                                   volume's create answered AlreadyExists)
//	ExternalProvisioning (Normal)           same       Waiting for a volume to be created either by the external
//	                                                   provisioner '%s' or manually by the system administrator. If
//	                                                   volume creation is delayed, please verify that the
//	                                                   provisioner is running and correctly registered.
//	InvalidVolume, InvalidClaim (Warning)   none (2)   <kind> <key>: <problem>
//
// Deliberate differences: (1) Kubernetes silently skips provisioning when
// a volume named "pvc-<claim UID>" exists, whoever it is bound to; the
// Binder reports a volume of that name bound elsewhere instead of leaving
// the claim Pending without a word. (2) Kubernetes has no validation of
// its own (the API server's is assumed); the Binder names the malformed
// object instead of failing on it. (3) When every create of a provisioned
// volume's object failed, Kubernetes deletes the storage at once; the
// Binder first reads the object, and when the read fails too (the object
// may exist, so a claim may bind it) it keeps the storage, records no
// event and provisions again later under the same name. (4) After the
// storage of a volume that could not be saved is deleted, Kubernetes
// v1.37.2 reads the volume object to remove its finalizer, gets NotFound
// (the object was never created), deletes the storage again on each retry
// and ends with ProvisioningCleanupFailed ("persistentvolumes ... not
// found. Please delete manually."); the Binder stops after the first
// successful Delete and records no cleanup failure, since nothing is left
// to delete by hand.
//
// The scheduler side (package binder/scheduling and the scheduler module's
// plugin) reports kube-scheduler v1.37.2's texts, compared with the
// in-tree constants by the scheduler module's tests:
//
//	Answer (code UnschedulableAndUnresolvable)           kube-scheduler's text
//	VolumeNodeAffinityConflict                           node(s) didn't match PersistentVolume's node affinity
//	NoMatchingVolume, CannotProvision,                   node(s) didn't find available persistent volumes to bind
//	SelectedNodeConflict
//	NotEnoughSpace                                       node(s) did not have enough free storage
//	VolumeNotExist                                       node(s) unavailable due to one or more pvc(s) bound to
//	                                                     non-existent pv(s)
//	UnboundImmediateClaim (pod)                          pod has unbound immediate PersistentVolumeClaims
//	ClaimMissing (pod)                                   persistentvolumeclaim %q not found / waiting for ephemeral
//	                                                     volume controller to create the persistentvolumeclaim %q
//	ClaimLost (pod)                                      persistentvolumeclaim %q bound to non-existent
//	                                                     persistentvolume %q
//	ClaimDeleting (pod)                                  persistentvolumeclaim %q is being deleted
//	ClaimNotOwned (pod)                                  PVC %s/%s was not created for pod %s/%s (pod is not owner)
//	VolumeZoneConflict (Config.VolumeZone)               node(s) had no available volume zone (VolumeZone plugin)
//	VolumeMissing (pod, Config.VolumeZone)               persistentvolume %q not found (VolumeZone plugin)
//	ClassZoneConflict (Config.ClassZoneParameters)       none: node(s) not in the zones allowed by the
//	                                                     StorageClass's zone or zones parameter
//
// Deliberate differences: ClassZoneConflict is volbind's own:
// kube-scheduler does not look at class parameters, so the check is off by
// default and has a text no Kubernetes reason has. An error of Check or
// Find (code Error) is a wrapped error naming the pod, claim or class and
// matching the package's sentinel errors under errors.Is, not
// kube-scheduler's internal text: kube-scheduler only logs such errors,
// while embedders branch on them. docs/scheduling.md has the details.
//
// # Not managed
//
// What the Binder leaves to other components, and why:
//
//   - the kubernetes.io/pv-protection and kubernetes.io/pvc-protection
//     finalizers: kube-controller-manager's PV- and PVC-protection
//     controllers own them, not its PV controller;
//   - the RecyclerPod events ("Recycler pod: ...") that Kubernetes relays
//     from its recycler pod: the recycler package returns the pod's
//     outcome as an error, which becomes the VolumeFailedRecycle message;
//   - Kubernetes' refusal of a claim with a data source by a non-CSI
//     in-tree plugin ("plugin %q is not a CSI plugin. Only CSI plugin can
//     provision a claim with a datasource"): a Provisioner gets the claim
//     and decides whether it supports its dataSource;
//   - Kubernetes' "Failed to create provisioner" step: a Provisioner has no
//     separate creation step; its Provision error is reported as "Failed
//     to provision volume with StorageClass ...".
//
// Events go to the configured record.EventRecorder, logs to the logger of
// the context (klog.FromContext), or [Config.Logger] where there is no
// context (the event handlers), with structured keys, and Prometheus
// metrics to the configured Registerer (nil: no metrics). [Config.KubeMetrics]
// adds kube-controller-manager's PV-controller metrics under its names
// (pv_collector_*, volume_operation_*, workqueue_* of the queues "claims" and
// "volumes", ...), for a controller that replaces it. There is no
// package-level state.
//
// It is for platform and storage engineers who bind volumes in a controller
// of their own, instead of kube-controller-manager's PersistentVolume
// binder; "volbind controller" is such a controller, and
// binder/bindertest tests one without a cluster.
package binder
