//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/volbind/volbind/binder"
)

// buildVolbind builds cmd/volbind into a temporary directory, as the image
// has it (buildImageBinary: every test then shares one compilation).
func buildVolbind(t *testing.T) string {
	t.Helper()
	return buildImageBinary(t, imageVersion)
}

// replica is one "volbind controller" process.
type replica struct {
	identity string
	cmd      *exec.Cmd
	log      string
	exited   chan struct{}
}

// startReplica starts "volbind controller" against the test cluster with
// leader election on the given Lease. The process gets SIGKILL when this
// test binary dies, and its PID is written to the cluster directory, so
// that hack/cluster-down.sh stops it too; the cleanup stops it.
func startReplica(t *testing.T, bin, identity, lease, ns string) *replica {
	t.Helper()
	return startReplicaWith(t, bin, identity, "--kubeconfig", testCluster.kubeconfig,
		"--kube-api-qps", "100", "--kube-api-burst", "100", "--secure-port", "0",
		"--leader-elect-resource-name", lease, "--leader-elect-resource-namespace", ns)
}

// startReplicaWith is startReplica with the given flags (client, Lease,
// serving); the identity and fast leader-election timings are added.
func startReplicaWith(t *testing.T, bin, identity string, flags ...string) *replica {
	t.Helper()
	args := append([]string{"controller", "--leader-elect-identity", identity,
		"--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "500ms"}, flags...)
	return startCommand(t, testCluster.dir, identity, exec.Command(bin, args...))
}

// startCommand starts cmd, a "volbind controller" of the cluster in dir,
// logging to a file. The process gets SIGKILL when this test binary dies
// (unless it changes its user), and its PID is written to dir, so that
// hack/cluster-down.sh stops it too (its command line must name dir); the
// cleanup stops it and logs its log if the test failed.
func startCommand(t *testing.T, dir, identity string, cmd *exec.Cmd) *replica {
	t.Helper()
	r := &replica{identity: identity, cmd: cmd, log: filepath.Join(t.TempDir(), identity+".log"), exited: make(chan struct{})}
	logFile, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", identity, err)
	}
	pidFile := filepath.Join(dir, "volbind-e2e-"+identity+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(r.cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Logf("cannot record the PID of %s for hack/cluster-down.sh: %v", identity, err)
	}
	go func() {
		_ = r.cmd.Wait()
		logFile.Close()
		close(r.exited)
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(20 * time.Second):
			t.Errorf("%s did not stop within 20s of SIGTERM; killing it", identity)
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
		os.Remove(pidFile)
		if t.Failed() {
			if out, err := os.ReadFile(r.log); err == nil {
				t.Logf("log of %s:\n%s", identity, out)
			}
		}
	})
	return r
}

// TestLeaderFailover runs two "volbind controller" replicas with leader
// election. The leader is killed (SIGKILL, so it cannot release the Lease)
// while it binds; the other replica takes the Lease over and binds the
// rest, and no volume or claim is bound twice.
func TestLeaderFailover(t *testing.T) {
	const n = 400
	bin := buildVolbind(t)
	f := newFixture(t)
	objs := make([]runtime.Object, 0, 2*n)
	for i := range n {
		objs = append(objs, f.volume(fmt.Sprintf("pv-%03d", i), 1), f.claim(fmt.Sprintf("pvc-%03d", i), 1))
	}
	f.create(objs...)

	lease := "volbind-e2e"
	replicas := map[string]*replica{}
	for _, id := range []string{"replica-a", "replica-b"} {
		replicas[id] = startReplica(t, bin, id, lease, f.ns)
	}
	holder := func(ctx context.Context) (string, error) {
		l, err := f.cs.CoordinationV1().Leases(f.ns).Get(ctx, lease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return "", err
		}
		return *l.Spec.HolderIdentity, nil
	}

	var bound int
	f.eventually(2*time.Minute, "the leader to bind 40 claims", func(ctx context.Context) (bool, error) {
		var err error
		bound, err = f.boundClaims(ctx)
		return bound >= 40, err
	})
	leader, err := holder(t.Context())
	if err != nil || replicas[leader] == nil {
		t.Fatalf("Lease holder = %q (%v), want one of the replicas", leader, err)
	}
	if err := replicas[leader].cmd.Process.Kill(); err != nil {
		t.Fatalf("kill leader %s: %v", leader, err)
	}
	<-replicas[leader].exited
	atKill, err := f.boundClaims(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed leader %s with %d of %d claims Bound", leader, atKill, n)
	if atKill >= n {
		t.Fatalf("all %d claims were Bound before the leader was killed; the test proves no takeover", n)
	}

	f.eventually(time.Minute, "the other replica to take the Lease over", func(ctx context.Context) (bool, error) {
		h, err := holder(ctx)
		return h != "" && h != leader, err
	})
	successor, _ := holder(t.Context())
	f.waitBound(n, 3*time.Minute)
	if got := len(f.checkBindings()); got != n {
		t.Errorf("%d claims Bound, want %d", got, n)
	}
	select {
	case <-replicas[successor].exited:
		t.Errorf("successor %s exited", successor)
	default:
	}
	for _, reason := range []string{binder.ReasonFailedBinding, binder.ReasonClaimLost, binder.ReasonClaimMisbound} {
		list, err := f.cs.CoreV1().Events(f.ns).List(t.Context(), metav1.ListOptions{FieldSelector: "reason=" + reason})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range list.Items {
			t.Errorf("event %s on %s: %s", ev.Reason, ev.InvolvedObject.Name, ev.Message)
		}
	}
	vols, err := f.cs.CoreV1().PersistentVolumes().List(t.Context(), metav1.ListOptions{LabelSelector: testLabel + "=" + f.ns})
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range vols.Items {
		if pv.Status.Phase != v1.VolumeBound {
			t.Errorf("volume %s is %s, want Bound", pv.Name, pv.Status.Phase)
		}
	}
}
