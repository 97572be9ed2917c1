package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseSample(t *testing.T) {
	for _, tc := range []struct {
		name       string
		line       string
		wantLabels map[string]string
		wantValue  int64
		wantErr    bool
	}{
		{
			name:       "request counter",
			line:       `apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="persistentvolumes",scope="resource",subresource="status",verb="PUT",version="v1"} 12`,
			wantLabels: map[string]string{"code": "409", "component": "apiserver", "dry_run": "", "group": "", "resource": "persistentvolumes", "scope": "resource", "subresource": "status", "verb": "PUT", "version": "v1"},
			wantValue:  12,
		},
		{
			name:       "float value",
			line:       `apiserver_request_total{verb="POST"} 3e+03`,
			wantLabels: map[string]string{"verb": "POST"},
			wantValue:  3000,
		},
		{name: "no labels", line: `apiserver_request_total 5`, wantErr: true},
		{name: "bad value", line: `apiserver_request_total{verb="GET"} x`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels, value, err := parseSample(tc.line)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseSample(%q) error = %v, want error %v", tc.line, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.wantLabels, labels); diff != "" {
				t.Errorf("parseSample(%q) labels (-want +got):\n%s", tc.line, diff)
			}
			if value != tc.wantValue {
				t.Errorf("parseSample(%q) value = %d, want %d", tc.line, value, tc.wantValue)
			}
		})
	}
}

func TestPeakRSS(t *testing.T) {
	if _, err := peakRSS(1 << 30); err == nil {
		t.Errorf("peakRSS(no such process) = nil error, want one")
	}
}

func TestSumRequests(t *testing.T) {
	const metrics = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="persistentvolumes",subresource="",verb="POST"} 100
apiserver_request_total{code="201",resource="persistentvolumeclaims",subresource="",verb="POST"} 100
apiserver_request_total{code="200",resource="persistentvolumes",subresource="",verb="PUT"} 100
apiserver_request_total{code="200",resource="persistentvolumes",subresource="status",verb="PUT"} 200
apiserver_request_total{code="409",resource="persistentvolumes",subresource="status",verb="PUT"} 3
apiserver_request_total{code="200",resource="persistentvolumeclaims",subresource="status",verb="PATCH"} 100
apiserver_request_total{code="200",resource="persistentvolumeclaims",subresource="",verb="GET"} 7
apiserver_request_total{code="201",resource="events",subresource="",verb="POST"} 9
apiserver_request_total{code="409",resource="leases",subresource="",verb="PUT"} 1
apiserver_request_duration_seconds_count{resource="persistentvolumes",verb="PUT"} 400
`
	got, err := sumRequests(metrics)
	if err != nil {
		t.Fatalf("sumRequests: %v", err)
	}
	want := requests{creates: 200, writes: 403, pvWrites: 303, pvcWrites: 100, events: 9, conflicts: 4}
	if got != want {
		t.Errorf("sumRequests = %+v, want %+v", got, want)
	}
}

func TestPeakRSSSelf(t *testing.T) {
	got, err := peakRSS(os.Getpid())
	if err != nil || !strings.HasSuffix(got, " MiB") {
		t.Errorf("peakRSS(self) = %q, %v; want N MiB", got, err)
	}
}
