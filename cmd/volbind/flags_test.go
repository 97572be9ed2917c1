package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSimulateFlags(t *testing.T) {
	t.Parallel()
	small := defaultScenario()
	small.Volumes, small.Claims, small.Zones, small.Classes, small.Namespaces = 50, 40, 2, 1, 3
	small.PreBound, small.Unbindable, small.Seed = 0.5, 0.25, 7
	tests := []struct {
		name    string
		args    []string
		want    simulateOptions
		wantErr string
	}{
		{
			name: "defaults",
			want: simulateOptions{Scenario: defaultScenario(), Workers: 2, ResyncPeriod: 15 * time.Second, Deadline: 2 * time.Minute, Output: "text"},
		},
		{
			name: "every flag",
			args: []string{"-volumes", "50", "-claims", "40", "-zones", "2", "-classes", "1", "-namespaces", "3", "-prebound", "0.5",
				"-unbindable", "0.25", "-seed", "7", "-workers", "3", "-resync", "1m", "-deadline", "10s", "-conflict-rate", "0.1",
				"-fail-rate", "0.05", "-o", "json", "-progress", "always", "-v", "2"},
			want: simulateOptions{Scenario: small, Workers: 3, ResyncPeriod: time.Minute, Deadline: 10 * time.Second,
				ConflictRate: 0.1, FailRate: 0.05, Output: "json", Progress: true, Verbosity: 2},
		},
		{
			name: "double-dash flags, no resync, no progress",
			args: []string{"--resync=0", "--progress=never", "--o=yaml"},
			want: simulateOptions{Scenario: defaultScenario(), Workers: 2, ResyncPeriod: -1, Deadline: 2 * time.Minute, Output: "yaml"},
		},
		{
			name: "repeatable -f",
			args: []string{"-f", "a.yaml", "-f", "-", "-allow-unknown", "-dump-objects", "out.yaml"},
			want: simulateOptions{Scenario: defaultScenario(), Files: []string{"a.yaml", "-"}, AllowUnknown: true, DumpObjects: "out.yaml",
				Workers: 2, ResyncPeriod: 15 * time.Second, Deadline: 2 * time.Minute, Output: "text"},
		},
		{name: "-f with -zones", args: []string{"-f", "a.yaml", "-zones", "0"}, wantErr: "-zones shape a generated cluster and cannot be used with -f"},
		{name: "-f with -claims and -volumes", args: []string{"-claims", "5", "-f", "a.yaml", "-volumes", "5"}, wantErr: "-claims, -volumes"},
		{name: "bad output", args: []string{"-o", "xml"}, wantErr: "-o must be"},
		{name: "bad progress", args: []string{"-progress", "sometimes"}, wantErr: "-progress"},
		{name: "zero workers", args: []string{"-workers", "0"}, wantErr: "-workers"},
		{name: "negative resync", args: []string{"-resync", "-1s"}, wantErr: "-resync"},
		{name: "zero deadline", args: []string{"-deadline", "0"}, wantErr: "-deadline"},
		{name: "conflict rate of 1", args: []string{"-conflict-rate", "1"}, wantErr: "-conflict-rate"},
		{name: "negative fail rate", args: []string{"-fail-rate", "-0.1"}, wantErr: "-fail-rate"},
		{name: "NaN rate", args: []string{"-fail-rate", "NaN"}, wantErr: "-fail-rate"},
		{name: "no zones", args: []string{"-zones", "0"}, wantErr: "-zones"},
		{name: "too many zones", args: []string{"-zones", "27"}, wantErr: "-zones"},
		{name: "no classes", args: []string{"-classes", "0"}, wantErr: "-classes"},
		{name: "no namespaces", args: []string{"-namespaces", "0"}, wantErr: "-namespaces"},
		{name: "negative volumes", args: []string{"-volumes", "-1"}, wantErr: "negative"},
		{name: "fraction above 1", args: []string{"-prebound", "1.5"}, wantErr: "-prebound"},
		{name: "negative verbosity", args: []string{"-v", "-1"}, wantErr: "-v"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected"},
		{name: "unknown flag", args: []string{"-nope"}, wantErr: "not defined"},
		{name: "malformed value", args: []string{"-workers", "many"}, wantErr: "invalid value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			got, err := parseSimulateFlags(tc.args, &stderr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseSimulateFlags(%q) error = %v, want one containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseSimulateFlags(%q): %v", tc.args, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseSimulateFlags(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestParseSimulateFlagsHelp(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if _, err := parseSimulateFlags([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseSimulateFlags(-h) = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"usage: volbind simulate", "-conflict-rate", "-f value"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("help = %q, want it to contain %q", stderr.String(), want)
		}
	}
}

func TestParseControllerFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, o controllerOptions)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, o controllerOptions) {
			want := controllerOptions{QPS: 20, Burst: 30, ClaimWorkers: 32, VolumeWorkers: 8, ResyncPeriod: 15 * time.Second,
				AvailableDelay: 5 * time.Second, ContentType: "application/vnd.kubernetes.protobuf", MetricsAddr: ":8080",
				LeaderElect: true, LeaseName: "volbind", LeaseNS: "kube-system", Identity: o.Identity,
				LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
			if diff := cmp.Diff(want, o); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
			if !strings.Contains(o.Identity, "_") || len(o.Identity) < 38 {
				t.Errorf("Identity = %q, want host name, _ and a UUID", o.Identity)
			}
		}},
		{name: "every flag", args: []string{"--kubeconfig=/tmp/kc", "--kube-api-qps=1000", "--kube-api-burst=2000", "--claim-workers=4",
			"--volume-workers=2", "--resync=1m", "--metrics-addr=", "--v=3", "--leader-elect=false", "--available-delay=0",
			"--kube-api-content-type=application/json"},
			check: func(t *testing.T, o controllerOptions) {
				if o.Kubeconfig != "/tmp/kc" || o.QPS != 1000 || o.Burst != 2000 || o.ClaimWorkers != 4 || o.VolumeWorkers != 2 ||
					o.ResyncPeriod != time.Minute || o.MetricsAddr != "" || o.Verbosity != 3 || o.LeaderElect ||
					o.AvailableDelay != 0 || o.ContentType != "application/json" {
					t.Errorf("parsed = %+v", o)
				}
			}},
		{name: "lease flags", args: []string{"-leader-elect-resource-name", "b", "-leader-elect-resource-namespace", "ns", "-leader-elect-identity", "me",
			"-leader-elect-lease-duration", "30s", "-leader-elect-renew-deadline", "20s", "-leader-elect-retry-period", "5s"},
			check: func(t *testing.T, o controllerOptions) {
				if o.LeaseName != "b" || o.LeaseNS != "ns" || o.Identity != "me" || o.LeaseDuration != 30*time.Second ||
					o.RenewDeadline != 20*time.Second || o.RetryPeriod != 5*time.Second {
					t.Errorf("parsed = %+v", o)
				}
			}},
		{name: "bad lease timing is fine without leader election", args: []string{"-leader-elect=false", "-leader-elect-renew-deadline", "1h"},
			check: func(t *testing.T, o controllerOptions) {
				if o.LeaderElect {
					t.Errorf("LeaderElect = true")
				}
			}},
		{name: "zero qps", args: []string{"-kube-api-qps", "0"}, wantErr: "-kube-api-qps"},
		{name: "zero burst", args: []string{"-kube-api-burst", "0"}, wantErr: "-kube-api-burst"},
		{name: "zero workers", args: []string{"-claim-workers", "0"}, wantErr: "-claim-workers"},
		{name: "zero resync", args: []string{"-resync", "0"}, wantErr: "-resync"},
		{name: "negative available delay", args: []string{"-available-delay", "-1s"}, wantErr: "-available-delay"},
		{name: "unknown content type", args: []string{"-kube-api-content-type", "text/plain"}, wantErr: "-kube-api-content-type"},
		{name: "renew deadline beyond lease", args: []string{"-leader-elect-renew-deadline", "20s"}, wantErr: "-leader-elect-lease-duration"},
		{name: "retry period too close to renew deadline", args: []string{"-leader-elect-retry-period", "9s"}, wantErr: "-leader-elect-retry-period"},
		{name: "no identity", args: []string{"-leader-elect-identity", ""}, wantErr: "identity"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			o, err := parseControllerFlags(tc.args, &stderr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseControllerFlags(%q) error = %v, want one containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseControllerFlags(%q): %v", tc.args, err)
			}
			tc.check(t, o)
		})
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
		{name: "controller flag error", args: []string{"controller", "-claim-workers", "0"}, wantErr: "-claim-workers"},
		{name: "controller without a kubeconfig", args: []string{"controller", "-kubeconfig", "/does/not/exist"}, wantErr: "client configuration"},
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
		{args: []string{"controller", "-claim-workers", "x"}, flagSyntax: true},
		{args: []string{"simulate", "-o", "xml"}},
		{args: []string{"controller", "-claim-workers", "0"}},
	}
	for _, tc := range tests {
		err := run(t.Context(), tc.args, nil, io.Discard, io.Discard)
		if err == nil || errors.Is(err, flag.ErrHelp) != tc.help || isFlagError(err) != tc.flagSyntax {
			t.Errorf("run(%q) = %v: help %v, flag syntax %v; want %v, %v", tc.args, err, errors.Is(err, flag.ErrHelp), isFlagError(err), tc.help, tc.flagSyntax)
		}
	}
}
