// Package e2e holds volbind's end-to-end tests: they run the Binder (wired
// through client-go, in-process) and the "volbind controller" program
// against a real etcd and kube-apiserver started by hack/cluster-up.sh, and
// assert on objects read back from that API server. The tests are behind
// the build tag e2e, so that "go test ./..." does not run them:
//
//	go test -race -tags e2e -count=1 -timeout 20m ./e2e/    starts (and stops) its own cluster, as CI runs it
//	.ci/e2e                                                  builds, starts a cluster, runs the suite, stops it
//
// With VOLBIND_E2E_KUBECONFIG set to the kubeconfig in a cluster directory
// made by hack/cluster-up.sh, the tests use that cluster instead of starting
// one. The tests run one after another on the shared cluster; each works in
// its own namespace and StorageClass name and deletes its volumes and claims
// when it ends. The cluster must not run another PV binder.
package e2e
