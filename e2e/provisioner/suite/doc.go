// Package suite holds the end-to-end tests of volbind's binder with the
// real external-provisioner library (package provisioner): each case runs
// against "volbind controller" on one fresh cluster and against
// kube-controller-manager's PV binder on another (hack/cluster-up.sh
// --with-kcm), restarts the binder in its middle, asserts on objects read
// back from the API server, and the final claims, volumes and events of
// both binders are compared field by field. The tests are behind the build
// tag e2e:
//
//	go test -race -tags e2e -count=1 -timeout 20m ./suite/    starts (and stops) both clusters, as CI runs it
//	VOLBIND_E2E_BINDERS=volbind go test -tags e2e ...         only the volbind cluster (no comparison)
//
// VOLBIND_E2E_KUBECONFIG and VOLBIND_E2E_KCM_KUBECONFIG name clusters made
// by hack/cluster-up.sh (the second with --with-kcm) to use instead of
// starting them; VOLBIND_E2E_COMPARISON=FILE writes the comparison table
// (Markdown) to FILE.
package suite
