#!/usr/bin/env bash
# The test command of the README: every package, with the race detector.
# Fuzz targets run their seed corpus as ordinary tests. The scheduler/
# module (its own go.mod, on k8s.io/kubernetes) is not entered by ./...
# and is tested after the library, its differential test at -short size;
# so is e2e/provisioner (its own go.mod, on the external-provisioner
# library), whose end-to-end suite .ci/e2e-provisioner runs.
set -euo pipefail
cd "$(dirname "$0")"
go test -race -count=1 -timeout 20m "$@" ./...
(cd scheduler && go test -race -count=1 -short -timeout 20m "$@" ./...)
cd e2e/provisioner
go test -race -count=1 -timeout 20m "$@" ./...
