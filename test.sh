#!/usr/bin/env bash
# The test command of the README: every package, with the race detector.
# Fuzz targets run their seed corpus as ordinary tests.
set -euo pipefail
cd "$(dirname "$0")"
exec go test -race -count=1 -timeout 20m "$@" ./...
