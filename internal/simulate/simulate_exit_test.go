package simulate

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/volbind/volbind/internal/cli"
)

// missingClassCluster has a volume, a claim it can take and a claim of a
// class that does not exist.
const missingClassCluster = `apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv1
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/pv1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ok
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: orphan
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: gone
  resources: {requests: {storage: 1Gi}}
`

func runSimulate(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = Run(quiet(t), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func exitCode(err error) int {
	var ee cli.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	return 1 // main prints the error and exits with 1
}

// TestSimulateExitCodes: 0 when the work is done, 1 for invalid input,
// 2 for bad flags, 3 when the deadline passes with work left.
func TestSimulateExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		stdin      string
		args       []string
		want       int
		wantStdout string
		wantErr    string
	}{
		{name: "done", stdin: missingClassCluster, args: []string{"-f", "-"}, want: 0, wantStdout: "invariants:        ok"},
		{name: "deadline passed", args: []string{"-volumes", "200", "-claims", "200", "-deadline", "1ns"}, want: 3,
			wantStdout: "deadline passed with work left"},
		{name: "empty input", stdin: "", args: []string{"-f", "-"}, want: 1, wantErr: "no documents"},
		{name: "separators only", stdin: "---\n---\n", args: []string{"-f", "-"}, want: 1, wantErr: "no documents"},
		{name: "unknown kind", stdin: "apiVersion: v2\nkind: PersistentVolume\nmetadata: {name: a}\n", args: []string{"-f", "-"}, want: 1,
			wantErr: "unknown kind"},
		{name: "invalid object", stdin: strings.Replace(missingClassCluster, "storage: 1Gi}\n  accessModes", "storage: \"0\"}\n  accessModes", 1),
			args: []string{"-f", "-"}, want: 1, wantErr: `-: document 1: PersistentVolume "pv1" is invalid: spec.capacity[storage]`},
		{name: "-f with a generator flag", stdin: missingClassCluster, args: []string{"-f", "-", "-claims", "3"}, want: 1, wantErr: "-claims"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, _, err := runSimulate(t, tc.stdin, tc.args...)
			if got := exitCode(err); got != tc.want {
				t.Errorf("exit status %d (%v), want %d", got, err, tc.want)
			}
			if !strings.Contains(stdout, tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, stdout)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestSimulateNamesMissingClass runs a cluster with a claim of a missing
// class: the report says so, -o yaml is the report, and the progress line
// shows loading and counts only the claim that can bind.
func TestSimulateNamesMissingClass(t *testing.T) {
	stdout, stderr, err := runSimulate(t, missingClassCluster, "-f", "-", "-o", "yaml", "-progress", "always")
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	var r report
	if err := yaml.UnmarshalStrict([]byte(stdout), &r); err != nil {
		t.Fatalf("-o yaml is not the report: %v\n%s", err, stdout)
	}
	if r.ClaimsBound != 1 || len(r.Unbound) != 1 || r.Unbound[0].Name != "default/orphan" || r.Unbound[0].Reason != reasonClassNotFound {
		t.Errorf("report: %d bound, unbound %+v; want default/orphan as %s", r.ClaimsBound, r.Unbound, reasonClassNotFound)
	}
	wantContains(t, "stderr", stderr, "loading -: 3 documents", "bound 1/1 claims in")
}

// TestSimulateUsageListsExitCodes: -h documents the exit statuses.
func TestSimulateUsageListsExitCodes(t *testing.T) {
	_, stderr, _ := runSimulate(t, "", "-h")
	wantContains(t, "usage", stderr, "exit status:", "130", "-deadline passed", "invariant is broken")
}
