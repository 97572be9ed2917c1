#!/usr/bin/env bash
# Throughput with the real external provisioner: N claims of an Immediate
# StorageClass of a CSI test driver, provisioned by volbind's test
# provisioner (sig-storage-lib-external-provisioner's controller,
# e2e/provisioner/cmd/testprovisioner) and bound by kube-controller-manager's
# PV binder or by "volbind controller", each on a fresh cluster
# (hack/cluster-up.sh), at equal client limits. The provisioner gets the same
# generous limits in every run, so that the binder's limits are the ones that
# count. Prints one Markdown table (hack/benchload's columns: time from the
# first create to all claims and volumes Bound, binder writes per binding and
# 409 Conflicts from the API server's apiserver_request_total); progress goes
# to stderr. Nothing is left running, also on failure or Ctrl-C.
#
#   hack/bench-provisioner.sh                                    kcm and volbind, limits 20/30 and 1000/2000, 1,000 claims
#   BENCH_BINDERS="volbind" BENCH_LIMITS="20/30" BENCH_SIZES="1000 5000" hack/bench-provisioner.sh
#   BENCH_PROVISIONER_LIMITS=1000/2000 hack/bench-provisioner.sh  the provisioner's client limits (default 2000/4000)
#   BENCH_PROVISIONER_THREADS=4 hack/bench-provisioner.sh         the library's workers (default 100, csi-provisioner's
#                                                                 --worker-threads default; the library's own is 4)
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD/hack
# shellcheck source=hack/lib.sh
. "$here/lib.sh"

binders=${BENCH_BINDERS:-kcm volbind}
limits=${BENCH_LIMITS:-20/30 1000/2000}
sizes=${BENCH_SIZES:-1000}
plimits=${BENCH_PROVISIONER_LIMITS:-2000/4000}
pthreads=${BENCH_PROVISIONER_THREADS:-100}
driver=csi.e2e.volbind.io
log() { echo "bench-provisioner: $*" >&2; }

"$here/build-binaries.sh" >/dev/null
tools=$(mktemp -d "${TMPDIR:-/tmp}/volbind-bench.XXXXXX")
go build -o "$tools/benchload" ./hack/benchload
go build -o "$tools/volbind" ./cmd/volbind
(cd e2e/provisioner && go build -o "$tools/testprovisioner" ./cmd/testprovisioner)

dir=""
rows=$tools/rows
cleanup_on_exit "$tools"

for b in $binders; do
	for l in $limits; do
		qps=${l%/*} burst=${l#*/}
		for n in $sizes; do
			log "$b qps/burst $l, $n claims: starting a fresh cluster"
			case $b in
			kcm)
				dir=$("$here/cluster-up.sh" --with-kcm --kcm-qps "$qps" --kcm-burst "$burst" --owner-pid $$)
				pid=$(sed -n 's/^VOLBIND_KCM_PID=//p' "$dir/env")
				name=kube-controller-manager
				;;
			volbind)
				dir=$("$here/cluster-up.sh" --owner-pid $$)
				"$tools/volbind" controller --kubeconfig "$dir/kubeconfig" --leader-elect=false \
					--kube-api-qps "$qps" --kube-api-burst "$burst" --secure-port 0 \
					</dev/null >"$dir/volbind.log" 2>&1 &
				pid=$!
				echo "$pid" >"$dir/volbind.pid"
				name="volbind controller"
				;;
			*) log "unknown binder $b (want kcm or volbind)"; exit 2 ;;
			esac
			# The PID file's name starts with volbind, so that cluster-down.sh stops it.
			"$tools/testprovisioner" -kubeconfig "$dir/kubeconfig" -driver "$driver" \
				-kube-api-qps "${plimits%/*}" -kube-api-burst "${plimits#*/}" -threadiness "$pthreads" </dev/null >"$dir/provisioner.log" 2>&1 &
			echo $! >"$dir/volbind-provisioner.pid"
			"$tools/benchload" -kubeconfig "$dir/kubeconfig" -n "$n" -pid "$pid" -name "$name" -limits "$l" \
				-provisioner "$driver" | tee -a "$rows" >&2
			stop_cluster
		done
	done
done
echo
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, $(date -u +%Y-%m-%d); $driver provisioned by sig-storage-lib-external-provisioner (client $plimits, $pthreads workers); time from the first claim created to all claims and volumes Bound"
"$tools/benchload" -header
cat "$rows"
