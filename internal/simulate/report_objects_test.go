package simulate

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestReportVolumesAddUp: every volume is counted in exactly one phase of
// the volume line, and the ones neither Bound nor Available are named
// with their reason.
func TestReportVolumesAddUp(t *testing.T) {
	t.Parallel()
	events := newEventLog()
	bad := testVolume("bad", "", "", "", v1.VolumePending)
	events.Event(bad, v1.EventTypeWarning, "InvalidVolume", `volume "bad" has no capacity`)
	var r report
	r.tally([]*v1.PersistentVolume{bad, testVolume("ok", "", "", "", v1.VolumeAvailable), testVolume("new", "", "", "", "")}, nil, nil, events)
	if sum := r.VolumesBound + r.VolumesAvailable + r.VolumesPending + r.VolumesReleased + r.VolumesFailed; sum != r.Volumes || r.VolumesPending != 2 {
		t.Errorf("volume phases sum to %d of %d (%d pending), want all 3 counted, 2 pending", sum, r.Volumes, r.VolumesPending)
	}
	var buf bytes.Buffer
	if err := r.writeText(&buf); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "text report", buf.String(),
		"volumes:           0 bound, 1 available, 2 pending, 0 released, 0 failed (of 3)",
		`PersistentVolume bad (Pending): InvalidVolume: volume "bad" has no capacity`,
	)
}

// TestReportMissingClass: a claim of a StorageClass that does not exist
// is reported as such, not as left to dynamic provisioning.
func TestReportMissingClass(t *testing.T) {
	t.Parallel()
	var r report
	r.tally(nil, []*v1.PersistentVolumeClaim{
		withClass(testClaim("ns", "a", "", v1.ClaimPending), "gone"),
		withClass(testClaim("ns", "b", "", v1.ClaimPending), "fast"),
	}, []string{"fast"}, newEventLog())
	got := map[string]string{}
	for _, u := range r.Unbound {
		got[u.Name] = u.Reason + ": " + u.Message
	}
	if want := `StorageClassNotFound: storage class "gone" does not exist`; got["ns/a"] != want {
		t.Errorf("claim of a missing class: %q, want %q", got["ns/a"], want)
	}
	if !strings.Contains(got["ns/b"], "dynamic provisioning") {
		t.Errorf("claim of an existing class: %q, want it left to dynamic provisioning", got["ns/b"])
	}
}

// TestReportListsFirstThenCounts: the text report names maxListed
// unbound objects and counts the rest; JSON and YAML list them all.
func TestReportListsFirstThenCounts(t *testing.T) {
	t.Parallel()
	var claims []*v1.PersistentVolumeClaim
	for i := range maxListed + 7 {
		claims = append(claims, testClaim("ns", fmt.Sprintf("c%02d", i), "", v1.ClaimPending))
	}
	var r report
	r.tally(nil, claims, nil, newEventLog())
	var text, js, ym bytes.Buffer
	if err := errors.Join(r.writeText(&text), r.writeJSON(&js), r.writeYAML(&ym)); err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("ns/c%02d", maxListed-1)
	if !strings.Contains(text.String(), last) || strings.Contains(text.String(), fmt.Sprintf("ns/c%02d", maxListed)) ||
		!strings.Contains(text.String(), "... and 7 more") {
		t.Errorf("text report does not list %d claims then count 7 more:\n%s", maxListed, text.String())
	}
	var back report
	if err := yaml.Unmarshal(ym.Bytes(), &back); err != nil || len(back.Unbound) != maxListed+7 || back.ClaimsPending != maxListed+7 {
		t.Errorf("YAML report = %d unbound, %d pending (%v); want the report with all %d", len(back.Unbound), back.ClaimsPending, err, maxListed+7)
	}
	if !strings.Contains(js.String(), fmt.Sprintf("ns/c%02d", maxListed+6)) {
		t.Errorf("JSON report does not list every claim")
	}
}

// TestReportInterruptedIsNotDeadline: an interrupted run says so, a run
// whose deadline passed says that, and a completed one says neither.
func TestReportInterruptedIsNotDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r         report
		want, not string
	}{
		{r: report{Interrupted: true}, want: "interrupted", not: "deadline"},
		{r: report{}, want: "deadline passed with work left", not: "interrupted"},
		{r: report{Completed: true}, want: "invariants:", not: "deadline"},
	} {
		var buf bytes.Buffer
		if err := tc.r.writeText(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), tc.want) || strings.Contains(buf.String(), tc.not) {
			t.Errorf("report %+v: text %q, want %q and not %q", tc.r, buf.String(), tc.want, tc.not)
		}
	}
}
