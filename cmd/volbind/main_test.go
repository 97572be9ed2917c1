package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/volbind/volbind/internal/cli"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tc.args, strings.NewReader(""), &stdout, &stderr)
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
		err := run(t.Context(), tc.args, nil, io.Discard, io.Discard)
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
