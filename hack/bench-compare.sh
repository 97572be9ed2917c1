#!/usr/bin/env bash
# Every benchmark against an earlier revision: hack/bench-compare.sh BASE
# builds the test binaries of every package that has benchmarks, in BASE (a
# git revision, checked out in a temporary worktree) and in this checkout as
# it is, and runs the benchmarks both have (same package path, same name)
# alternately: per round, each package's BASE binary and then its own. It
# prints benchstat's comparison (time, bytes and allocations per op) and
# leaves the raw results in $BENCH_OUT/base.txt and head.txt.
#
# This machine's speed moves by 10–15 % within minutes: read a time that
# benchstat marks as changed as a suspect, and run it again alone, A B A B,
# before calling it a regression. Bytes and allocations per op do not
# depend on the load.
#
# Environment: BENCH_ROUNDS (default 6: benchstat needs at least 4
# samples a side to call a difference significant), BENCH_TIME (-benchtime,
# default 0.25s), BENCH_SKIP (a regexp of benchmark names left out; default the ones
# with a command of their own in docs/performance-notes.md, and
# BenchmarkFindAnchor, whose 100,000-volume op takes minutes), BENCH_OUT
# (default a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: hack/bench-compare.sh BASE}
rounds=${BENCH_ROUNDS:-6}
benchtime=${BENCH_TIME:-0.25s}
skip=${BENCH_SKIP:-'^Benchmark(BinderBindAll|MemoryPerPair|FindAnchor)$'}
out=${BENCH_OUT:-$(mktemp -d)}
benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
mkdir -p "$out/base" "$out/head"

tree=$(git rev-parse --short HEAD)
git diff --quiet HEAD || tree="$tree+uncommitted changes"
wt=$(mktemp -d)
git worktree add --detach -f "$wt" "$base" >/dev/null
trap 'git worktree remove --force "$wt"; git worktree prune' EXIT

# build SIDE ROOT: one test binary per package of ROOT's modules (this
# one and scheduler/) that has a benchmark, named after its directory.
build() {
	local side=$1 root mod dir name
	root=$(cd "$2" && pwd)
	for mod in . scheduler; do
		[ -f "$root/$mod/go.mod" ] || continue
		for dir in $(cd "$root/$mod" && go list -f '{{.Dir}}' ./...); do
			grep -qs '^func Benchmark' "$dir"/*_test.go || continue
			name=${dir#"$root"/}
			[ "$dir" = "$root" ] && name=root
			(cd "$root/$mod" && go test -c -o "$out/$side/${name//\//_}.test" "$dir")
		done
	done
}
build base "$wt"
build head .

# common BIN: the benchmarks both builds of BIN have, as one regexp.
common() {
	comm -12 <("$out/base/$1" -test.list 'Benchmark.*' | grep '^Benchmark' | grep -Ev "$skip" | sort) \
		<("$out/head/$1" -test.list 'Benchmark.*' | grep '^Benchmark' | grep -Ev "$skip" | sort) | paste -sd'|'
}

: >"$out/base.txt"
: >"$out/head.txt"
for ((r = 1; r <= rounds; r++)); do
	for t in "$out"/base/*.test; do
		bin=$(basename "$t")
		[ -x "$out/head/$bin" ] || continue
		re=$(common "$bin")
		[ -n "$re" ] || continue
		for side in base head; do
			(cd "$out/$side" && "./$bin" -test.run '^$' -test.bench "^($re)\$" -test.benchtime "$benchtime" \
				-test.benchmem -test.timeout 0) | grep -E '^(Benchmark|pkg:|goos:|goarch:|cpu:)' >>"$out/$side.txt"
		done
	done
	echo "round $r of $rounds done" >&2
done

echo "base $base ($(git rev-parse --short "$base")), head $tree, $rounds rounds of -benchtime $benchtime, $(nproc) CPUs"
go run "$benchstat" "$out/base.txt" "$out/head.txt"
echo "raw results: $out/base.txt $out/head.txt"
