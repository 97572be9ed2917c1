//go:build e2e && linux

package suite

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// repoRoot is the volbind repository, from this package's directory.
const repoRoot = "../../.."

// clusters are the clusters of this test binary by binder name ("volbind",
// "kcm"), set by TestMain before any test runs and read-only afterwards.
var clusters map[string]*cluster

// cluster is a control plane made by hack/cluster-up.sh.
type cluster struct {
	// dir is the cluster directory: the kubeconfig and "env" are in it,
	// and hack/cluster-down.sh stops every process whose PID is in a
	// volbind*.pid file there.
	dir        string
	kubeconfig string
	cfg        *rest.Config
}

// suite is m with the clusters started before the tests and stopped after
// them (before goleak looks for leaks).
type suite struct{ m *testing.M }

// Run starts the clusters, runs the tests and stops the clusters.
func (s suite) Run() int {
	cs, stop, err := startClusters()
	defer stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	clusters = cs
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

// binders are the binders to test, from VOLBIND_E2E_BINDERS (default
// "volbind kcm").
func binders() []string {
	if b := strings.Fields(os.Getenv("VOLBIND_E2E_BINDERS")); len(b) > 0 {
		return b
	}
	return []string{"volbind", "kcm"}
}

// startClusters returns a cluster per binder: the one named by the
// binder's variable (VOLBIND_E2E_KUBECONFIG, VOLBIND_E2E_KCM_KUBECONFIG),
// or a fresh one from hack/cluster-up.sh (with --with-kcm for kcm), the
// fresh ones started at once. The cluster-up watchdog stops a cluster this
// binary started even when the binary dies without stop.
func startClusters() (map[string]*cluster, func(), error) {
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		errs  []error
		stops []func()
	)
	out := map[string]*cluster{}
	for _, b := range binders() {
		env, flags := "VOLBIND_E2E_KUBECONFIG", []string{}
		switch b {
		case "volbind":
		case "kcm":
			env, flags = "VOLBIND_E2E_KCM_KUBECONFIG", []string{"--with-kcm"}
		default:
			return nil, func() {}, fmt.Errorf("VOLBIND_E2E_BINDERS: unknown binder %q (want volbind or kcm)", b)
		}
		wg.Go(func() {
			c, stop, err := startCluster(os.Getenv(env), flags...)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s cluster: %w", b, err))
				return
			}
			out[b] = c
			stops = append(stops, stop)
		})
	}
	wg.Wait()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	return out, stopAll, errors.Join(errs...)
}

// startCluster returns the cluster of kubeconfig, or starts one with
// hack/cluster-up.sh and the flags when kubeconfig is empty.
func startCluster(kubeconfig string, flags ...string) (*cluster, func(), error) {
	if kubeconfig != "" {
		c, err := newCluster(filepath.Dir(kubeconfig), kubeconfig)
		return c, func() {}, err
	}
	args := append([]string{"--owner-pid", strconv.Itoa(os.Getpid())}, flags...)
	up := exec.Command(filepath.Join(repoRoot, "hack/cluster-up.sh"), args...)
	up.Stderr = os.Stderr
	out, err := up.Output()
	if err != nil {
		return nil, func() {}, fmt.Errorf("hack/cluster-up.sh: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	stop := func() {
		down := exec.Command(filepath.Join(repoRoot, "hack/cluster-down.sh"), dir)
		down.Stdout, down.Stderr = os.Stderr, os.Stderr
		if err := down.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: hack/cluster-down.sh:", err)
		}
	}
	c, err := newCluster(dir, filepath.Join(dir, "kubeconfig"))
	if err != nil {
		stop()
		return nil, func() {}, err
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
