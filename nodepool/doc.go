// Package nodepool binds waiting pods to nodes for orchestrators that give
// every pod its own machine (for example a virtual-kubelet provider that
// boots one cloud instance per pod), boots nodes for pods that have none,
// stops idle nodes, and keeps standby pools of warm nodes.
//
// A Scaler computes one pool-loop round: Compute takes the nodes and pods of
// the cluster and returns a Round with the pod→node bindings, the node specs
// to boot, the nodes to stop, the node updates to write and the pods left
// without a node and why. Compute never modifies its arguments and writes
// nothing: the caller applies the Round (NodeUpdate.Apply or MergePatch for
// the binding writes). A binding is recorded in the node's BoundPodAnnotation,
// so the decision survives a restart; a binding to a pod that no longer waits
// is cleared.
//
// A pod's requirements are its node selector and required node affinity,
// evaluated with component-helpers' nodeaffinity semantics over node labels:
// instance type (node.kubernetes.io/instance-type), zone and region (the
// zones package's keys), capacity type (spot or on-demand, under
// Config.CapacityTypeKey) and the configured extra keys. A pod that names no
// capacity type is an on-demand pod; a pod that does not name an extra key
// only takes nodes without that label (a pod that asks for no GPU does not
// take a GPU node); a pod that names no zone may go to any zone.
//
// The matching is a maximum matching: as many waiting pods as possible get an
// existing node before any node is booted. Nodes are grouped by the values of
// the label keys that matter and pods by identical requirements, and the
// matching is a maximum flow (Dinic's algorithm, Hopcroft–Karp on unit
// capacities) over pod classes × node groups, so a round costs O(P + N) plus
// a small graph; pods that pin a label value or a node name find their
// groups through an index instead of trying every group. Among the maximum matchings, the one leaving
// the most nodes for the standby pools is chosen. Ties are broken by name.
//
// Standby specs keep that many unbound nodes of their shape; a pod may take
// a standby node, which is refilled in the same round; duplicate specs add
// up. A BootLimiter remembers shapes the cloud could not provide and boots
// nothing for them for a while (3 minutes by default); their pods are
// reported in Round.Unbound with ErrShapeUnavailable. At most
// Config.MaxBootsPerRound nodes are booted per round, picked round-robin
// across shapes.
//
// A Dispenser serves the per-pod dispatch path: Request answers with the
// pod's bound node (marking it claimed), "no binding yet" or "retry"; Return
// puts an unused node back or sends a used one to cleanup. Both honour ctx
// and start no goroutines.
//
// It is for authors of orchestrators that give every pod a machine of its
// own; it is independent of the binder and imports only zones.
package nodepool
