// Package explain answers "why is my PersistentVolumeClaim Pending?" and
// "why does my pod not schedule?" with the rules volbind and Kubernetes
// bind volumes by. It is the logic of `volbind explain` (internal/explaincmd),
// independent of the command line: it takes the cluster's objects as input
// (Objects, as read from the API server or from manifests) and never writes.
//
// New indexes the objects once. Claim explains one claim: its verdict
// (bound to a volume, would bind to one now, waits for its first consumer,
// will be provisioned, or nothing can satisfy it), why, and the volumes
// closest to fitting it, each with the first rule that rejects it (Rule,
// in the order storage class, bound elsewhere, being deleted, phase,
// access modes, volume mode, capacity, selector, VolumeAttributesClass,
// node affinity) and how far off it is; the others are counted by rule.
// Pod explains a pod node by node, with kube-scheduler's reason texts and
// the claim, volume or CSIStorageCapacity that decided each.
//
// The explanations never disagree with what happens, because they are
// made by the same code: the verdict of a claim comes from
// internal/pvindex, the index the Binder (package binder) binds with,
// followed through the Binder's claim sync; the verdict of each node comes
// from binder/scheduling's VolumeBinder.Find. The rule-by-rule reasons are
// computed beside them and checked against them (and against the Binder
// and Find themselves) by the randomized differential test of this
// package.
//
// Config says which controller is explained: the zero value is
// kube-controller-manager's PV controller; Config.UnmarkedCandidates is
// the Binder with binder.Config.AvailableDelay set. WriteClaimText and
// WritePodText write explanations for a terminal; the types carry JSON
// tags for machines.
package explain
