//go:build e2e && linux

package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// binderProc is the PV binder of one cluster as a process: "volbind
// controller", or kube-controller-manager running only its PV binder. The
// tests stop and start it in the middle of each case.
type binderProc struct {
	name string
	dir  string
	args []string
	// pidFile is where the running process's PID is recorded for
	// hack/cluster-down.sh.
	pidFile string
	// log collects the output of every process started, for failures.
	log string

	// pid is the running process (0: stopped).
	pid int
}

// newBinder returns the running binder of cluster c: for kcm the
// kube-controller-manager that hack/cluster-up.sh --with-kcm started (its
// command line is reused to restart it); for volbind a "volbind
// controller" it starts from bin, with the same client limits
// kube-controller-manager has by default. The cleanup stops volbind (kcm
// goes with its cluster).
func newBinder(t *testing.T, name string, c *cluster, bin string) *binderProc {
	t.Helper()
	b := &binderProc{name: name, dir: c.dir, log: filepath.Join(t.TempDir(), name+".log"),
		pidFile: filepath.Join(c.dir, "volbind-e2e-"+name+".pid")}
	switch name {
	case "kcm":
		pid, err := envPID(c.dir, "VOLBIND_KCM_PID")
		if err != nil {
			t.Fatalf("kube-controller-manager of %s: %v (was the cluster started with --with-kcm?)", c.dir, err)
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			t.Fatalf("command line of kube-controller-manager %d: %v", pid, err)
		}
		b.args = strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		b.pid = pid
	default:
		b.args = []string{bin, "controller", "--kubeconfig", c.kubeconfig, "--leader-elect=false", "--secure-port", "0"}
		b.start(t)
		t.Cleanup(func() { b.stop(t) })
	}
	return b
}

// envPID reads KEY=PID from the cluster's env file.
func envPID(dir, key string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("no %s in %s/env", key, dir)
}

// start starts the binder's process, detached from this binary (as
// hack/cluster-up.sh starts kube-controller-manager), logging to b.log. Its
// PID goes to the cluster directory, so that hack/cluster-down.sh stops it
// if this binary cannot.
func (b *binderProc) start(t *testing.T) {
	t.Helper()
	script := `"$@" </dev/null >>"$LOG" 2>&1 & echo $!`
	cmd := exec.Command("bash", append([]string{"-c", script, "binder"}, b.args...)...)
	cmd.Env = append(os.Environ(), "LOG="+b.log)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start %s: %v", b.name, err)
	}
	if b.pid, err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
		t.Fatalf("start %s: PID %q: %v", b.name, out, err)
	}
	if err := os.WriteFile(b.pidFile, []byte(strconv.Itoa(b.pid)+"\n"), 0o644); err != nil {
		t.Logf("cannot record the PID of %s for hack/cluster-down.sh: %v", b.name, err)
	}
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) STATE ...; comm may hold spaces and parentheses.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// stop stops the binder with SIGTERM and waits until the process is gone.
func (b *binderProc) stop(t *testing.T) {
	t.Helper()
	if b.pid == 0 {
		return
	}
	if err := syscall.Kill(b.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("stop %s (%d): %v", b.name, b.pid, err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return !alive(b.pid), nil
	})
	if err != nil {
		_ = syscall.Kill(b.pid, syscall.SIGKILL)
		t.Errorf("%s (%d) did not stop within 30 s of SIGTERM; killed", b.name, b.pid)
	}
	b.pid = 0
	os.Remove(b.pidFile)
}

// restart stops the binder, runs between (nil: nothing) while it is
// stopped, and starts it again.
func (b *binderProc) restart(t *testing.T, between func()) {
	t.Helper()
	b.stop(t)
	if between != nil {
		between()
	}
	b.start(t)
}

// logTail returns the end of the binder's log, for failure messages.
func (b *binderProc) logTail() string {
	raw, err := os.ReadFile(b.log)
	if err != nil {
		return ""
	}
	if len(raw) > 8000 {
		raw = raw[len(raw)-8000:]
	}
	return string(bytes.TrimSpace(raw))
}

// buildVolbind builds cmd/volbind of this repository into a temporary
// directory.
func buildVolbind(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "volbind")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/volbind")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/volbind: %v\n%s", err, out)
	}
	return bin
}
