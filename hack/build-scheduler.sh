#!/usr/bin/env bash
# Builds (once per source change, then cached) volbind's kube-scheduler from
# the scheduler/ module: Kubernetes' kube-scheduler with the
# VolbindVolumeBinding plugin. Prints the binary's path.
#
#   hack/build-scheduler.sh            volbind's scheduler
#   hack/build-scheduler.sh --stock    the stock kube-scheduler of the same
#                                      k8s.io/kubernetes version and go.sum
#
# The cache key of volbind's scheduler is a hash of the Go version and of
# every non-test .go file, go.mod and go.sum of this repository's modules, so
# any change rebuilds it; older builds are removed.
#
#   VOLBIND_CACHE   cache directory (default ~/.cache/volbind)
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${VOLBIND_CACHE:-$HOME/.cache/volbind}
mkdir -p "$cache/bin"
log() { echo "build-scheduler: $*" >&2; }

k8s=$(sed -n 's#^\s*k8s.io/kubernetes \(v[^ ]*\).*#\1#p' scheduler/go.mod | head -1)
ldflags="-X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1"
ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$(echo "$k8s" | cut -d. -f2)"
ldflags="$ldflags -X k8s.io/component-base/version.gitTreeState=clean"

exec 9>"$cache/scheduler-build.lock"
flock 9

if [ "${1:-}" = "--stock" ]; then
	out=$cache/bin/kube-scheduler-stock-$k8s-$(sha256sum scheduler/go.sum | cut -c1-12)
	if [ ! -x "$out/kube-scheduler" ]; then
		log "building the stock kube-scheduler $k8s (cold: several minutes)"
		mkdir -p "$out"
		(cd scheduler && go build -ldflags "$ldflags" -o "$out/kube-scheduler.tmp" k8s.io/kubernetes/cmd/kube-scheduler)
		mv "$out/kube-scheduler.tmp" "$out/kube-scheduler"
	fi
	echo "$out/kube-scheduler"
	exit 0
fi

hash=$(
	{
		go env GOVERSION
		find . -path ./.git -prune -o \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -type f -print |
			grep -v '^./\(e2e\|examples\|hack\)/' | LC_ALL=C sort | xargs sha256sum
	} | sha256sum | cut -c1-16
)
out=$cache/bin/volbind-scheduler-$hash
if [ ! -x "$out/kube-scheduler" ]; then
	log "building volbind's kube-scheduler ($hash; cold: several minutes)"
	mkdir -p "$out"
	(cd scheduler && go build -ldflags "$ldflags" -o "$out/kube-scheduler.tmp" ./cmd/kube-scheduler)
	mv "$out/kube-scheduler.tmp" "$out/kube-scheduler"
	for old in "$cache"/bin/volbind-scheduler-*; do
		[ "$old" = "$out" ] || rm -rf "$old"
	done
fi
echo "$out/kube-scheduler"
