#!/usr/bin/env bash
# Long chaos runs: hack/chaos.sh N [FIRST] runs N seeds of internal/chaos
# (TestChaos) from seed FIRST (default 1000), split over parallel
# processes, and prints what a release note needs: the command and the tree
# it ran on, the seeds run, passed and failed, the time, how many seeds drew
# each class, worker count and event source, and the crash and fault
# coverage; then the violations by invariant and one replay line per
# failing seed.
#
# Environment: CHAOS_CLASSES (default "default"; "all" adds the classes that
# show known bugs, see internal/chaos/case.go), CHAOS_JOBS (parallel
# processes, default the number of CPUs), CHAOS_RACE=1 (race detector),
# CHAOS_SHRINK=1 (shrink each failing case; slow).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: hack/chaos.sh N [FIRST]}
first=${2:-1000}
classes=${CHAOS_CLASSES:-default}
jobs=${CHAOS_JOBS:-$(nproc)}
shrink=false
[ "${CHAOS_SHRINK:-0}" = 1 ] && shrink=true
race=()
[ "${CHAOS_RACE:-0}" = 1 ] && race=(-race)

out=$(mktemp -d)
tree=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || tree="$tree+uncommitted changes"
go test "${race[@]}" -c -o "$out/chaos.test" ./internal/chaos
chunk=$(( (n + jobs - 1) / jobs ))
start=$(date +%s)
pids=()
for ((j = 0; j < jobs; j++)); do
	from=$((first + j * chunk))
	count=$(( n - j * chunk < chunk ? n - j * chunk : chunk ))
	((count > 0)) || break
	"$out/chaos.test" -test.run 'TestChaos$' -test.v -test.timeout 0 -test.parallel 2 \
		-chaos.first="$from" -chaos.seeds="$count" -chaos.classes="$classes" -chaos.shrink="$shrink" -chaos.strict \
		>"$out/job$j.log" 2>&1 &
	pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
logs=("$out"/job*.log)
ok=$(cat "${logs[@]}" | grep -c 'chaos: ok seed=' || true)
failed=$(cat "${logs[@]}" | grep -c 'chaos: FAIL seed=' || true)
echo "chaos: command: CHAOS_CLASSES=$classes CHAOS_JOBS=$jobs CHAOS_RACE=${CHAOS_RACE:-0} hack/chaos.sh $n $first (tree $tree)"
echo "chaos: $((ok + failed)) seeds from $first (classes $classes) in $(( $(date +%s) - start ))s: $ok passed, $failed failed"
cases=$(cat "${logs[@]}" | grep -o 'case seed=[0-9]*,[^ ]*' | sort -u)
echo "seeds per class: $(grep -o 'classes=[a-z+-]*' <<<"$cases" | sed 's/classes=//' | tr + '\n' | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')"
echo "seeds per workers: $(grep -o 'workers=[0-9]*' <<<"$cases" | sort | uniq -c | awk '{printf "%s(%s) ", $2, $1}')"
echo "seeds with informers: $(grep -c 'informers=true' <<<"$cases" || true), with handlers: $(grep -c 'informers=false' <<<"$cases" || true) ($(grep -c 'async=true' <<<"$cases" || true) async)"
cat "${logs[@]}" | grep -o 'coverage: [0-9]* of [0-9]* crash cases crashed, [0-9]* of [0-9]* cases with request faults saw one' |
	awk '{c+=$2; cc+=$4; f+=$8; ff+=$10} END {printf "coverage: %d of %d crash cases crashed, %d of %d cases with request faults saw one\n", c, cc, f, ff}'
if ((failed > 0)); then
	echo "violations by invariant (seeds):"
	cat "${logs[@]}" | grep -o 'chaos: FAIL seed=[0-9]* invariants=[a-z,-]*' | sed 's/.*invariants=//' | tr , '\n' | sort | uniq -c | sort -rn
	echo "violations:"
	# The invariant names, as internal/chaos/violation.go declares them.
	inv=$(sed -n 's/^\t[A-Za-z]* *= "\([a-z-]*\)"$/\1/p' internal/chaos/violation.go | paste -sd'|')
	cat "${logs[@]}" | grep -E "^\s+chaos_test.go:[0-9]+: ($inv): " | sed 's/^\s*chaos_test.go:[0-9]*: //' | sort | uniq | head -200
	echo "seeds a restarted Binder repaired (stuck, not broken): $(cat "${logs[@]}" | grep -c 'stuck: a restarted' || true)"
	echo "replay lines:"
	cat "${logs[@]}" | grep -o 'replay: .*' | sort -u
fi
if grep -q -E '^(panic|fatal error|--- FAIL: TestChaos \()' "${logs[@]}" && ((failed == 0)); then
	echo "chaos: a test process failed outside a seed; logs in $out"
	status=1
fi
[ "$status" = 0 ] && rm -rf "$out" || echo "logs: $out"
exit "$status"
