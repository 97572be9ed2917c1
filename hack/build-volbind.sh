#!/usr/bin/env bash
# Builds "volbind" as the image ships it (the Dockerfile runs this script):
# a static binary (CGO_ENABLED=0, no libc, runs on distroless/static),
# -trimpath (no build paths in it), with VERSION stamped where
# "volbind --version" reads it (k8s.io/component-base/version, as the
# components of kube-system are stamped).
#
#   hack/build-volbind.sh OUT VERSION     VERSION: a tag vMAJOR.MINOR.PATCH[-PRE][+BUILD]
#
# GOOS and GOARCH select the target as usual. GIT_COMMIT (default: git
# rev-parse HEAD when run in a checkout) and SOURCE_DATE_EPOCH (default: the
# commit's time, else 0) stamp --version=raw's gitCommit and buildDate, so
# that two builds of one commit are the same bytes.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: hack/build-volbind.sh OUT VERSION" >&2
	exit 2
fi
out=$1
version=$2
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
if ! [[ $version =~ $semver ]]; then
	echo "build-volbind: version \"$version\" is not a tag vMAJOR.MINOR.PATCH[-PRE][+BUILD]" >&2
	exit 2
fi
cd "$(dirname "$0")/.."

commit=${GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
fi
date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
tree=clean
if [ -n "$(git status --porcelain 2>/dev/null || true)" ]; then
	tree=dirty
fi

pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitTreeState=$tree -X $pkg.buildDate=$date"
if [ -n "$commit" ]; then
	ldflags="$ldflags -X $pkg.gitCommit=$commit"
fi
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out" ./cmd/volbind
