#!/usr/bin/env bash
# Builds (once, then cached) the binaries of a real control plane from the Go module proxy:
# etcd, kube-apiserver and kube-controller-manager. Prints the bin directory.
#
#   VOLBIND_CACHE   cache directory (default ~/.cache/volbind)
#   K8S_VERSION     k8s.io/kubernetes version (default v1.37.2)
#   ETCD_VERSION    go.etcd.io/etcd/server/v3 version (default v3.7.3)
set -euo pipefail

cache=${VOLBIND_CACHE:-$HOME/.cache/volbind}
k8s=${K8S_VERSION:-v1.37.2}
etcd=${ETCD_VERSION:-v3.7.3}
bin=$cache/bin/k8s-$k8s-etcd-$etcd
mkdir -p "$bin"

log() { echo "build-binaries: $*" >&2; }

# One build at a time per cache (e2e and benchmark scripts may start together).
exec 9>"$cache/build.lock"
flock 9

if [ ! -x "$bin/etcd" ]; then
	log "building etcd $etcd"
	mod=$cache/src/etcd-$etcd
	mkdir -p "$mod"
	(
		cd "$mod"
		[ -f go.mod ] || go mod init volbind.local/etcd-build >/dev/null 2>&1
		cat >main.go <<GO
package main

import _ "go.etcd.io/etcd/server/v3"
GO
		go get "go.etcd.io/etcd/server/v3@$etcd" >&2
		go mod tidy >&2
		go build -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3
		mv "$bin/etcd.tmp" "$bin/etcd"
	)
fi

if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kube-controller-manager" ]; then
	log "building kube-apiserver and kube-controller-manager $k8s (cold: several minutes)"
	mod=$cache/src/kubernetes-$k8s
	mkdir -p "$mod"
	(
		cd "$mod"
		gomod=$(go mod download -json "k8s.io/kubernetes@$k8s" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
		staging=${k8s/v1./v0.}
		{
			echo "module volbind.local/kubernetes-build"
			echo
			echo "go $(go env GOVERSION | sed 's/^go//; s/\.[0-9]*$//')"
			echo
			echo "require k8s.io/kubernetes $k8s"
			echo
			echo "replace ("
			sed -n 's#^\s*\(k8s.io/[^ ]*\) => ./staging/.*#\t\1 => \1 '"$staging"'#p' "$gomod"
			echo ")"
		} >go.mod
		cat >tools.go <<GO
package main

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)
GO
		go mod tidy >&2
		ldflags="-X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1"
		ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$(echo "$k8s" | cut -d. -f2)"
		ldflags="$ldflags -X k8s.io/component-base/version.gitTreeState=clean"
		go build -ldflags "$ldflags" -o "$bin/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
		mv "$bin/kube-apiserver.tmp" "$bin/kube-apiserver"
		go build -ldflags "$ldflags" -o "$bin/kube-controller-manager.tmp" k8s.io/kubernetes/cmd/kube-controller-manager
		mv "$bin/kube-controller-manager.tmp" "$bin/kube-controller-manager"
	)
fi
echo "$bin"
