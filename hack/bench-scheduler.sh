#!/usr/bin/env bash
# Compares the stock kube-scheduler with volbind's (VolbindVolumeBinding in
# place of VolumeBinding), both built from the same k8s.io/kubernetes
# version and go.sum by hack/build-scheduler.sh, on fresh real clusters
# (hack/cluster-up.sh). For each scheduler: a new cluster with NODES Node
# objects and VOLUMES hostname-local volumes of a WaitForFirstConsumer
# class, "volbind controller" as the volume controller (its volumes
# Available before the scheduler starts), the scheduler
# started, then PODS StatefulSet-shaped pods with one claim each created
# while it runs (hack/schedload), timed until every pod has a node and every
# claim is Bound. Prints one Markdown table; progress goes to stderr.
#
#   hack/bench-scheduler.sh
#   BENCH_NODES=100 BENCH_VOLUMES=10000 BENCH_PODS=1000 BENCH_LIMITS=1000/2000 hack/bench-scheduler.sh
#   BENCH_SCHEDULERS="volbind" hack/bench-scheduler.sh
#   BENCH_PROFILE_DIR=DIR hack/bench-scheduler.sh   keep, per scheduler, its /proc/PID/status and
#                                      smaps_rollup and its heap profile when the last pod is done
#                                      (DIR/SCHEDULER.status, .smaps_rollup, .heap.pb.gz)
#
# Both schedulers and the controller get the same client limits. Latencies
# are p50/p99 of the scheduler's own scheduler_pod_scheduling_sli_duration_seconds
# histogram; CPU is the scheduler process's user+system seconds and peak RSS
# its VmHWM, both from /proc when the last pod is done. Nothing is left
# running, also on failure or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD/hack
# shellcheck source=hack/lib.sh
. "$here/lib.sh"

schedulers=${BENCH_SCHEDULERS:-stock volbind}
nodes=${BENCH_NODES:-100}
volumes=${BENCH_VOLUMES:-10000}
pods=${BENCH_PODS:-1000}
limits=${BENCH_LIMITS:-1000/2000}
qps=${limits%/*}
burst=${limits#*/}
log() { echo "bench-scheduler: $*" >&2; }

"$here/build-binaries.sh" >/dev/null
stock=$("$here/build-scheduler.sh" --stock)
ours=$("$here/build-scheduler.sh")
tools=$(mktemp -d "${TMPDIR:-/tmp}/volbind-bench-sched.XXXXXX")
go build -o "$tools/schedload" ./hack/schedload
go build -o "$tools/volbind" ./cmd/volbind

dir=""
stop_cluster() {
	if [ -n "$dir" ]; then
		"$here/cluster-down.sh" "$dir" >&2 || true
		dir=""
	fi
}
trap 'stop_cluster; rm -rf "$tools"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# quantiles FILE METRIC: p50 and p99 in ms of a Prometheus histogram in the
# text exposition FILE, summed over its label sets, interpolated linearly
# within buckets as histogram_quantile does.
quantiles() {
	python3 - "$1" "$2" <<'PY'
import re, sys
path, name = sys.argv[1], sys.argv[2]
buckets = {}
for line in open(path):
    m = re.match(name + r'_bucket\{(.*)\} (\S+)', line)
    if not m:
        continue
    le = re.search(r'le="([^"]+)"', m.group(1)).group(1)
    le = float('inf') if le == '+Inf' else float(le)
    buckets[le] = buckets.get(le, 0) + float(m.group(2))
bs = sorted(buckets.items())
total = bs[-1][1] if bs else 0
def q(p):
    if total == 0:
        return float('nan')
    rank, lo, prev = p * total, 0.0, 0.0
    for le, c in bs:
        if c >= rank:
            if le == float('inf'):
                return lo * 1000
            return (lo + (le - lo) * (rank - prev) / max(c - prev, 1e-9)) * 1000
        lo, prev = le, c
    return lo * 1000
print("%.0f %.0f" % (q(0.5), q(0.99)))
PY
}

echo "| scheduler | nodes | volumes | pods | client qps/burst | all pods bound (s) | pods/s | p50 / p99 scheduling latency (ms) | scheduler CPU (s) | CPU ms per pod | peak RSS (MiB) |"
echo "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"
for s in $schedulers; do
	case $s in
	stock) bin=$stock; plugins="" ;;
	volbind) bin=$ours; plugins="
    plugins:
      multiPoint:
        enabled: [{name: VolbindVolumeBinding}]
        disabled: [{name: VolumeBinding}]" ;;
	*) log "unknown scheduler $s"; exit 2 ;;
	esac
	log "$s: cluster"
	dir=$("$here/cluster-up.sh" --owner-pid $$)
	# shellcheck disable=SC1091
	. "$dir/env"
	log "$s: $nodes nodes, $volumes volumes"
	"$tools/schedload" -kubeconfig "$dir/kubeconfig" -setup -nodes "$nodes" -volumes "$volumes"
	"$tools/volbind" controller --kubeconfig "$dir/kubeconfig" --leader-elect=false --metrics-addr "" --available-delay 0 \
		--kube-api-qps "$qps" --kube-api-burst "$burst" >"$dir/volbind-controller.log" 2>&1 &
	echo $! >"$dir/volbind-controller.pid"
	"$tools/schedload" -kubeconfig "$dir/kubeconfig" -wait-available -volumes "$volumes"
	port=$(free_port "$dir/ports")
	cat >"$dir/scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $dir/kubeconfig
  qps: $qps
  burst: $burst
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: default-scheduler$plugins
YAML
	"$bin" --config "$dir/scheduler.yaml" --bind-address 127.0.0.1 --secure-port "$port" \
		--authentication-skip-lookup --authorization-always-allow-paths '/healthz,/metrics,/debug/pprof/*' >"$dir/volbind-scheduler.log" 2>&1 &
	pid=$!
	echo $pid >"$dir/volbind-scheduler.pid"
	for _ in $(seq 1 600); do
		curl -fsSk -o /dev/null "https://127.0.0.1:$port/healthz" 2>/dev/null && break
		kill -0 $pid 2>/dev/null || { tail -20 "$dir/volbind-scheduler.log" >&2; exit 1; }
		sleep 0.1
	done
	log "$s: $pods pods"
	read -r secs rate < <("$tools/schedload" -kubeconfig "$dir/kubeconfig" -pods "$pods")
	read -r _ _ _ _ _ _ _ _ _ _ _ _ _ utime stime _ <"/proc/$pid/stat"
	cpu=$(echo "$utime $stime $(getconf CLK_TCK)" | awk '{printf "%.1f", ($1+$2)/$3}')
	rss=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
	curl -fsSk "https://127.0.0.1:$port/metrics" >"$tools/metrics"
	if [ -n "${BENCH_PROFILE_DIR:-}" ]; then
		mkdir -p "$BENCH_PROFILE_DIR"
		cp "/proc/$pid/status" "$BENCH_PROFILE_DIR/$s.status"
		cp "/proc/$pid/smaps_rollup" "$BENCH_PROFILE_DIR/$s.smaps_rollup"
		curl -fsSk -o "$BENCH_PROFILE_DIR/$s.heap.pb.gz" "https://127.0.0.1:$port/debug/pprof/heap" ||
			log "$s: no heap profile"
	fi
	read -r p50 p99 < <(quantiles "$tools/metrics" scheduler_pod_scheduling_sli_duration_seconds)
	perpod=$(echo "$cpu $pods" | awk '{printf "%.1f", 1000*$1/$2}')
	echo "| $s | $nodes | $volumes | $pods | $qps/$burst | $secs | $rate | $p50 / $p99 | $cpu | $perpod | $rss |"
	stop_cluster
done
