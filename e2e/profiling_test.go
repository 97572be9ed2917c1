//go:build e2e && linux

package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestControllerProfiling runs "volbind controller" with its serving
// authenticated and authorized by the real API server (TokenReview and
// SubjectAccessReview) and fetches its heap profile: with the token of a
// ServiceAccount that RBAC allows to get /debug/pprof/*, the profile is one
// "go tool pprof" reads; without a token, with a bad one, or with one
// allowed only /metrics, the request is refused. --profiling=false serves
// no profile to the same token.
func TestControllerProfiling(t *testing.T) {
	admin := newClient(t, 1000, 2000)
	// As an operator would grant the profiles.
	profiler := nonResourceReader(t, admin, "volbind-e2e-profiler", "volbind-e2e-profiler", "/debug/pprof", "/debug/pprof/*")
	metricsOnly, _ := metricsReaders(t, admin)
	bin := buildVolbind(t)
	start := func(id string, flags ...string) int {
		port := freePort(t)
		startReplicaWith(t, bin, id, append([]string{"--kubeconfig", testCluster.kubeconfig,
			"--authentication-kubeconfig", testCluster.kubeconfig, "--authorization-kubeconfig", testCluster.kubeconfig,
			"--leader-elect-resource-name", "volbind-" + id + "-" + utilrand.String(5), "--leader-elect-resource-namespace", programNS,
			"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port)}, flags...)...)
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			code, _ := scrape(t, port, "/readyz", "")
			return code == http.StatusOK, nil
		})
		if err != nil {
			t.Fatalf("%s did not become ready: %v", id, err)
		}
		return port
	}
	on := start("profiling-on")
	off := start("profiling-off", "--profiling=false")

	code, body := scrape(t, on, "/debug/pprof/heap", profiler)
	if code != http.StatusOK {
		t.Fatalf("/debug/pprof/heap with the profiler's token = %d %.300q, want 200", code, body)
	}
	path := filepath.Join(t.TempDir(), "heap.pb.gz")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "go", "tool", "pprof", "-sample_index=inuse_space", "-top", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Type: inuse_space") || !strings.Contains(string(out), "flat%") {
		t.Errorf("go tool pprof -top on the heap profile: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		name, path, token string
		port              int
		want              []int
	}{
		{"no token", "/debug/pprof/heap", "", on, []int{http.StatusUnauthorized, http.StatusForbidden}},
		{"bad token", "/debug/pprof/heap", "not-a-token", on, []int{http.StatusUnauthorized}},
		{"a token for /metrics only", "/debug/pprof/heap", metricsOnly, on, []int{http.StatusForbidden}},
		{"the profiler's token on /metrics", "/metrics", profiler, on, []int{http.StatusForbidden}},
		{"the goroutine profile", "/debug/pprof/goroutine?debug=1", profiler, on, []int{http.StatusOK}},
		{"--profiling=false", "/debug/pprof/heap", profiler, off, []int{http.StatusNotFound}},
		{"--profiling=false without a token", "/debug/pprof/heap", "", off, []int{http.StatusUnauthorized, http.StatusForbidden}},
	} {
		if code, body := scrape(t, tc.port, tc.path, tc.token); !slices.Contains(tc.want, code) {
			t.Errorf("%s with %s = %d %.200q, want one of %v", tc.path, tc.name, code, body, tc.want)
		}
	}
}
