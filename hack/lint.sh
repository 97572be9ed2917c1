#!/usr/bin/env bash
# Runs golangci-lint (configuration: .golangci.yml) on the root module and on
# scheduler/, which is a module of its own. golangci-lint's version is the
# one hack/tools/go.mod requires, so the library's go.mod stays free of it;
# the binary is built from the Go module proxy the first time and cached
# in ${VOLBIND_CACHE:-~/.cache/volbind}.
#
#   hack/lint.sh              both modules
#   hack/lint.sh ./binder/... only these packages of the root module
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

cache=${VOLBIND_CACHE:-$HOME/.cache/volbind}
version=$(cd hack/tools && go list -m -f '{{.Version}}' github.com/golangci/golangci-lint/v2)
lint=$cache/bin/golangci-lint-$version
if [ ! -x "$lint" ]; then
	echo "lint: building golangci-lint $version (once; cached in $cache)" >&2
	mkdir -p "$cache/bin"
	(cd hack/tools && go build -o "$lint.tmp" github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
	mv "$lint.tmp" "$lint"
fi

if [ $# -gt 0 ]; then
	exec "$lint" run --allow-parallel-runners "$@"
fi
"$lint" run --allow-parallel-runners ./...
(cd scheduler && "$lint" run --allow-parallel-runners --config "$root/.golangci.yml" ./...)
