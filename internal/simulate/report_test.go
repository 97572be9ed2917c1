package simulate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/volbind/volbind/binder/bindertest"
)

func testVolume(name, claimNS, claimName string, uid types.UID, phase v1.PersistentVolumePhase) *v1.PersistentVolume {
	v := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.PersistentVolumeStatus{Phase: phase}}
	if claimName != "" {
		v.Spec.ClaimRef = &v1.ObjectReference{Namespace: claimNS, Name: claimName, UID: uid}
	}
	return v
}

func testClaim(ns, name, volume string, phase v1.PersistentVolumeClaimPhase) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec:       v1.PersistentVolumeClaimSpec{VolumeName: volume},
		Status:     v1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

func withClass(c *v1.PersistentVolumeClaim, class string) *v1.PersistentVolumeClaim {
	c.Spec.StorageClassName = &class
	return c
}

func TestReportTally(t *testing.T) {
	t.Parallel()
	events := newEventLog()
	noClass1, noClass2 := testClaim("ns", "p1", "", v1.ClaimPending), testClaim("ns", "p2", "", v1.ClaimPending)
	taken1, taken2 := testClaim("ns", "t1", "pv-a", v1.ClaimPending), testClaim("ns", "t2", "pv-b", v1.ClaimPending)
	events.Event(noClass1, v1.EventTypeNormal, "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	events.Event(noClass2, v1.EventTypeWarning, "SomethingEarlier", "replaced by the next event")
	events.Event(noClass2, v1.EventTypeNormal, "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	events.Event(taken1, v1.EventTypeWarning, "FailedBinding", `volume "pv-a" already bound to a different claim.`)
	events.Event(taken2, v1.EventTypeWarning, "FailedBinding", `volume "pv-b" already bound to a different claim.`)
	bound := testClaim("ns", "c1", "a", v1.ClaimBound)

	var r report
	r.tally(
		[]*v1.PersistentVolume{
			testVolume("a", "ns", "c1", bound.UID, v1.VolumeBound),
			testVolume("b", "", "", "", v1.VolumeAvailable),
			testVolume("c", "ns", "gone", "uid-gone", v1.VolumeReleased),
			testVolume("d", "", "", "", v1.VolumeFailed),
			testVolume("pv-a", "ns", "other", "", v1.VolumeAvailable),
		},
		[]*v1.PersistentVolumeClaim{
			bound, noClass1, noClass2, taken1, taken2,
			withClass(testClaim("ns", "big", "", v1.ClaimPending), "fast"),
			testClaim("ns", "missing", "pv-nope", v1.ClaimPending),
			testClaim("ns", "quiet", "", ""),
			testClaim("ns", "l1", "x", v1.ClaimLost),
		}, []string{"fast"}, events)
	want := report{
		Claims: 9, ClaimsBound: 1, ClaimsPending: 7, ClaimsLost: 1,
		Volumes: 5, VolumesBound: 1, VolumesAvailable: 2, VolumesReleased: 1, VolumesFailed: 1,
		Events: map[string]int{"FailedBinding": 4, "SomethingEarlier": 1},
		PendingReasons: []reasonCount{
			{Reason: "FailedBinding", Message: "no persistent volumes available for this claim and no storage class is set", Claims: 2},
			{Reason: "FailedBinding", Message: `volume "…" already bound to a different claim.`, Claims: 2},
			{Reason: reasonNoEvent, Message: "no volume matches; a claim of a storage class is left to dynamic provisioning (simulate registers no provisioner)", Claims: 1},
			{Reason: reasonNoEvent, Message: "the Binder emitted no event about this claim", Claims: 1},
			{Reason: reasonNoEvent, Message: `the requested volume "…" does not exist`, Claims: 1},
		},
	}
	if diff := cmp.Diff(want, r, cmpopts.IgnoreFields(report{}, "Unbound")); diff != "" {
		t.Errorf("tally (-want +got):\n%s", diff)
	}
	var unbound []string
	for _, u := range r.Unbound {
		unbound = append(unbound, u.Kind+" "+u.Name+" "+u.Phase)
	}
	wantUnbound := []string{"PersistentVolume c Released", "PersistentVolume d Failed",
		"PersistentVolumeClaim ns/p1 Pending", "PersistentVolumeClaim ns/p2 Pending", "PersistentVolumeClaim ns/t1 Pending",
		"PersistentVolumeClaim ns/t2 Pending", "PersistentVolumeClaim ns/big Pending", "PersistentVolumeClaim ns/missing Pending",
		"PersistentVolumeClaim ns/quiet ", "PersistentVolumeClaim ns/l1 Lost"}
	if diff := cmp.Diff(wantUnbound, unbound); diff != "" {
		t.Errorf("unbound objects (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := r.writeText(&buf); err != nil || !strings.Contains(buf.String(), "events:            FailedBinding 4, SomethingEarlier 1\n") {
		t.Errorf("text report = %q, %v; want the event counts", buf.String(), err)
	}
}

func TestReportTallyKeepsTopReasons(t *testing.T) {
	t.Parallel()
	events := newEventLog()
	var claims []*v1.PersistentVolumeClaim
	for i, reason := range []string{"A", "B", "B", "C", "D", "E", "F", "F", "F"} {
		c := testClaim("ns", reason+string(rune('0'+i)), "", v1.ClaimPending)
		events.Event(c, v1.EventTypeNormal, reason, "m")
		claims = append(claims, c)
	}
	var r report
	r.tally(nil, claims, nil, events)
	var got []string
	for _, pr := range r.PendingReasons {
		got = append(got, pr.Reason)
	}
	if diff := cmp.Diff([]string{"F", "B", "A", "C", "D"}, got); diff != "" {
		t.Errorf("top reasons (-want +got):\n%s", diff)
	}
}

func TestReportInvariants(t *testing.T) {
	t.Parallel()
	var r report
	r.tally(
		[]*v1.PersistentVolume{
			testVolume("a", "ns", "c1", "uid-c1", v1.VolumeBound),
			testVolume("b", "ns", "c4", "uid-someone-else", v1.VolumeBound),
		},
		[]*v1.PersistentVolumeClaim{
			testClaim("ns", "c1", "a", v1.ClaimBound),
			testClaim("ns", "c2", "a", v1.ClaimBound),       // a second claim on volume a
			testClaim("ns", "c3", "missing", v1.ClaimBound), // a volume that does not exist
			testClaim("ns", "c4", "b", v1.ClaimBound),       // b's claimRef has another uid
		}, nil, newEventLog())
	want := []string{
		"claim ns/c2 is Bound to volume a, whose claimRef points elsewhere",
		"volume a is bound to two claims: ns/c1 and ns/c2",
		`claim ns/c3 is Bound to volume "missing", which does not exist`,
		"claim ns/c4 is Bound to volume b, whose claimRef points elsewhere",
	}
	if diff := cmp.Diff(want, r.Violations); diff != "" {
		t.Errorf("Violations (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := r.writeText(&buf); err != nil || !strings.Contains(buf.String(), "INVARIANTS BROKEN (4)") {
		t.Errorf("text report = %q, %v; want the broken invariants", buf.String(), err)
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, i := range n {
			out = append(out, time.Duration(i)*time.Millisecond)
		}
		return out
	}
	var hundred []int
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, i)
	}
	tests := []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{ms(7), 0.5, 7 * time.Millisecond},
		{ms(7), 0.99, 7 * time.Millisecond},
		{ms(1, 2), 0.5, 1 * time.Millisecond},
		{ms(1, 2, 3), 0.5, 2 * time.Millisecond},
		{ms(hundred...), 0.5, 50 * time.Millisecond},
		{ms(hundred...), 0.99, 99 * time.Millisecond},
		{ms(hundred...), 1, 100 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("percentile(%d values, %v) = %v, want %v", len(tc.sorted), tc.p, got, tc.want)
		}
	}
}

func TestReportTiming(t *testing.T) {
	t.Parallel()
	var lat []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	st := bindertest.Stats{
		Writes: map[bindertest.Kind]map[bindertest.Verb]int64{
			bindertest.KindVolume: {bindertest.VerbUpdate: 100, bindertest.VerbUpdateStatus: 110},
			bindertest.KindClaim:  {bindertest.VerbUpdate: 100, bindertest.VerbUpdateStatus: 90},
		},
		Reads:     map[bindertest.Kind]int64{bindertest.KindClaim: 5},
		Conflicts: 3,
		Faults:    7,
	}
	r := report{Completed: true}
	r.timing(2*time.Second, lat, st)
	want := report{
		Completed: true, WallSeconds: 2, Bindings: 100, BindingsPerSecond: 50,
		APIWrites: 400, APIReads: 5, WritesPerBinding: 4, Conflicts: 3, InjectedFaults: 7,
		WritesByResource: map[string]int64{
			"persistentvolumes update": 100, "persistentvolumes update/status": 110,
			"persistentvolumeclaims update": 100, "persistentvolumeclaims update/status": 90,
		},
		BindP50Millis: 50, BindP99Millis: 99,
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("timing (-want +got):\n%s", diff)
	}
	if lat[0] != 100*time.Millisecond {
		t.Errorf("timing sorted the caller's latencies")
	}

	var buf bytes.Buffer
	if err := r.writeJSON(&buf); err != nil {
		t.Fatalf("writeJSON: %v", err)
	}
	var back report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("the JSON report does not decode: %v", err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}

	buf.Reset()
	if err := r.writeText(&buf); err != nil {
		t.Fatalf("writeText: %v", err)
	}
	wantContains(t, "text report", buf.String(),
		"bindings:          100 (50/s)",
		"API writes:        400 (4.00 per binding): persistentvolumeclaims update 100, persistentvolumeclaims update/status 90, persistentvolumes update 100, persistentvolumes update/status 110",
		"conflicts:         3",
		"injected faults:   7",
		"created → Bound:   p50 50.0 ms, p99 99.0 ms",
		"invariants:        ok",
	)
	if strings.Contains(buf.String(), "deadline passed") {
		t.Errorf("text report of a completed run says the deadline passed:\n%s", buf.String())
	}
}

func TestReportWithoutBindings(t *testing.T) {
	t.Parallel()
	var r report
	r.timing(0, nil, bindertest.Stats{})
	if r.WritesPerBinding != 0 || r.BindingsPerSecond != 0 || r.BindP99Millis != 0 {
		t.Errorf("timing without bindings = %+v, want zero rates", r)
	}
	var buf bytes.Buffer
	if err := r.writeText(&buf); err != nil || !strings.Contains(buf.String(), "deadline passed") {
		t.Errorf("text report of an incomplete run = %q, %v; want it to say the deadline passed", buf.String(), err)
	}
}

func TestStatsSince(t *testing.T) {
	t.Parallel()
	before := bindertest.Stats{
		Writes:    map[bindertest.Kind]map[bindertest.Verb]int64{bindertest.KindVolume: {bindertest.VerbUpdateStatus: 3}},
		Reads:     map[bindertest.Kind]int64{bindertest.KindClaim: 1},
		Conflicts: 1, Faults: 2,
	}
	now := bindertest.Stats{
		Writes: map[bindertest.Kind]map[bindertest.Verb]int64{
			bindertest.KindVolume: {bindertest.VerbUpdateStatus: 5, bindertest.VerbUpdate: 2},
			bindertest.KindClaim:  {bindertest.VerbUpdate: 2},
		},
		Reads:     map[bindertest.Kind]int64{bindertest.KindClaim: 1},
		Conflicts: 4, Faults: 2,
	}
	want := bindertest.Stats{
		Writes: map[bindertest.Kind]map[bindertest.Verb]int64{
			bindertest.KindVolume: {bindertest.VerbUpdateStatus: 2, bindertest.VerbUpdate: 2},
			bindertest.KindClaim:  {bindertest.VerbUpdate: 2},
		},
		Reads:     map[bindertest.Kind]int64{},
		Conflicts: 3,
	}
	if diff := cmp.Diff(want, statsSince(before, now)); diff != "" {
		t.Errorf("statsSince (-want +got):\n%s", diff)
	}
}
