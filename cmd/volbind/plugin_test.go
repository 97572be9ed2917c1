package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runMainEnv makes this test binary run main instead of the tests (see
// TestMain), so that a test can run the program under another name.
const runMainEnv = "VOLBIND_TEST_RUN_MAIN"

// dump is a `kubectl get ... -A -o yaml` dump of a small cluster.
const dump = "../../internal/explaincmd/testdata/cluster.yaml"

// pluginPath links the program as kubectl-volbind in a directory of its
// own, as a user installs a kubectl plugin, and returns that directory.
func pluginDir(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, pluginName)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPlugin runs cmd with the program as main and returns its exit status
// and output.
func runPlugin(t *testing.T, cmd *exec.Cmd) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(cmd.Environ(), runMainEnv+"=1")
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return code, out.String(), errOut.String()
}

// TestKubectlPlugin runs the program as kubectl runs a plugin: found on
// $PATH as kubectl-volbind and started with that path as argv[0] and the
// arguments after "kubectl volbind". Its texts call it "kubectl volbind",
// and explain's exit statuses get through.
func TestKubectlPlugin(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t)
	path, err := exec.LookPath(filepath.Join(dir, pluginName))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"a claim that would bind", []string{"explain", "pvc", "shop/orders-db", "-f", dump}, 0, "Verdict: would bind to pv-nfs-0006 now", ""},
		{"a claim nothing fits", []string{"explain", "pvc", "shop/orders-archive", "-f", dump}, 1, "Verdict: nothing can satisfy it", ""},
		{"a claim that is not there", []string{"explain", "pvc", "shop/nope", "-f", dump}, 2, "", "kubectl volbind explain: "},
		{"explain --help", []string{"explain", "--help"}, 0, "", "usage: kubectl volbind explain (pvc|pod)"},
		{"no command", nil, 2, "", "usage: kubectl volbind <command>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := &exec.Cmd{Path: path, Args: append([]string{path}, tc.args...)}
			code, stdout, stderr := runPlugin(t, cmd)
			if code != tc.code || !strings.Contains(stdout, tc.wantStdout) || !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("%s %q: exit status %d, stdout:\n%s\nstderr:\n%s\nwant %d, %q and %q", pluginName, tc.args, code, stdout, stderr,
					tc.code, tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

// TestKubectlPluginViaKubectl runs "kubectl volbind explain" through a
// kubectl on $PATH, which finds the plugin in a directory put first on
// $PATH. Without a kubectl it is skipped; TestKubectlPlugin runs the
// program as kubectl would.
func TestKubectlPluginViaKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl on $PATH")
	}
	dir := pluginDir(t)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd := exec.CommandContext(t.Context(), kubectl, "volbind", "explain", "pvc", "shop/orders-archive", "-f", dump, "--max", "1")
	code, stdout, stderr := runPlugin(t, cmd)
	if code != 1 || !strings.Contains(stdout, "Verdict: nothing can satisfy it") {
		t.Errorf("kubectl volbind explain: exit status %d, stdout:\n%s\nstderr:\n%s\nwant 1 and the verdict", code, stdout, stderr)
	}
}
