#!/usr/bin/env bash
# Benchmarks kube-controller-manager's PV binder against "volbind controller"
# on real, fresh clusters (hack/cluster-up.sh): for each binder, client limit
# and size, a new cluster, the binder started, then N volume/claim pairs
# created while it runs (hack/benchload), timed until all are Bound. Prints
# one Markdown table; progress and details go to stderr.
#
# The "floor" binder (benchload -floor) knows the pairs in advance and sends
# exactly the four writes of each binding as the pairs appear, with the
# same client limits, content type and workers as volbind controller: the
# most bindings/s the API server allows such a binder. The last two columns
# are each binder's time, and bindings/s, as percentages of the floor's in
# the same run (same limits and size).
#
#   hack/bench-real.sh                         full matrix (the default-limit 5,000 rows take ~20 min each)
#   BENCH_BINDERS="kcm volbind" BENCH_LIMITS="20/30 1000/2000" BENCH_SIZES="1000 5000" hack/bench-real.sh
#   BENCH_SKIP="volbind:20/30:5000 kcm:20/30:5000" hack/bench-real.sh    skip cells
#   VOLBIND_FLAGS="--claim-workers 4" hack/bench-real.sh                    extra flags for volbind controller
#   FLOOR_WORKERS=4 hack/bench-real.sh        the floor binder's workers (default 32, volbind's --claim-workers)
#   BENCH_NO_CEILING=1 hack/bench-real.sh     skip the closing run that measures the API server's create rate alone
#   BENCH_REPEAT=3 hack/bench-real.sh         run each cell 3 times on fresh clusters and report the median run
#   VOLBIND_BASE=/tmp/volbind-main BENCH_BINDERS="kcm base volbind" hack/bench-real.sh
#                                             also run that build of volbind (row "volbind controller (base)")
#   BENCH_PROFILE_DIR=DIR hack/bench-real.sh  keep, per run, the binder's /proc/PID/status and smaps_rollup at the
#                                             end of the load and volbind's heap profile (DIR/BINDER-QPS-N-RUN.*)
#   BENCH_CPU_PROFILE=1 BENCH_PROFILE_DIR=DIR hack/bench-real.sh
#                                             also a CPU profile of the API server, and of volbind, over the load
#                                             (DIR/BINDER-QPS-N-RUN.apiserver.cpu.pb.gz, .cpu.pb.gz)
#
# Both binders get the same client limits (-kube-api-qps/-kube-api-burst) and
# their default worker counts. Nothing is left running, also on failure or
# Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD/hack
# shellcheck source=hack/lib.sh
. "$here/lib.sh"

binders=${BENCH_BINDERS:-floor kcm volbind}
floor_workers=${FLOOR_WORKERS:-32}
limits=${BENCH_LIMITS:-20/30 1000/2000}
sizes=${BENCH_SIZES:-1000 5000}
repeat=${BENCH_REPEAT:-1}
skip=" ${BENCH_SKIP:-} "
cache=${VOLBIND_CACHE:-$HOME/.cache/volbind}
log() { echo "bench-real: $*" >&2; }

"$here/build-binaries.sh" >/dev/null
tools=$(mktemp -d "${TMPDIR:-/tmp}/volbind-bench.XXXXXX")
go build -o "$tools/benchload" ./hack/benchload
go build -o "$tools/volbind" ./cmd/volbind

# keep_profile PREFIX PID [PORT]: saves PID's memory figures and, with PORT,
# the heap profile and metrics of the volbind controller listening there.
keep_profile() {
	local auth
	mkdir -p "$(dirname "$1")"
	cp "/proc/$2/status" "$1.status"
	cp "/proc/$2/smaps_rollup" "$1.smaps_rollup"
	[ -n "${3:-}" ] || return 0
	auth="Authorization: Bearer $(sed -n 's/^VOLBIND_TOKEN=//p' "$dir/env")"
	curl -kfsS -o "$1.metrics" -H "$auth" "https://127.0.0.1:$3/metrics" || log "no metrics from $1"
	curl -kfsS -o "$1.heap.pb.gz" -H "$auth" "https://127.0.0.1:$3/debug/pprof/heap" ||
		log "no heap profile from $1 (built without --profiling?)"
}

# cpu_profile FILE URL: writes the CPU profile of the server at URL (its
# /debug/pprof/profile, authorized with the cluster's admin token) over the
# next BENCH_CPU_SECONDS (default 60) seconds, or until killed, to FILE.
cpu_profile() {
	local auth
	auth="Authorization: Bearer $(sed -n 's/^VOLBIND_TOKEN=//p' "$dir/env")"
	curl -kfsS -o "$1" -H "$auth" "$2/debug/pprof/profile?seconds=${BENCH_CPU_SECONDS:-60}" ||
		log "no CPU profile from $2"
}

dir=""
rows=$tools/rows
cleanup_on_exit "$tools"

for b in $binders; do
	for l in $limits; do
		qps=${l%/*} burst=${l#*/}
		for n in $sizes; do
			if [[ $skip == *" $b:$l:$n "* ]]; then
				log "skipping $b $l n=$n"
				continue
			fi
			: >"$tools/cell"
			for run in $(seq 1 "$repeat"); do
				log "$b qps/burst $l, $n pairs (run $run of $repeat): starting a fresh cluster"
				case $b in
				kcm)
					dir=$("$here/cluster-up.sh" --with-kcm --kcm-qps "$qps" --kcm-burst "$burst" --owner-pid $$)
					pid=$(sed -n 's/^VOLBIND_KCM_PID=//p' "$dir/env")
					name=kube-controller-manager
					;;
				floor)
					dir=$("$here/cluster-up.sh" --owner-pid $$)
					"$tools/benchload" -floor -kubeconfig "$dir/kubeconfig" -n "$n" -limits "$l" \
						-floor-workers "$floor_workers" </dev/null >"$dir/floor.log" 2>&1 &
					pid=$!
					echo "$pid" >"$dir/volbind-floor.pid"
					name="floor binder"
					;;
				volbind | base)
					dir=$("$here/cluster-up.sh" --owner-pid $$)
					port=$(free_port)
					exe=$tools/volbind name="volbind controller"
					[ "$b" = volbind ] || exe=${VOLBIND_BASE:?base needs VOLBIND_BASE} name="volbind controller (base)"
					# Served as deployed: /metrics and profiles authorized by the API server.
					# shellcheck disable=SC2086 # VOLBIND_FLAGS is a list of flags
					"$exe" controller --kubeconfig "$dir/kubeconfig" --leader-elect=false \
						--kube-api-qps "$qps" --kube-api-burst "$burst" --bind-address 127.0.0.1 --secure-port "$port" \
						--authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
						${VOLBIND_FLAGS:-} </dev/null >"$dir/volbind.log" 2>&1 &
					pid=$!
					echo "$pid" >"$dir/volbind.pid"
					wait_https "https://127.0.0.1:$port/readyz" "$pid"
					;;
				*) log "unknown binder $b (want floor, kcm, volbind or base)"; exit 2 ;;
				esac
				cpu_profiles=()
				if [ -n "${BENCH_CPU_PROFILE:-}" ] && [ -n "${BENCH_PROFILE_DIR:-}" ]; then
					prefix=$BENCH_PROFILE_DIR/$b-$qps-$n-$run
					mkdir -p "$BENCH_PROFILE_DIR"
					cpu_profile "$prefix.apiserver.cpu.pb.gz" "$(sed -n 's/^VOLBIND_API=//p' "$dir/env")" &
					cpu_profiles+=($!)
					if [ "$b" = volbind ] || [ "$b" = base ]; then
						cpu_profile "$prefix.cpu.pb.gz" "https://127.0.0.1:$port" &
						cpu_profiles+=($!)
					fi
				fi
				"$tools/benchload" -kubeconfig "$dir/kubeconfig" -n "$n" -pid "$pid" -name "$name" -limits "$l" | tee -a "$tools/cell" >&2
				for p in "${cpu_profiles[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
				if [ -n "${BENCH_PROFILE_DIR:-}" ]; then
					keep_profile "$BENCH_PROFILE_DIR/$b-$qps-$n-$run" "$pid" "$([ "$b" = kcm ] || echo "$port")"
				fi
				stop_cluster
			done
			# The median run by time to all Bound (column 5, "12.3 s").
			sort -t'|' -k5,5 -g "$tools/cell" | sed -n "$(((repeat + 1) / 2))p" >>"$rows"
		done
	done
done
if [ -z "${BENCH_NO_CEILING:-}" ]; then
	n=$(echo "$sizes" | tr ' ' '\n' | sort -n | tail -1)
	log "the API server alone: $n pairs created with no binder running"
	dir=$("$here/cluster-up.sh" --owner-pid $$)
	"$tools/benchload" -kubeconfig "$dir/kubeconfig" -n "$n" -create-only >"$tools/ceiling"
	stop_cluster
fi
echo
echo "$(nproc) cores, $(date -u +%Y-%m-%d); time from the first create to all volumes and claims Bound;"
echo "vs floor: the time to all Bound, and the bindings/s, as percentages of the floor binder's with the same limits"
echo "and pairs in this run"
echo "$("$tools/benchload" -header | sed -n 1p) time vs floor | bindings/s vs floor |"
echo "$("$tools/benchload" -header | sed -n 2p) ---: | ---: |"
# Fields split on "|": 3 is the limits, 4 the pairs, 5 the time ("12.3 s").
awk -F'|' '
	{ rows[NR] = $0; key[NR] = $3 "|" $4; t[NR] = $5 + 0 }
	$2 ~ /floor binder/ { floor[$3 "|" $4] = $5 + 0 }
	END {
		for (i = 1; i <= NR; i++) {
			f = floor[key[i]]
			if (f > 0 && t[i] > 0) {
				print rows[i] sprintf(" %.0f %% | %.0f %% |", 100 * t[i] / f, 100 * f / t[i])
			} else {
				print rows[i] " n/a | n/a |"
			}
		}
	}' "$rows"
[ ! -s "$tools/ceiling" ] || { echo; cat "$tools/ceiling"; }
