// Package provisioner is volbind's test CSI provisioner: a Provisioner for
// sigs.k8s.io/sig-storage-lib-external-provisioner, the library every CSI
// driver's external-provisioner is built on, run with the library's own
// controller (controller.NewProvisionController) against a real API
// server. It makes CSI volumes of a test driver name without any storage
// behind them, with the topology of the selected node, deletes them when
// the library asks, and lets a test fail, hold or count each call.
//
// It is volbind's proof that its binder keeps the contract between the PV
// binder and an external provisioner (annotations, finalizers, phases and
// events) as kube-controller-manager does. It lives in a Go module of its
// own, so that the library never enters volbind's go.mod. The end-to-end
// tests of this module (build tag e2e) run it beside "volbind controller"
// and beside kube-controller-manager and compare what both leave on the
// API server; cmd/testprovisioner runs it as a program for
// hack/bench-provisioner.sh.
package provisioner
