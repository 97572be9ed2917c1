# Shared by the hack/ scripts: source it, do not run it.

# free_port [FILE]: prints a loopback TCP port nobody listens on, below the
# kernel's range of ephemeral ports, so that no outgoing connection takes it
# before a server binds it. With FILE, the ports listed there are skipped and
# the one printed is added to it.
free_port() {
	local p lo file=${1:-}
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "$lo" -gt 12000 ] || lo=32768
	for _ in $(seq 1 200); do
		p=$((10000 + RANDOM % (lo - 10000)))
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			continue
		fi
		if [ -n "$file" ]; then
			! grep -qx "$p" "$file" 2>/dev/null || continue
			echo "$p" >>"$file"
		fi
		echo "$p"
		return
	done
	echo "free_port: no free port" >&2
	return 1
}

# stop_cluster: stops the cluster (hack/cluster-up.sh) whose state directory
# is in the caller's variable dir, if any, and empties dir.
stop_cluster() {
	if [ -n "${dir:-}" ]; then
		"$(dirname "${BASH_SOURCE[0]}")/cluster-down.sh" "$dir" >&2 || true
		dir=""
	fi
}

# cleanup_on_exit TMPDIR: on exit, also on failure, stops the cluster of
# $dir (stop_cluster) and removes TMPDIR; Ctrl-C and SIGTERM exit with 130
# and 143, which runs the same cleanup.
cleanup_on_exit() {
	# shellcheck disable=SC2064 # TMPDIR is expanded now, dir at exit
	trap "stop_cluster; rm -rf -- $(printf %q "$1")" EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# wait_https URL PID: waits up to 60 s for URL to answer 200 (any server
# certificate accepted) while process PID lives; fails otherwise.
wait_https() {
	for _ in $(seq 1 600); do
		curl -kfsS -o /dev/null "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	echo "wait_https: no answer from $1" >&2
	return 1
}
