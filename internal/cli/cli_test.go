package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFlagError(t *testing.T) {
	t.Parallel()
	syntax := errors.New("flag provided but not defined: -nope")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil},
		{name: "plain", err: syntax},
		{name: "exit status", err: ExitError{Code: 2}},
		{name: "flag error", err: FlagError{Err: syntax}, want: true},
		{name: "wrapped flag error", err: fmt.Errorf("controller: %w", FlagError{Err: syntax}), want: true},
	}
	for _, tc := range tests {
		if got := IsFlagError(tc.err); got != tc.want {
			t.Errorf("%s: IsFlagError(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
	if err := (FlagError{Err: syntax}); !errors.Is(err, syntax) || err.Error() != syntax.Error() {
		t.Errorf("FlagError{%v} = %q, does not unwrap to it", syntax, err)
	}
	if got := (ExitError{Code: 3}).Error(); got != "exit status 3" {
		t.Errorf("ExitError{3}.Error() = %q, want %q", got, "exit status 3")
	}
}

func TestPrintVersion(t *testing.T) {
	t.Parallel()
	var short, raw bytes.Buffer
	PrintVersion(&short, "true")
	PrintVersion(&raw, "raw")
	if got := short.String(); !strings.HasPrefix(got, "volbind ") || strings.Count(got, "\n") != 1 {
		t.Errorf("PrintVersion(true) = %q, want one line \"volbind VERSION\"", got)
	}
	if got := raw.String(); !strings.Contains(got, "GoVersion:") || !strings.Contains(got, "GitVersion:") {
		t.Errorf("PrintVersion(raw) = %q, want the whole version structure", got)
	}
	if v := Version(); v.GitVersion == "" || v.GoVersion == "" {
		t.Errorf("Version() = %+v, want GitVersion and GoVersion set", v)
	}
}

// TestClientConfig checks client-go's loading rules as
// kube-controller-manager uses them: the explicit kubeconfig, else
// $KUBECONFIG; master overrides the server.
func TestClientConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, server string) string {
		p := filepath.Join(dir, name)
		kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " + server + "}\n" +
			"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
		if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("KUBECONFIG", write("env", "https://from-env:6443"))
	t.Setenv("HOME", dir) // no ~/.kube/config
	explicit := write("explicit", "https://from-flag:6443")
	tests := []struct {
		kubeconfig, master string
		want               string
	}{
		{want: "https://from-env:6443"},
		{kubeconfig: explicit, want: "https://from-flag:6443"},
		{master: "https://master:6443", want: "https://master:6443"},
		{kubeconfig: explicit, master: "https://master:6443", want: "https://master:6443"},
	}
	for _, tc := range tests {
		cfg, err := ClientConfig(tc.kubeconfig, tc.master).ClientConfig()
		if err != nil {
			t.Fatalf("ClientConfig(%q, %q): %v", tc.kubeconfig, tc.master, err)
		}
		if cfg.Host != tc.want || cfg.BearerToken != "t" {
			t.Errorf("ClientConfig(%q, %q) = host %q token %q, want %q and the file's token", tc.kubeconfig, tc.master, cfg.Host, cfg.BearerToken, tc.want)
		}
	}
}
