package simulate

import (
	"bytes"
	"errors"
	"flag"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func withPods(s scenario, pods, nodes int) scenario {
	s.Pods, s.Nodes = pods, nodes
	return s
}

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
			want: simulateOptions{Scenario: defaultScenario(), Workers: 2, ResyncAuto: true, DeadlineAuto: true, Output: "text"},
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
			name: "pods and provisioning",
			args: []string{"-pods", "100", "-nodes", "20", "-provision"},
			want: simulateOptions{Scenario: withPods(defaultScenario(), 100, 20), Provision: true, Workers: 2, ResyncAuto: true, DeadlineAuto: true, Output: "text"},
		},
		{
			name: "double-dash flags, no resync, no progress",
			args: []string{"--resync=0", "--progress=never", "--o=yaml"},
			want: simulateOptions{Scenario: defaultScenario(), Workers: 2, ResyncPeriod: -1, DeadlineAuto: true, Output: "yaml"},
		},
		{
			name: "auto resync after a duration",
			args: []string{"-resync", "1m", "-resync", "auto"},
			want: simulateOptions{Scenario: defaultScenario(), Workers: 2, ResyncAuto: true, DeadlineAuto: true, Output: "text"},
		},
		{
			name: "repeatable -f",
			args: []string{"-f", "a.yaml", "-f", "-", "-allow-unknown", "-dump-objects", "out.yaml"},
			want: simulateOptions{Scenario: defaultScenario(), Files: []string{"a.yaml", "-"}, AllowUnknown: true, DumpObjects: "out.yaml",
				Workers: 2, ResyncAuto: true, DeadlineAuto: true, Output: "text"},
		},
		{name: "-f with -zones", args: []string{"-f", "a.yaml", "-zones", "0"}, wantErr: "-zones shape a generated cluster and cannot be used with -f"},
		{name: "-f with -claims and -volumes", args: []string{"-claims", "5", "-f", "a.yaml", "-volumes", "5"}, wantErr: "-claims, -volumes"},
		{name: "-f with -pods", args: []string{"-f", "a.yaml", "-pods", "10", "-nodes", "2"}, wantErr: "-nodes, -pods shape a generated cluster"},
		{name: "negative pods", args: []string{"-pods", "-1"}, wantErr: "-pods must not be negative"},
		{name: "no nodes", args: []string{"-pods", "10", "-nodes", "0"}, wantErr: "-nodes must be at least 1"},
		{name: "bad output", args: []string{"-o", "xml"}, wantErr: "-o must be"},
		{name: "bad progress", args: []string{"-progress", "sometimes"}, wantErr: "-progress"},
		{name: "zero workers", args: []string{"-workers", "0"}, wantErr: "-workers"},
		{name: "negative resync", args: []string{"-resync", "-1s"}, wantErr: "-resync"},
		{name: "resync neither auto nor a duration", args: []string{"-resync", "often"}, wantErr: "-resync"},
		{name: "zero deadline", args: []string{"-deadline", "0"}, wantErr: "-deadline"},
		{name: "negative deadline", args: []string{"-deadline", "-1m"}, wantErr: "-deadline"},
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
			if !parsed(t, "parseSimulateFlags", tc.args, err, tc.wantErr) {
				return
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
	wantContains(t, "help", stderr.String(), "usage: volbind simulate", "-conflict-rate", "-f value")
}

// TestAutoDeadline checks -deadline auto: 2 minutes and one more per
// 200,000 volumes and claims.
func TestAutoDeadline(t *testing.T) {
	for _, tc := range []struct {
		objects int
		want    time.Duration
	}{{0, 2 * time.Minute}, {20_000, 2*time.Minute + 6*time.Second}, {2_000_000, 12 * time.Minute}} {
		if got := autoDeadline(tc.objects); got != tc.want {
			t.Errorf("autoDeadline(%d) = %v, want %v", tc.objects, got, tc.want)
		}
	}
}

// TestAutoResync checks -resync auto's period: kube-controller-manager's
// 15 s up to 75,000 volumes and claims, then at most 5,000 objects a
// second.
func TestAutoResync(t *testing.T) {
	for _, tc := range []struct {
		objects int
		want    time.Duration
	}{{0, 15 * time.Second}, {20_000, 15 * time.Second}, {75_000, 15 * time.Second}, {200_000, 40 * time.Second}, {2_000_000, 400 * time.Second}} {
		if got := autoResync(tc.objects); got != tc.want {
			t.Errorf("autoResync(%d) = %v, want %v", tc.objects, got, tc.want)
		}
	}
}
