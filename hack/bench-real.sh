#!/usr/bin/env bash
# Benchmarks kube-controller-manager's PV binder against "volbind controller"
# on real, fresh clusters (hack/cluster-up.sh): for each binder, client limit
# and size, a new cluster, the binder started, then N volume/claim pairs
# created while it runs (hack/benchload), timed until all are Bound. Prints
# one Markdown table; progress and details go to stderr.
#
#   hack/bench-real.sh                         full matrix (the default-limit 5,000 rows take ~20 min each)
#   BENCH_BINDERS="kcm volbind" BENCH_LIMITS="20/30 1000/2000" BENCH_SIZES="1000 5000" hack/bench-real.sh
#   BENCH_SKIP="volbind:20/30:5000 kcm:20/30:5000" hack/bench-real.sh    skip cells
#   VOLBIND_FLAGS="--claim-workers 4" hack/bench-real.sh                    extra flags for volbind controller
#   BENCH_NO_CEILING=1 hack/bench-real.sh     skip the closing run that measures the API server's create rate alone
#   BENCH_REPEAT=3 hack/bench-real.sh         run each cell 3 times on fresh clusters and report the median run
#
# Both binders get the same client limits (-kube-api-qps/-kube-api-burst) and
# their default worker counts. Nothing is left running, also on failure or
# Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD/hack
# shellcheck source=hack/lib.sh
. "$here/lib.sh"

binders=${BENCH_BINDERS:-kcm volbind}
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
				volbind)
					dir=$("$here/cluster-up.sh" --owner-pid $$)
					port=$(free_port)
					# shellcheck disable=SC2086 # VOLBIND_FLAGS is a list of flags
					"$tools/volbind" controller --kubeconfig "$dir/kubeconfig" --leader-elect=false \
						--kube-api-qps "$qps" --kube-api-burst "$burst" --bind-address 127.0.0.1 --secure-port "$port" \
						${VOLBIND_FLAGS:-} </dev/null >"$dir/volbind.log" 2>&1 &
					pid=$!
					echo "$pid" >"$dir/volbind.pid"
					wait_https "https://127.0.0.1:$port/readyz" "$pid"
					name="volbind controller"
					;;
				*) log "unknown binder $b (want kcm or volbind)"; exit 2 ;;
				esac
				"$tools/benchload" -kubeconfig "$dir/kubeconfig" -n "$n" -pid "$pid" -name "$name" -limits "$l" | tee -a "$tools/cell" >&2
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
echo "$(nproc) cores, $(date -u +%Y-%m-%d); time from the first create to all volumes and claims Bound"
"$tools/benchload" -header
cat "$rows"
[ ! -s "$tools/ceiling" ] || { echo; cat "$tools/ceiling"; }
