// Package explaincmd is "volbind explain": why a PersistentVolumeClaim is
// not bound, volume by volume, or why a pod's volumes keep it from being
// scheduled, node by node. It reads a cluster (the kubeconfig as `volbind
// controller` reads it, plus kubectl's --context and --namespace; one LIST
// per kind, never a write or a per-object GET) or manifests (-f, decoded as
// `volbind simulate` decodes them, with CSIDrivers and
// CSIStorageCapacities kept), hands the objects to internal/explain and
// prints its answer as text, JSON or YAML.
//
// The exit status says the verdict: 0 when the claim is bound, would bind
// now or will be provisioned (a pod: scheduled, or fits on some node), 1
// when it cannot, 2 when there is nothing to explain (bad flags, manifests
// that do not load, an object that is not there, a cluster that cannot be
// read).
//
// Linked or installed as kubectl-volbind, the program is a kubectl plugin:
// `kubectl volbind explain pvc NAME` then works, and its texts name it so.
package explaincmd
