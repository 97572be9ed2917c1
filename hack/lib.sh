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
