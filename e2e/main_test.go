//go:build e2e && linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// testCluster is the cluster of this test binary, set by TestMain before
// any test runs and read-only afterwards.
var testCluster *cluster

// cluster is a control plane made by hack/cluster-up.sh.
type cluster struct {
	// dir is the cluster directory: the kubeconfig is in it, and
	// hack/cluster-down.sh stops every process whose PID is in a
	// volbind*.pid file there.
	dir        string
	kubeconfig string
	cfg        *rest.Config
}

// suite is m with the cluster started before the tests and stopped after
// them (before goleak looks for leaks).
type suite struct{ m *testing.M }

// Run starts the cluster, runs the tests and stops the cluster.
func (s suite) Run() int {
	c, stop, err := startCluster()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer stop()
	testCluster = c
	return s.m.Run()
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(suite{m},
		// klog's flush daemon and net/http's idle keep-alive connections of
		// client-go's shared transports outlive the tests by design.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
	)
}

// startCluster returns the cluster named by VOLBIND_E2E_KUBECONFIG, or
// starts one with hack/cluster-up.sh. The cluster-up watchdog stops a
// cluster this binary started even when the binary dies without stop (a
// -timeout panic, SIGKILL).
func startCluster() (*cluster, func(), error) {
	if kc := os.Getenv("VOLBIND_E2E_KUBECONFIG"); kc != "" {
		c, err := newCluster(filepath.Dir(kc), kc)
		return c, func() {}, err
	}
	up := exec.Command("../hack/cluster-up.sh", "--owner-pid", strconv.Itoa(os.Getpid()))
	up.Stderr = os.Stderr
	out, err := up.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("hack/cluster-up.sh: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	stop := func() {
		down := exec.Command("../hack/cluster-down.sh", dir)
		down.Stdout, down.Stderr = os.Stderr, os.Stderr
		if err := down.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: hack/cluster-down.sh:", err)
		}
	}
	c, err := newCluster(dir, filepath.Join(dir, "kubeconfig"))
	if err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}

func newCluster(dir, kubeconfig string) (*cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return &cluster{dir: dir, kubeconfig: kubeconfig, cfg: cfg}, nil
}
