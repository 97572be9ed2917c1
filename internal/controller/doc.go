// Package controller is "volbind controller": it runs the Binder against
// a real cluster. It connects with client-go (--kubeconfig, else
// $KUBECONFIG, else ~/.kube/config, else the in-cluster configuration;
// --master overrides the server), feeds the Binder from informers and runs
// it until SIGINT or SIGTERM, while it holds a coordination.k8s.io Lease
// (leader election, on by default, so that several replicas can run for
// high availability; fence.go stops writes once the Lease may be lost).
// Its flags and logs are kube-controller-manager's (double-dash,
// --logging-format=text|json, -v, --vmodule, --version).
//
// It serves over HTTPS on --bind-address:--secure-port (10260; a
// self-signed certificate when none is given) Prometheus metrics on
// /metrics, to callers the API server authenticates (TokenReview) and
// authorizes (SubjectAccessReview), and /healthz, /livez and /readyz to
// anyone (--authorization-always-allow-paths); --profiling adds
// /debug/pprof/ behind the same checks. examples/controller deploys it
// with the RBAC it needs.
//
// The Binder does the work of the PersistentVolume binder of
// kube-controller-manager: disable that one
// (kube-controller-manager --controllers=*,-persistentvolume-binder-controller)
// so that the two do not compete; that also stops its in-tree dynamic
// provisioning and volume reclaim. As kube-controller-manager, the program
// hands the claims of classes with an external provisioner to it
// (--enable-dynamic-provisioning), scrubs released Recycle volumes with a
// recycler pod and deletes released host-path volumes under /tmp/
// (hostpath.go); other in-tree provisioning and deletion need plugins that
// only an embedder can register (binder.Config.Provisioning and Reclaim),
// and CSI drivers' external-provisioner does both for CSI volumes. The
// Binder exports kube-controller-manager's PV-controller metrics beside
// volbind's (binder.Config.KubeMetrics; docs/monitoring.md).
//
// How the pieces fit: Run parses the flags (flags.go) and calls
// runController (command.go), which builds the client, configures logging
// and serving (serving.go, debugging.go) and hands over to controllerMain
// (controller.go): it elects, and the leader syncs the informers and runs
// the Binder until the Lease is lost or ctx is done; then the events the
// Binder recorded are written before it returns (events.go).
//
// It is the volbind program's; embedders wire binder into their own
// controllers and may read this package as an example of that wiring.
package controller
