// Package zones knows where cloud volumes live: which zones a
// PersistentVolume can be used from, whether a node can use it, which zones a
// new volume should be created in, how a new volume is labelled with its
// placement, and how a requested size maps to a provider's allocation unit.
//
// Zone and region labels use the GA keys (topology.kubernetes.io/zone and
// /region) and the deprecated beta keys (failure-domain.beta.kubernetes.io/
// zone and /region). Both are read; the GA keys are written, and the beta
// keys too when asked. A multi-zone label value lists zones separated by "__"
// ("us-east-1a__us-east-1b"): ParseZones turns it into a set, FormatZones
// turns a set back into a sorted, stable value, and VolumeZones combines a
// volume's labels with its spec.nodeAffinity.
//
// Matches decides whether a node satisfies a volume's placement: its zone and
// region labels (as Kubernetes' VolumeZone scheduler plugin) and its full
// spec.nodeAffinity (as component-helpers' CheckNodeAffinity). A Matcher
// does the same but parses each volume once per resourceVersion, for hot
// paths that try one volume against many nodes or many volumes against one
// node; Forget drops deleted volumes.
//
// ChooseZones and SelectZones pick zones for a new volume with the same
// results as k8s.io/cloud-provider/volume/helpers ChooseZonesForVolume and
// SelectZonesForVolume: StatefulSet claims ("<claim>-<set>-<ordinal>") spread
// by ordinal, other names by hash, honouring a StorageClass's zone/zones
// parameters, its allowedTopologies and the selected node of delayed binding.
// LabelVolume then writes the chosen Placement onto the volume as labels and
// node affinity, as the PersistentVolumeLabel admission plugin did, refusing
// placement already on the volume that disagrees (ConflictError). RoundUp
// converts a requested size to whole allocation units (GiB by default; MiB,
// GB and others available as Unit values) and returns the Allocation really
// made, to be reported as the volume's capacity.
//
// Errors wrap the package's sentinel errors (ErrInvalidZones, ErrConflict,
// ErrNoZones, ...) for errors.Is and name the value or object at fault.
//
// Everything here is a pure function of its arguments, except Matcher, which
// is safe for concurrent use. No function modifies its arguments.
//
// It is for authors of provisioners, schedulers and controllers that place
// cloud volumes by zone and region; binder, binder/scheduling and nodepool
// use it.
package zones
