package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/volbind/volbind/internal/cli"
)

// TestMain runs the tests, or with VOLBIND_TEST_RUN_MAIN=1 the program
// itself (TestKubectlPlugin runs it as kubectl-volbind).
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
	}
	goleak.VerifyTestMain(m)
}

// The program run as kubectl-volbind names itself "kubectl volbind".
func TestProgramName(t *testing.T) {
	t.Parallel()
	for arg0, want := range map[string]string{
		"volbind": "volbind", "/usr/local/bin/volbind": "volbind",
		"/home/me/bin/kubectl-volbind": "kubectl volbind", "kubectl-volbind.exe": "kubectl volbind",
	} {
		if got := programName(arg0); got != want {
			t.Errorf("programName(%q) = %q, want %q", arg0, got, want)
		}
	}
	var stderr bytes.Buffer
	_ = run(t.Context(), programName("kubectl-volbind"), nil, nil, io.Discard, &stderr)
	if !strings.Contains(stderr.String(), "usage: kubectl volbind <command>") {
		t.Errorf("usage as a plugin: %q", stderr.String())
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantErr    string // "" means none
		wantHelp   bool
		wantStdout string
		wantStderr string
	}{
		{name: "no command", wantErr: "exit status 2", wantStderr: "usage: volbind <command>"},
		{name: "simulate -h", args: []string{"simulate", "-h"}, wantHelp: true, wantStderr: "usage: volbind simulate"},
		{name: "help", args: []string{"help"}, wantStdout: "simulate"},
		{name: "unknown command", args: []string{"bogus"}, wantErr: `unknown command "bogus"`, wantStderr: "usage"},
		{name: "simulate flag error", args: []string{"simulate", "-o", "xml"}, wantErr: "-o must be"},
		{name: "controller flag error", args: []string{"controller", "--claim-workers", "0"}, wantErr: "--claim-workers"},
		{name: "controller without a kubeconfig", args: []string{"controller", "--kubeconfig", "/does/not/exist"}, wantErr: "client configuration"},
		{name: "controller --version", args: []string{"controller", "--version"}, wantStdout: "volbind "},
		{name: "controller --version=raw", args: []string{"controller", "--version=raw"}, wantStdout: "GoVersion:"},
		{name: "explain -h", args: []string{"explain", "-h"}, wantHelp: true, wantStderr: "usage: volbind explain (pvc|pod)"},
		{name: "explain without a name", args: []string{"explain", "pvc"}, wantErr: "want a kind (pvc or pod) and a name"},
		{name: "explain a claim not there", args: []string{"explain", "pvc", "nope", "-f", "../../examples/cluster.yaml"},
			wantErr: "exit status 2", wantStderr: "PersistentVolumeClaim default/nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), "volbind", tc.args, strings.NewReader(""), &stdout, &stderr)
			switch {
			case tc.wantHelp:
				if !errors.Is(err, flag.ErrHelp) {
					t.Errorf("run(%q) = %v, want flag.ErrHelp", tc.args, err)
				}
			case tc.wantErr == "":
				if err != nil {
					t.Errorf("run(%q) = %v", tc.args, err)
				}
			case err == nil || !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("run(%q) = %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("run(%q) stdout %q, stderr %q; want them to contain %q and %q", tc.args, stdout.String(), stderr.String(), tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

// TestFlagErrors checks that syntax errors (exit status 2) are told apart
// from help requests (exit status 0) and invalid values (exit status 1).
func TestFlagErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args             []string
		help, flagSyntax bool
	}{
		{args: []string{"simulate", "-h"}, help: true},
		{args: []string{"controller", "--help"}, help: true},
		{args: []string{"simulate", "-nope"}, flagSyntax: true},
		{args: []string{"controller", "--claim-workers", "x"}, flagSyntax: true},
		{args: []string{"controller", "--version=maybe"}, flagSyntax: true},
		{args: []string{"simulate", "-o", "xml"}},
		{args: []string{"controller", "--claim-workers", "0"}},
	}
	for _, tc := range tests {
		err := run(t.Context(), "volbind", tc.args, nil, io.Discard, io.Discard)
		if err == nil || errors.Is(err, flag.ErrHelp) != tc.help || cli.IsFlagError(err) != tc.flagSyntax {
			t.Errorf("run(%q) = %v: help %v, flag syntax %v; want %v, %v", tc.args, err, errors.Is(err, flag.ErrHelp), cli.IsFlagError(err), tc.help, tc.flagSyntax)
		}
	}
}

// TestExitStatus checks the exit status of each kind of error and that
// only the errors no one has printed yet are printed.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		want      int
		wantPrint bool
	}{
		{name: "success"},
		{name: "exit status", err: fmt.Errorf("simulate: %w", cli.ExitError{Code: 3}), want: 3},
		{name: "help", err: flag.ErrHelp},
		{name: "flag syntax", err: cli.FlagError{Err: errors.New("bad flag")}, want: 2},
		{name: "other", err: errors.New("no cluster"), want: 1, wantPrint: true},
	}
	for _, tc := range tests {
		var stderr bytes.Buffer
		if got := exitStatus(tc.err, &stderr); got != tc.want {
			t.Errorf("%s: exitStatus(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
		if printed := stderr.Len() > 0; printed != tc.wantPrint {
			t.Errorf("%s: exitStatus(%v) printed %q, want printed %v", tc.name, tc.err, stderr.String(), tc.wantPrint)
		}
	}
}

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
