#!/usr/bin/env bash
# Long chaos runs: hack/chaos.sh N [FIRST] runs N seeds of internal/chaos
# (TestChaos) from seed FIRST (default 1000), split over parallel
# processes, and prints the violations by invariant and one replay line per
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
echo "chaos: $((ok + failed)) seeds from $first (classes $classes) in $(( $(date +%s) - start ))s: $ok passed, $failed failed"
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
