#!/usr/bin/env bash
# Starts a real control plane on loopback: etcd and kube-apiserver (and, with
# --with-kcm, kube-controller-manager running only its PV binder), on free
# 127.0.0.1 ports, in a state directory. Prints the directory on stdout; in it,
# "kubeconfig" reaches the API server as an administrator (group system:masters,
# which RBAC allows everything; other identities get what RBAC grants them:
# --authorization-mode Node,RBAC), "audit.log" records the requests of service
# accounts, and "env" holds
# VOLBIND_API (the server URL), VOLBIND_TOKEN (the admin bearer token) and the
# PIDs of the processes. kube-controller-manager serves HTTPS on the port
# VOLBIND_KCM_PORT of "env"; its /metrics accepts the admin token.
#
#   hack/cluster-up.sh [--with-kcm] [--kcm-qps N] [--kcm-burst N] [--kcm-arg ARG]... [--owner-pid PID] [DIR]
#   hack/cluster-down.sh DIR     stops exactly the processes this script started
#
# With --owner-pid, a watchdog stops the cluster as soon as process PID has
# exited (for a test binary that may die without cleaning up). If this script
# fails or is interrupted, it stops whatever it had started.
set -euo pipefail

with_kcm=false
kcm_qps=20
kcm_burst=30
kcm_args=()
owner=""
dir=""
while [ $# -gt 0 ]; do
	case "$1" in
	--with-kcm) with_kcm=true ;;
	--kcm-qps) kcm_qps=$2; shift ;;
	--kcm-burst) kcm_burst=$2; shift ;;
	--kcm-arg) kcm_args+=("$2"); shift ;;
	--owner-pid) owner=$2; shift ;;
	-*) echo "cluster-up: unknown flag $1" >&2; exit 2 ;;
	*) dir=$1 ;;
	esac
	shift
done

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib.sh
. "$here/lib.sh"
bin=$("$here/build-binaries.sh")
[ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/volbind-cluster.XXXXXX")
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
log() { echo "cluster-up: $*" >&2; }

ok=false
cleanup() {
	if ! $ok; then
		log "failed; stopping what was started in $dir"
		"$here/cluster-down.sh" "$dir" >&2 || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start NAME CMD...: runs CMD in the background, logging to DIR/NAME.log, pid
# in DIR/NAME.pid. Every command line names DIR, which cluster-down.sh checks
# before it signals a PID.
start() {
	local name=$1
	shift
	"$@" </dev/null >"$dir/$name.log" 2>&1 &
	echo $! >"$dir/$name.pid"
}

# wait_for URL WHAT [CURL ARGS...]: waits up to 60 s for URL to answer 200.
wait_for() {
	local url=$1 what=$2
	shift 2
	for _ in $(seq 1 600); do
		if curl -fsS -o /dev/null "$@" "$url" 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "$(cat "$dir/$what.pid")" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	log "$what did not become ready; last log lines:"
	tail -20 "$dir/$what.log" >&2
	return 1
}

etcd_client=$(free_port "$dir/ports")
etcd_peer=$(free_port "$dir/ports")
start etcd "$bin/etcd" --name default --data-dir "$dir/etcd-data" \
	--listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
	--listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
	--initial-cluster "default=http://127.0.0.1:$etcd_peer" --quota-backend-bytes 4294967296 --log-level warn
wait_for "http://127.0.0.1:$etcd_client/health" etcd

openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
# Requests of service accounts (the e2e tests run "volbind controller" as one)
# are recorded in audit.log, which e2e/rbac_test.go compares with the RBAC
# of examples/controller.
cat >"$dir/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
POLICY
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,admin,admin,system:masters" >"$dir/tokens.csv"
api_port=$(free_port "$dir/ports")
start kube-apiserver "$bin/kube-apiserver" \
	--etcd-servers "http://127.0.0.1:$etcd_client" \
	--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
	--endpoint-reconciler-type none --cert-dir "$dir/certs" \
	--service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/sa.pub" \
	--service-account-signing-key-file "$dir/sa.key" \
	--token-auth-file "$dir/tokens.csv" --authorization-mode Node,RBAC \
	--audit-policy-file "$dir/audit-policy.yaml" --audit-log-path "$dir/audit.log" \
	--service-cluster-ip-range 10.96.0.0/16 \
	--disable-admission-plugins StorageObjectInUseProtection,ServiceAccount \
	--max-requests-inflight 2000 --max-mutating-requests-inflight 1000
wait_for "https://127.0.0.1:$api_port/readyz" kube-apiserver -k -H "Authorization: Bearer $token"

cat >"$dir/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$api_port
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $token
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
KC
{
	echo "VOLBIND_API=https://127.0.0.1:$api_port"
	echo "VOLBIND_TOKEN=$token"
	echo "VOLBIND_ETCD_PID=$(cat "$dir/etcd.pid")"
	echo "VOLBIND_APISERVER_PID=$(cat "$dir/kube-apiserver.pid")"
} >"$dir/env"

if $with_kcm; then
	kcm_port=$(free_port "$dir/ports")
	start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$dir/kubeconfig" \
		--controllers persistentvolume-binder-controller --leader-elect=false \
		--kube-api-qps "$kcm_qps" --kube-api-burst "$kcm_burst" \
		--bind-address 127.0.0.1 --secure-port "$kcm_port" --authentication-skip-lookup=true \
		--authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
		${kcm_args[@]+"${kcm_args[@]}"}
	wait_for "https://127.0.0.1:$kcm_port/healthz" kube-controller-manager -k
	{
		echo "VOLBIND_KCM_PID=$(cat "$dir/kube-controller-manager.pid")"
		echo "VOLBIND_KCM_PORT=$kcm_port"
	} >>"$dir/env"
fi

if [ -n "$owner" ]; then
	# The watchdog's command line names $dir too, so cluster-down.sh may stop it.
	start watchdog bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2" "$3"' \
		watchdog "$owner" "$here/cluster-down.sh" "$dir"
fi
ok=true
log "API server at https://127.0.0.1:$api_port (kubeconfig: $dir/kubeconfig)"
echo "$dir"
