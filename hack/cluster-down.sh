#!/usr/bin/env bash
# Stops the processes that hack/cluster-up.sh started in DIR, and those whose
# PIDs other scripts wrote to DIR/volbind*.pid (and only those: a PID is
# signalled only while its command line still names DIR), then removes DIR if
# cluster-up.sh made it.
#
#   hack/cluster-down.sh DIR
set -euo pipefail
dir=${1:?usage: hack/cluster-down.sh DIR}
[ -d "$dir" ] || exit 0
dir=$(cd "$dir" && pwd)

# ours PID: whether PID is alive and its command line names $dir.
ours() {
	[ -r "/proc/$1/cmdline" ] && { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qF -- "$dir"
}

# Controllers first (also volbind*.pid, written by scripts that run "volbind
# controller" on this cluster), then the API server, then etcd.
shopt -s nullglob
for f in "$dir"/watchdog.pid "$dir"/kube-controller-manager.pid "$dir"/volbind*.pid "$dir"/kube-apiserver.pid "$dir"/etcd.pid; do
	[ -f "$f" ] || continue
	name=$(basename "$f" .pid)
	pid=$(cat "$f")
	# The watchdog runs this script with exec: do not stop ourselves.
	if [ "$pid" != "$$" ] && ours "$pid"; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do
			ours "$pid" || break
			sleep 0.1
		done
		if ours "$pid"; then
			echo "cluster-down: $name ($pid) ignored SIGTERM for 10 s; killing it" >&2
			kill -9 "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$f"
done
case "$dir" in
*/volbind-cluster.*) rm -rf "$dir" ;;
*) echo "cluster-down: stopped; left $dir in place (not made by cluster-up)" >&2 ;;
esac
