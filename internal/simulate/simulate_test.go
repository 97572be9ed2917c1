package simulate

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/internal/cli"
	"github.com/volbind/volbind/internal/manifest"
)

// quiet returns t's context with a logger that drops the Binder's logs
// (the injected faults would fill the test output).
func quiet(t *testing.T) context.Context {
	return klog.NewContext(t.Context(), logr.Discard())
}

func smallOptions() simulateOptions {
	s := defaultScenario()
	s.Volumes, s.Claims, s.Namespaces = 400, 400, 4
	s.Unbindable, s.PreBound = 0.05, 0.1
	return simulateOptions{Scenario: s, Workers: 2, ResyncPeriod: time.Minute, Deadline: time.Minute, Output: "json"}
}

// reasonCounts maps "reason: message" to the number of claims.
func reasonCounts(r *report) map[string]int {
	out := map[string]int{}
	for _, pr := range r.PendingReasons {
		out[pr.Reason+": "+pr.Message] = pr.Claims
	}
	return out
}

// TestSimulateReportMatchesAPI runs the real Binder on a small generated
// cluster and checks the report against the scenario's expectation and the
// in-memory API's own objects and counters.
func TestSimulateReportMatchesAPI(t *testing.T) {
	o := smallOptions()
	objs, exp := o.Scenario.generate()
	numClaims, numVolumes := len(objs.Claims), len(objs.Volumes)
	res, err := runSimulation(quiet(t), o, objs, io.Discard)
	if err != nil {
		t.Fatalf("runSimulation: %v", err)
	}
	if len(objs.Claims)+len(objs.Volumes) != 0 {
		t.Errorf("runSimulation left %d claims and %d volumes in its input; want it to release them once stored", len(objs.Claims), len(objs.Volumes))
	}
	r, srv := res.report, res.server
	if !r.Completed || len(r.Violations) > 0 {
		t.Fatalf("report: completed %v, violations %q", r.Completed, r.Violations)
	}

	bound, pending := 0, 0
	for _, c := range srv.Claims() {
		if c.Status.Phase == v1.ClaimBound {
			bound++
		} else {
			pending++
		}
	}
	unbindable := 0
	for _, n := range exp.Unbindable {
		unbindable += n
	}
	if bound != exp.Bindable || pending != unbindable || exp.Unbindable[unbindableTaken] == 0 {
		t.Fatalf("API has %d claims bound, %d pending; scenario expects %d bindable, %v unbindable", bound, pending, exp.Bindable, exp.Unbindable)
	}
	if r.Claims != numClaims || r.ClaimsBound != bound || r.ClaimsPending != pending || r.Bindings != bound ||
		r.VolumesBound != bound || r.VolumesAvailable != numVolumes-bound {
		t.Errorf("report counts = %+v; API has %d bound, %d pending", r, bound, pending)
	}

	st := srv.Stats()
	if r.SetupWrites != 0 || r.APIWrites != st.TotalWrites() || r.Conflicts != st.Conflicts || r.InjectedFaults != 0 {
		t.Errorf("report has %d writes, %d conflicts, %d faults; API counted %d, %d, %d",
			r.APIWrites, r.Conflicts, r.InjectedFaults, st.TotalWrites(), st.Conflicts, st.Faults)
	}
	// A binding is four writes, one of each; nothing else is written.
	for _, kind := range []bindertest.Kind{bindertest.KindVolume, bindertest.KindClaim} {
		for _, verb := range []bindertest.Verb{bindertest.VerbUpdate, bindertest.VerbUpdateStatus} {
			if got := st.Writes[kind][verb]; got != int64(bound) {
				t.Errorf("%s %s writes = %d, want one per binding (%d)", kind, verb, got, bound)
			}
		}
	}
	if r.WritesPerBinding != float64(st.TotalWrites())/float64(bound) || r.WritesPerBinding != 4 {
		t.Errorf("WritesPerBinding = %v, want %d/%d = 4", r.WritesPerBinding, st.TotalWrites(), bound)
	}
	if !(r.BindP50Millis > 0 && r.BindP50Millis <= r.BindP99Millis && r.BindP99Millis <= r.WallSeconds*1000) {
		t.Errorf("p50 %v ms, p99 %v ms, wall %v s: want 0 < p50 <= p99 <= wall", r.BindP50Millis, r.BindP99Millis, r.WallSeconds)
	}

	if !(r.PeakHeapMiB > 0 && r.PeakLiveHeapMiB > 0) || r.LiveHeapPerClaim != r.PeakLiveHeapMiB*(1<<20)/float64(r.Claims) {
		t.Errorf("peak heap %v MiB, live %v MiB, %v bytes per claim: want both peaks > 0 and live/claims per claim",
			r.PeakHeapMiB, r.PeakLiveHeapMiB, r.LiveHeapPerClaim)
	}

	wantReasons := map[string]int{
		"FailedBinding: no persistent volumes available for this claim and no storage class is set":                                  exp.Unbindable[unbindableNoClass],
		`FailedBinding: volume "…" already bound to a different claim.`:                                                              exp.Unbindable[unbindableTaken],
		"NoEvent: no volume matches; a claim of a storage class is left to dynamic provisioning (simulate registers no provisioner)": exp.Unbindable[unbindableTooLarge],
	}
	got := reasonCounts(r)
	for reason, n := range wantReasons {
		if got[reason] != n {
			t.Errorf("pending reasons = %v, want %d for %q", got, n, reason)
		}
	}
}

func TestSimulateWithFaults(t *testing.T) {
	o := smallOptions()
	o.ConflictRate, o.FailRate = 0.05, 0.02
	objs, exp := o.Scenario.generate()
	res, err := runSimulation(quiet(t), o, objs, io.Discard)
	if err != nil {
		t.Fatalf("runSimulation: %v", err)
	}
	r, st := res.report, res.server.Stats()
	if !r.Completed || len(r.Violations) > 0 || r.ClaimsBound != exp.Bindable {
		t.Fatalf("report with faults: completed %v, violations %q, %d bound, want %d", r.Completed, r.Violations, r.ClaimsBound, exp.Bindable)
	}
	if r.InjectedFaults == 0 || r.InjectedFaults != st.Faults || r.Conflicts == 0 || r.Conflicts != st.Conflicts {
		t.Errorf("report has %d faults, %d conflicts; API counted %d, %d; want some", r.InjectedFaults, r.Conflicts, st.Faults, st.Conflicts)
	}
	if r.APIWrites != st.TotalWrites() || r.WritesPerBinding <= 4 {
		t.Errorf("report has %d writes (%.2f per binding); API counted %d; want more than 4 per binding with failures",
			r.APIWrites, r.WritesPerBinding, st.TotalWrites())
	}
}

func TestSimulateDeadline(t *testing.T) {
	o := smallOptions()
	o.Deadline = time.Nanosecond
	objs, _ := o.Scenario.generate()
	res, err := runSimulation(quiet(t), o, objs, io.Discard)
	if err != nil {
		t.Fatalf("runSimulation: %v", err)
	}
	if res.report.Completed {
		t.Errorf("report.Completed = true after a deadline of 1ns")
	}
}

func TestSimulateEmpty(t *testing.T) {
	o := smallOptions()
	res, err := runSimulation(quiet(t), o, &manifest.Objects{}, io.Discard)
	if err != nil {
		t.Fatalf("runSimulation: %v", err)
	}
	if r := res.report; !r.Completed || r.Claims != 0 || r.APIWrites != 0 {
		t.Errorf("report of an empty cluster = %+v", r)
	}
}

func TestSimulateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, []string{"-volumes", "10", "-claims", "10"}, nil, &stdout, &stderr)
	var ee cli.ExitError
	if !errors.As(err, &ee) || ee.Code != 130 {
		t.Errorf("simulate with a cancelled context = %v, want exit status 130", err)
	}
	if !strings.Contains(stdout.String()+stderr.String(), "interrupted") {
		t.Errorf("stdout %q, stderr %q: want them to say the run was interrupted", stdout.String(), stderr.String())
	}
}

func TestSimulateCommand(t *testing.T) {
	profilePath := filepath.Join(t.TempDir(), "heap.out")
	cpuProfilePath := filepath.Join(t.TempDir(), "cpu.out")
	tests := []struct {
		name      string
		args      []string
		stdinFile string
		check     func(t *testing.T, stdout, stderr string)
	}{
		{
			name: "examples as JSON",
			args: []string{"-f", "../../examples/cluster.yaml", "-f", "../../examples/list.json", "-o", "json"},
			check: func(t *testing.T, stdout, stderr string) {
				var r report
				if err := json.Unmarshal([]byte(stdout), &r); err != nil {
					t.Fatalf("report is not JSON: %v\n%s", err, stdout)
				}
				// data-small → pv-small, data-medium → pv-medium, data-reserved → pv-large (pre-bound),
				// shared → pv-json; data-huge fits nothing.
				if r.Claims != 5 || r.ClaimsBound != 4 || r.ClaimsPending != 1 || !r.Completed || len(r.PendingReasons) != 1 {
					t.Errorf("report = %+v, want 4 of 5 claims bound and one reason", r)
				}
				// The volumes have no status: each is made Available before the claims come.
				if r.SetupWrites != 4 || r.APIWrites != 16 {
					t.Errorf("report has %d setup writes and %d writes, want 4 and 4 per binding", r.SetupWrites, r.APIWrites)
				}
				if !strings.Contains(stderr, "cluster.yaml: document 9: skipped: kind ConfigMap") {
					t.Errorf("stderr = %q, want a warning about the skipped ConfigMap", stderr)
				}
			},
		},
		{
			name: "every pending reason",
			args: []string{"-f", "../../examples/pending.yaml", "-o", "json"},
			check: func(t *testing.T, stdout, _ string) {
				var r report
				if err := json.Unmarshal([]byte(stdout), &r); err != nil {
					t.Fatalf("report is not JSON: %v\n%s", err, stdout)
				}
				want := map[string]int{
					"FailedBinding: no persistent volumes available for this claim and no storage class is set":                                  1,
					"NoEvent: no volume matches; a claim of a storage class is left to dynamic provisioning (simulate registers no provisioner)": 1,
					`VolumeMismatch: Cannot bind to requested volume "…": requested PV is too small`:                                             1,
					"WaitForFirstConsumer: waiting for first consumer to be created before binding":                                              1,
				}
				if diff := cmp.Diff(want, reasonCounts(&r)); diff != "" || r.ClaimsBound != 1 {
					t.Errorf("%d claims bound, pending reasons (-want +got):\n%s", r.ClaimsBound, diff)
				}
			},
		},
		{
			name: "text report with progress",
			args: []string{"-volumes", "20", "-claims", "20", "-o", "text", "-progress", "always"},
			check: func(t *testing.T, stdout, stderr string) {
				wantContains(t, "text report", stdout, "claims:", "API writes:", "created → Bound:", "invariants:        ok")
				if !strings.Contains(stderr, "\rbound 20/20 claims in") {
					t.Errorf("stderr = %q, want the final progress line", stderr)
				}
			},
		},
		{
			name: "heap profile",
			args: []string{"-volumes", "20", "-claims", "20", "-o", "text", "-memprofile", profilePath},
			check: func(t *testing.T, stdout, _ string) {
				wantContains(t, "text report", stdout, "peak heap:         ", "bytes per claim)")
				if p := readProfile(t, profilePath); !bytes.Contains(p, []byte("inuse_space")) {
					t.Errorf("-memprofile wrote no heap profile: %d bytes without inuse_space", len(p))
				}
			},
		},
		{
			name: "CPU profile",
			args: []string{"-volumes", "20", "-claims", "20", "-o", "text", "-cpuprofile", cpuProfilePath},
			check: func(t *testing.T, stdout, _ string) {
				wantContains(t, "text report", stdout, "invariants:        ok")
				if p := readProfile(t, cpuProfilePath); !bytes.Contains(p, []byte("nanoseconds")) {
					t.Errorf("-cpuprofile wrote no CPU profile: %d bytes without the nanoseconds unit", len(p))
				}
			},
		},
		{
			name:      "YAML dump loads back",
			args:      []string{"-f", "-", "-o", "json", "-dump-objects", "-"},
			stdinFile: "../../examples/cluster.yaml",
			check: func(t *testing.T, stdout, _ string) {
				// The JSON report comes first; the dump follows it.
				dec := json.NewDecoder(strings.NewReader(stdout))
				var r report
				if err := dec.Decode(&r); err != nil {
					t.Fatalf("no JSON report first: %v", err)
				}
				stdout = stdout[dec.InputOffset():]
				back := &manifest.Objects{}
				if err := manifest.Load("dump", strings.NewReader(stdout), back); err != nil || len(back.Claims) != 4 || len(back.Volumes) != 3 || len(back.Classes) != 1 {
					t.Fatalf("the YAML dump does not load back: %v (%d claims, %d volumes)", err, len(back.Claims), len(back.Volumes))
				}
				for _, c := range back.Claims {
					if c.Name == "data-reserved" && (c.Status.Phase != v1.ClaimBound || c.Spec.VolumeName != "pv-large") {
						t.Errorf("data-reserved = %s on %q, want Bound on pv-large", c.Status.Phase, c.Spec.VolumeName)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdin []byte
			if tc.stdinFile != "" {
				var err error
				if stdin, err = os.ReadFile(tc.stdinFile); err != nil {
					t.Fatal(err)
				}
			}
			var stdout, stderr bytes.Buffer
			if err := Run(t.Context(), tc.args, bytes.NewReader(stdin), &stdout, &stderr); err != nil {
				t.Fatalf("simulate %q: %v (stderr %q)", tc.args, err, stderr.String())
			}
			tc.check(t, stdout.String(), stderr.String())
		})
	}
}

func TestSimulateMalformedInput(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := Run(t.Context(), []string{"-f", "-"}, strings.NewReader("apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: a\n---\nkind: [\n"), &stdout, &stderr)
	var me *manifest.Error
	if !errors.As(err, &me) || me.File != "-" || me.Doc != 2 {
		t.Errorf("simulate on malformed stdin = %v, want a manifest.Error for - document 2", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want no report", stdout.String())
	}
}

func TestOutcome(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		r    report
		want error
	}{
		{name: "ok", ctx: t.Context(), r: report{Completed: true}},
		{name: "deadline passed with work left", ctx: t.Context(), r: report{}, want: cli.ExitError{Code: 3}},
		{name: "broken invariants", ctx: t.Context(), r: report{Completed: true, Violations: []string{"x"}}, want: cli.ExitError{Code: 1}},
		{name: "broken invariants and deadline", ctx: t.Context(), r: report{Violations: []string{"x"}}, want: cli.ExitError{Code: 1}},
		{name: "interrupted", ctx: cancelled, r: report{Violations: []string{"x"}}, want: cli.ExitError{Code: 130}},
		{name: "interrupted (report)", ctx: t.Context(), r: report{Interrupted: true}, want: cli.ExitError{Code: 130}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := outcome(tc.ctx, &tc.r)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("outcome = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestResyncPending creates a volume after its claim was found without a
// match: the claim waits for a resync, which resyncPending stands in for.
func TestResyncPending(t *testing.T) {
	ctx := quiet(t)
	srv := bindertest.New()
	b, err := binder.New(srv, binder.Config{ResyncPeriod: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler())()
	defer srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler())()
	clock := newBindClock(time.Now(), nil)
	defer srv.AddEventHandler(bindertest.KindClaim, clock.handler())()
	class := "manual"
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: storage(1 << 30)}},
	}
	if err := srv.Seed(ctx, claim); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		if err := b.Run(runCtx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	defer func() { cancel(); <-runDone }()
	poll(t, "claim synced", func(context.Context) bool {
		c, err := srv.GetClaim(ctx, "default", "c")
		return err == nil && c.Status.Phase == v1.ClaimPending && b.WaitForQuiescence(ctx) == nil
	})
	if _, err := srv.CreateVolume(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv"},
		Spec: v1.PersistentVolumeSpec{StorageClassName: class, Capacity: storage(1 << 30), AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/pv"}}},
	}); err != nil {
		t.Fatal(err)
	}
	poll(t, "volume Available", func(context.Context) bool {
		pv, err := srv.GetVolume(ctx, "pv")
		return err == nil && pv.Status.Phase == v1.VolumeAvailable && b.WaitForQuiescence(ctx) == nil
	})
	before := len(clock.pending())
	passes, err := resyncPending(ctx, b, clock)
	if err != nil {
		t.Fatalf("resyncPending: %v", err)
	}
	if after := clock.pending(); passes != before || len(after) != 0 {
		t.Errorf("resyncPending = %d passes with %d claims pending before, %q after; want the claim bound by one pass", passes, before, after)
	}
	t.Logf("claims pending before the resync pass: %d", before)
}

func TestBindClock(t *testing.T) {
	t.Parallel()
	preBound := testClaim("ns", "old", "pv-old", v1.ClaimBound)
	c := newBindClock(time.Now(), []*v1.PersistentVolumeClaim{preBound})
	h := c.handler()
	a, b, lost := testClaim("ns", "a", "", v1.ClaimPending), testClaim("ns", "b", "", v1.ClaimPending), testClaim("ns", "l", "x", v1.ClaimLost)
	for _, obj := range []*v1.PersistentVolumeClaim{preBound, a, b, lost} {
		h.OnAdd(obj, false)
	}
	boundA := testClaim("ns", "a", "pv-a", v1.ClaimBound)
	h.OnUpdate(a, boundA)
	h.OnUpdate(boundA, boundA) // seen Bound twice: one binding
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/b", Obj: b})
	if got := c.bound(); got != 1 {
		t.Errorf("bound() = %d, want 1 (ns/a; ns/old was Bound before)", got)
	}
	if got := c.latencies(); len(got) != 1 || got[0] < 0 {
		t.Errorf("latencies() = %v, want one", got)
	}
	h.OnAdd(testClaim("ns", "c", "", v1.ClaimPending), false)
	if diff := cmp.Diff([]string{"ns/c"}, c.pending()); diff != "" {
		t.Errorf("pending() (-want +got):\n%s", diff)
	}
}

// readProfile returns the uncompressed pprof profile in name: a gzipped
// protocol buffer whose string table names its sample types and units.
func readProfile(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s is no pprof profile: %v", name, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return data
}
