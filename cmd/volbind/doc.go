// Command volbind runs the volbind Binder.
//
//	volbind simulate [flags]     bind a generated (or -f loaded) cluster on the embedded in-memory API and report
//	volbind controller [flags]   run the Binder against a real cluster, with leader election
//
// "volbind simulate" builds a cluster in the in-memory API server of
// binder/bindertest (by default 3 zones, 10,000 PersistentVolumes and
// 10,000 claims over 3 storage classes, some pre-bound, some that nothing
// can satisfy; or the objects of Kubernetes manifests given with -f), runs
// the real Binder on it until it has nothing left to do, checks that no
// volume is bound to two claims and no claim to a missing volume, and
// prints a report: claims bound and pending with the Binder's reasons, wall
// time, bindings per second, API writes per binding, conflicts, and the
// p50/p99 time from a claim's creation to Bound, and every object left
// unbound with its reason. Pods without a node (in the manifests, or
// StatefulSet-shaped pods generated with -pods over -nodes nodes with
// hostname-local volumes) are scheduled onto the nodes through
// binder/scheduling, as kube-scheduler's VolumeBinding plugin does, so
// that WaitForFirstConsumer claims bind too; the report counts the pods
// scheduled and pending, with kube-scheduler's reasons. -o json and -o
// yaml print the report as JSON or
// YAML; -dump-objects writes the final objects. Manifests decode strictly
// and are validated as kube-apiserver validates them. Exit status: 0 when
// the Binder had nothing left to do and the invariants hold, 1 when an
// invariant broke or the input is invalid, 3 when -deadline passed with
// work left, 130 when interrupted.
//
// "volbind controller" connects to a cluster with client-go (--kubeconfig,
// else $KUBECONFIG, else ~/.kube/config, else the in-cluster configuration;
// --master overrides the server), feeds the Binder from
// informers and runs it until SIGINT or SIGTERM, while it holds a
// coordination.k8s.io Lease (leader election, on by default, so that
// several replicas can run for high availability). Its flags and logs are
// kube-controller-manager's (double-dash, --logging-format=text|json, -v,
// --vmodule, --version). It serves over HTTPS on
// --bind-address:--secure-port (10260; a self-signed certificate when none
// is given) Prometheus metrics on /metrics, to callers the API server
// authenticates (TokenReview) and authorizes (SubjectAccessReview), and
// /healthz, /livez and /readyz to anyone (--authorization-always-allow-paths).
// examples/controller deploys it with the RBAC it needs. The Binder does the work of the
// PersistentVolume binder of kube-controller-manager: disable that one
// (kube-controller-manager --controllers=*,-persistentvolume-binder-controller)
// so that the two do not compete; that also stops its in-tree dynamic
// provisioning and volume reclaim. The program scrubs released Recycle
// volumes with a recycler pod; in-tree provisioning and Delete need plugins
// that only an embedder can register (binder.Config.Provisioning and
// Reclaim); CSI drivers' external-provisioner does both for CSI volumes.
//
// Run "volbind <command> --help" for the flags of a command.
package main
