// Package simulate is "volbind simulate": it builds a cluster in the
// in-memory API server of binder/bindertest (by default 3 zones, 10,000
// PersistentVolumes and 10,000 claims over 3 storage classes, some
// pre-bound, some that nothing can satisfy; or the objects of Kubernetes
// manifests given with -f, read by internal/manifest), runs the real
// Binder on it until it has nothing left to do, checks that no volume is
// bound to two claims and no claim to a missing volume, and prints a
// report: claims bound and pending with the Binder's reasons, wall time,
// bindings per second, API writes per binding, conflicts, the p50/p99 time
// from a claim's creation to Bound, and every object left unbound with its
// reason.
//
// Pods without a node (in the manifests, or StatefulSet-shaped pods
// generated with -pods over -nodes nodes with hostname-local volumes) are
// scheduled onto the nodes through binder/scheduling, as kube-scheduler's
// VolumeBinding plugin does, so that WaitForFirstConsumer claims bind too;
// the report counts the pods scheduled and pending, with kube-scheduler's
// reasons. -o json and -o yaml print the report as JSON or YAML;
// -dump-objects writes the final objects.
//
// How the pieces fit: Run parses the flags (flags.go) and calls simulate,
// which loads or generates the objects (scenario.go), hands them to
// runSimulation (simrun.go) to seed the API, run the Binder and the pod
// scheduler (schedule.go) and watch the claims bind (bindclock.go), and
// prints the report (report.go). Exit statuses are those of exitCodes,
// returned as cli.ExitError: 0 when the Binder had nothing left to do and
// the invariants hold, 1 when an invariant broke or the input is invalid,
// 3 when -deadline passed with work left, 130 when interrupted.
//
// It is the volbind program's, for people trying the Binder out and for
// measuring it; embedders use binder and binder/bindertest directly.
package simulate
