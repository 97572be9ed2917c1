package explain_test

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/internal/explain"
)

var (
	imm  = storagev1.VolumeBindingImmediate
	wffc = storagev1.VolumeBindingWaitForFirstConsumer
)

// TestClaimVerdicts covers each verdict and the way to it, as the
// controller's claim sync takes it.
func TestClaimVerdicts(t *testing.T) {
	t.Parallel()
	type want struct {
		verdict     explain.Verdict
		volume      string
		summary     string // a part of the summary or reason
		defaultC    string
		provisioner explain.ProvisionerKind
		contenders  []string
	}
	bound := func() explain.Objects {
		v, c := pv("pv-1", "fast", "10Gi"), pvc("data", "fast", "5Gi")
		bind(v, c)
		return explain.Objects{Volumes: []*v1.PersistentVolume{v}, Claims: []*v1.PersistentVolumeClaim{c}}
	}
	withDefault := func(sc *storagev1.StorageClass) *storagev1.StorageClass {
		metav1.SetMetaDataAnnotation(&sc.ObjectMeta, "storageclass.kubernetes.io/is-default-class", "true")
		return sc
	}
	for _, tc := range []struct {
		name string
		objs explain.Objects
		cfg  explain.Config
		want want
	}{{
		name: "bound",
		objs: bound(),
		want: want{verdict: explain.Bound, volume: "pv-1", summary: "bound to pv-1"},
	}, {
		name: "the smallest volume that fits",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{class("fast", "kubernetes.io/no-provisioner", imm)},
			Volumes: []*v1.PersistentVolume{pv("big", "fast", "100Gi"), pv("small", "fast", "10Gi"), pv("tiny", "fast", "1Gi")},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "fast", "5Gi")},
		},
		want: want{verdict: explain.WouldBind, volume: "small", summary: "the smallest volume that fits"},
	}, {
		name: "a volume pre-bound to the claim wins over a smaller one",
		objs: func() explain.Objects {
			pre := pv("pre", "fast", "100Gi")
			pre.Spec.ClaimRef = &v1.ObjectReference{Namespace: "app", Name: "data"}
			return explain.Objects{Volumes: []*v1.PersistentVolume{pre, pv("small", "fast", "10Gi")},
				Claims: []*v1.PersistentVolumeClaim{pvc("data", "fast", "5Gi")}}
		}(),
		want: want{verdict: explain.WouldBind, volume: "pre", summary: "pre-bound to the claim"},
	}, {
		name: "asks for a volume by name",
		objs: func() explain.Objects {
			c := pvc("data", "fast", "5Gi")
			c.Spec.VolumeName = "big"
			return explain.Objects{Volumes: []*v1.PersistentVolume{pv("big", "fast", "100Gi"), pv("small", "fast", "10Gi")},
				Claims: []*v1.PersistentVolumeClaim{c}}
		}(),
		want: want{verdict: explain.WouldBind, volume: "big", summary: "by name"},
	}, {
		name: "asks for a volume that is too small",
		objs: func() explain.Objects {
			c := pvc("data", "fast", "50Gi")
			c.Spec.VolumeName = "small"
			return explain.Objects{Volumes: []*v1.PersistentVolume{pv("small", "fast", "10Gi")}, Claims: []*v1.PersistentVolumeClaim{c}}
		}(),
		want: want{verdict: explain.Unsatisfiable, summary: `Cannot bind to requested volume "small": requested PV is too small`},
	}, {
		name: "asks for a volume that does not exist",
		objs: func() explain.Objects {
			c := pvc("data", "fast", "5Gi")
			c.Spec.VolumeName = "gone"
			return explain.Objects{Claims: []*v1.PersistentVolumeClaim{c}}
		}(),
		want: want{verdict: explain.Unsatisfiable, summary: "gone, which does not exist"},
	}, {
		name: "lost its volume",
		objs: func() explain.Objects {
			o := bound()
			o.Volumes = nil
			return o
		}(),
		want: want{verdict: explain.Unsatisfiable, summary: "Lost"},
	}, {
		name: "waits for its first consumer",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{class("local", "kubernetes.io/no-provisioner", wffc)},
			Volumes: []*v1.PersistentVolume{pv("local-1", "local", "10Gi")},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "local", "5Gi")},
			Pods:    []*v1.Pod{podUsing("db-0", "data")},
		},
		want: want{verdict: explain.WaitForFirstConsumer, summary: "waits for pod app/db-0 to be scheduled"},
	}, {
		name: "an external provisioner",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{class("ebs", "ebs.csi.aws.com", imm)},
			Volumes: []*v1.PersistentVolume{pv("small", "ebs", "1Gi")},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "ebs", "5Gi")},
		},
		want: want{verdict: explain.WillProvision, summary: "ebs.csi.aws.com (external)", provisioner: explain.External},
	}, {
		name: "an in-tree provisioner",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{class("disk", "example.com/disk", imm)},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "disk", "5Gi")},
		},
		cfg:  explain.Config{InTreeProvisioners: []string{"example.com/disk"}},
		want: want{verdict: explain.WillProvision, summary: "provisions volume pvc-uid-data itself", provisioner: explain.InTree},
	}, {
		name: "a migrated in-tree plugin",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{class("standard", "kubernetes.io/gce-pd", imm)},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "standard", "5Gi")},
		},
		want: want{verdict: explain.WillProvision, summary: "pd.csi.storage.gke.io (in-tree kubernetes.io/gce-pd, migrated to CSI)", provisioner: explain.Migrated},
	}, {
		name: "provisioning is off",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{class("ebs", "ebs.csi.aws.com", imm)},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "ebs", "5Gi")},
		},
		cfg:  explain.Config{NoProvisioning: true},
		want: want{verdict: explain.Unsatisfiable, summary: "dynamic provisioning is off"},
	}, {
		name: "a class that does not provision",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{class("manual", "kubernetes.io/no-provisioner", imm)},
			Volumes: []*v1.PersistentVolume{pv("small", "manual", "1Gi")},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "manual", "5Gi")},
		},
		want: want{verdict: explain.Unsatisfiable, summary: `storage class "manual" does not provision volumes`},
	}, {
		name: "no class and no volume",
		objs: explain.Objects{Claims: []*v1.PersistentVolumeClaim{pvc("data", "", "5Gi")}},
		want: want{verdict: explain.Unsatisfiable, summary: "no persistent volumes available for this claim and no storage class is set"},
	}, {
		name: "the default class is assigned retroactively",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{withDefault(class("ebs", "ebs.csi.aws.com", imm))},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "-", "5Gi")},
		},
		want: want{verdict: explain.WillProvision, summary: "retroactive default StorageClass assignment", defaultC: "ebs", provisioner: explain.External},
	}, {
		name: "a volume without class wins over the default class",
		objs: explain.Objects{
			Classes: []*storagev1.StorageClass{withDefault(class("ebs", "ebs.csi.aws.com", imm))},
			Volumes: []*v1.PersistentVolume{pv("plain", "", "10Gi")},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "-", "5Gi")},
		},
		want: want{verdict: explain.WouldBind, volume: "plain"},
	}, {
		name: "a volume not marked Available yet",
		objs: func() explain.Objects {
			v := pv("new", "fast", "10Gi")
			v.Status.Phase = v1.VolumePending
			return explain.Objects{Volumes: []*v1.PersistentVolume{v}, Claims: []*v1.PersistentVolumeClaim{pvc("data", "fast", "5Gi")}}
		}(),
		want: want{verdict: explain.WouldBind, volume: "new", summary: "once it is Available"},
	}, {
		name: "a volume not marked Available yet, with AvailableDelay",
		objs: func() explain.Objects {
			v := pv("new", "fast", "10Gi")
			v.Status.Phase = v1.VolumePending
			return explain.Objects{Volumes: []*v1.PersistentVolume{v}, Claims: []*v1.PersistentVolumeClaim{pvc("data", "fast", "5Gi")}}
		}(),
		cfg:  explain.Config{UnmarkedCandidates: true},
		want: want{verdict: explain.WouldBind, volume: "new", summary: "would bind to new now"},
	}, {
		name: "two claims fit one volume",
		objs: explain.Objects{
			Volumes: []*v1.PersistentVolume{pv("only", "fast", "10Gi")},
			Claims:  []*v1.PersistentVolumeClaim{pvc("data", "fast", "5Gi"), pvc("logs", "fast", "8Gi")},
		},
		want: want{verdict: explain.WouldBind, volume: "only", contenders: []string{"app/logs"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := explainClaim(t, newExplainer(t, tc.objs, tc.cfg), "data", explain.ClaimOptions{})
			w := tc.want
			text := x.Summary + " | " + x.Reason
			switch {
			case x.Verdict != w.verdict || x.Volume != w.volume:
				t.Errorf("verdict %s, volume %q (%s); want %s, %q", x.Verdict, x.Volume, text, w.verdict, w.volume)
			case !strings.Contains(text, w.summary):
				t.Errorf("summary and reason %q; want them to say %q", text, w.summary)
			case x.DefaultClass != w.defaultC:
				t.Errorf("DefaultClass = %q, want %q", x.DefaultClass, w.defaultC)
			case w.provisioner != "" && (x.Provisioner == nil || x.Provisioner.Kind != w.provisioner):
				t.Errorf("Provisioner = %+v, want kind %s", x.Provisioner, w.provisioner)
			case strings.Join(x.Contenders, ",") != strings.Join(w.contenders, ","):
				t.Errorf("Contenders = %v, want %v", x.Contenders, w.contenders)
			}
		})
	}
}

// TestClaimRules lists one volume failing each rule and checks the rule
// and how far off it says each is, closest first.
func TestClaimRules(t *testing.T) {
	t.Parallel()
	claim := pvc("data", "fast", "10Gi")
	claim.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "hot"}}
	claim.Spec.VolumeAttributesClassName = ptr.To("gold")
	ok := func(name, size string) *v1.PersistentVolume {
		v := pv(name, "fast", size)
		v.Labels = map[string]string{"tier": "hot"}
		v.Spec.VolumeAttributesClassName = ptr.To("gold")
		return v
	}
	other := pvc("other", "fast", "1Gi")
	bound := ok("bound", "20Gi")
	bind(bound, other)
	deleting := ok("deleting", "20Gi")
	deleting.DeletionTimestamp = &metav1.Time{}
	released := ok("released", "20Gi")
	released.Status.Phase = v1.VolumeReleased
	rwx := ok("rwx", "20Gi")
	rwx.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
	block := ok("block", "20Gi")
	block.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock)
	cold := ok("cold", "20Gi")
	cold.Labels["tier"] = "cold"
	silver := ok("silver", "20Gi")
	silver.Spec.VolumeAttributesClassName = ptr.To("silver")
	slow := ok("slow", "20Gi")
	slow.Spec.StorageClassName = "slow"
	e := newExplainer(t, explain.Objects{
		Volumes: []*v1.PersistentVolume{slow, bound, deleting, released, rwx, block, ok("small", "8Gi"), cold, silver, ok("fits", "30Gi")},
		Claims:  []*v1.PersistentVolumeClaim{claim, other},
	}, explain.Config{})
	x := explainClaim(t, e, "data", explain.ClaimOptions{Max: -1})
	want := []struct {
		volume string
		rule   explain.Rule
		detail string
	}{
		{"fits", explain.Fits, "chosen"},
		{"silver", explain.VolumeAttributesClass, `volume attributes class "silver", the claim's is "gold"`},
		{"cold", explain.Selector, "labels {tier=cold} do not match the selector tier=hot"},
		{"small", explain.Capacity, "capacity 8Gi < request 10Gi"},
		{"block", explain.VolumeMode, "volume mode Block, the claim's is Filesystem"},
		{"rwx", explain.AccessModes, "offers RWX, the claim asks for RWO"},
		{"released", explain.NotAvailable, "phase Released, not Available"},
		{"deleting", explain.Deleting, "being deleted"},
		{"bound", explain.BoundElsewhere, "bound to app/other"},
	}
	// Other classes are only counted.
	if len(x.More) != 1 || x.More[0] != (explain.RuleCount{Rule: explain.StorageClass, Count: 1}) {
		t.Errorf("More = %v, want the volume of class slow counted", x.More)
	}
	if len(x.Candidates) != len(want) {
		t.Fatalf("%d candidates, want %d: %+v", len(x.Candidates), len(want), x.Candidates)
	}
	for i, w := range want {
		c := x.Candidates[i]
		if c.Volume != w.volume || c.Rule != w.rule || c.Detail != w.detail {
			t.Errorf("candidate %d = %s %s %q, want %s %s %q", i, c.Volume, c.Rule, c.Detail, w.volume, w.rule, w.detail)
		}
	}
}

// TestClaimMax lists the closest volumes only and counts the others by
// rule.
func TestClaimMax(t *testing.T) {
	t.Parallel()
	objs := explain.Objects{Claims: []*v1.PersistentVolumeClaim{pvc("data", "fast", "10Gi")}}
	for _, size := range []string{"1Gi", "2Gi", "3Gi", "20Gi", "30Gi"} {
		objs.Volumes = append(objs.Volumes, pv("fast-"+size, "fast", size))
		objs.Volumes = append(objs.Volumes, pv("slow-"+size, "slow", size))
	}
	x := explainClaim(t, newExplainer(t, objs, explain.Config{}), "data", explain.ClaimOptions{Max: 3})
	var got []string
	for _, c := range x.Candidates {
		got = append(got, c.Volume)
	}
	if want := "fast-20Gi,fast-30Gi,fast-3Gi"; strings.Join(got, ",") != want {
		t.Errorf("candidates %v, want %s", got, want)
	}
	wantMore := []explain.RuleCount{{Rule: explain.StorageClass, Count: 5}, {Rule: explain.Capacity, Count: 2}}
	if x.Volumes != 10 {
		t.Errorf("Volumes = %d, want 10", x.Volumes)
	}
	if len(x.More) != len(wantMore) || x.More[0] != wantMore[0] || x.More[1] != wantMore[1] {
		t.Errorf("More = %v, want %v", x.More, wantMore)
	}
}

// TestClaimOnNode matches a WaitForFirstConsumer claim as kube-scheduler
// does on a node: the volume of another zone fails node affinity.
func TestClaimOnNode(t *testing.T) {
	t.Parallel()
	e := newExplainer(t, explain.Objects{
		Classes: []*storagev1.StorageClass{class("zonal", "kubernetes.io/no-provisioner", wffc)},
		Nodes:   []*v1.Node{zoneNode("a-1", "a"), zoneNode("b-1", "b")},
		Volumes: []*v1.PersistentVolume{inZone(pv("in-a", "zonal", "10Gi"), "a"), inZone(pv("in-b", "zonal", "20Gi"), "b")},
		Claims:  []*v1.PersistentVolumeClaim{pvc("data", "zonal", "5Gi")},
	}, explain.Config{})
	x := explainClaim(t, e, "data", explain.ClaimOptions{Node: "b-1"})
	if x.Search != explain.SchedulerSearch || x.Node != "b-1" || x.Verdict != explain.WaitForFirstConsumer {
		t.Fatalf("search %s on %q, verdict %s; want the scheduler's on b-1, WaitForFirstConsumer", x.Search, x.Node, x.Verdict)
	}
	if !strings.Contains(x.Reason, "on node b-1, kube-scheduler would choose in-b") {
		t.Errorf("Reason = %q, want it to name the volume chosen on b-1", x.Reason)
	}
	if c := x.Candidates[0]; c.Volume != "in-b" || !c.Chosen {
		t.Errorf("first candidate %+v, want in-b chosen", c)
	}
	if c := x.Candidates[1]; c.Volume != "in-a" || c.Rule != explain.NodeAffinity ||
		c.Detail != "node affinity (topology.kubernetes.io/zone in [a]) excludes node b-1 (topology.kubernetes.io/zone=b)" {
		t.Errorf("second candidate %+v, want in-a rejected by its node affinity", c)
	}
}

// TestClaimErrors: unknown objects and a node for an immediate claim.
func TestClaimErrors(t *testing.T) {
	t.Parallel()
	e := newExplainer(t, explain.Objects{
		Classes: []*storagev1.StorageClass{class("fast", "kubernetes.io/no-provisioner", imm)},
		Nodes:   []*v1.Node{zoneNode("a-1", "a")},
		Claims:  []*v1.PersistentVolumeClaim{pvc("data", "fast", "5Gi")},
	}, explain.Config{})
	for _, tc := range []struct {
		name, claim string
		opts        explain.ClaimOptions
		want        error
	}{
		{"unknown claim", "nope", explain.ClaimOptions{}, explain.ErrNotFound},
		{"unknown node", "data", explain.ClaimOptions{Node: "nope"}, explain.ErrNotFound},
		{"node for an immediate claim", "data", explain.ClaimOptions{Node: "a-1"}, explain.ErrNodeForImmediate},
	} {
		if _, err := e.Claim("app", tc.claim, tc.opts); !errors.Is(err, tc.want) {
			t.Errorf("%s: Claim error %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestNewInvalidInput: New refuses objects it cannot index, naming them.
func TestNewInvalidInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		objs explain.Objects
		want string
	}{
		{"nil volume", explain.Objects{Volumes: []*v1.PersistentVolume{nil}}, "PersistentVolume item 1: nil"},
		{"volume twice", explain.Objects{Volumes: []*v1.PersistentVolume{pv("a", "", "1Gi"), pv("a", "", "2Gi")}},
			"PersistentVolume a (item 2): the name is used twice"},
		{"claim without namespace", explain.Objects{Claims: []*v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "x"}}}},
			"PersistentVolumeClaim x (item 1): no name or namespace"},
		{"unnamed class", explain.Objects{Classes: []*storagev1.StorageClass{{}}}, "StorageClass item 1: no name"},
	} {
		_, err := explain.New(tc.objs, explain.Config{})
		if !errors.Is(err, explain.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New error %v, want ErrInvalidInput saying %q", tc.name, err, tc.want)
		}
	}
}

// TestRuleText: rules travel as names in JSON and YAML.
func TestRuleText(t *testing.T) {
	t.Parallel()
	for r := explain.Fits; r <= explain.NodeAffinity; r++ {
		b, err := r.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%d): %v", r, err)
		}
		var back explain.Rule
		if err := back.UnmarshalText(b); err != nil || back != r {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, back, err, r)
		}
	}
	if _, err := explain.Rule(99).MarshalText(); err == nil {
		t.Error("MarshalText(99) succeeded")
	}
}

// TestRolledBackVolumeBySearch: a volume a controller's search bound to a
// claim it no longer satisfies is that claim's until the claim's next sync
// rolls the binding back: other claims see it bound elsewhere, and bind to
// it once it is Available (if they sync after that claim); kube-scheduler
// sees it bound too. The claim itself looks past it.
func TestRolledBackVolumeBySearch(t *testing.T) {
	t.Parallel()
	old := pvc("old", "fast", "20Gi")
	chosen := pv("pv-1", "fast", "10Gi")
	chosen.Spec.ClaimRef = &v1.ObjectReference{Namespace: old.Namespace, Name: old.Name, UID: old.UID}
	chosen.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
	chosen.Status.Phase = v1.VolumeBound
	waiting := pvc("waiting", "fast", "5Gi")
	now := pvc("now", "fast", "5Gi")
	for _, tc := range []struct {
		mode    storagev1.VolumeBindingMode
		claim   *v1.PersistentVolumeClaim
		search  explain.Search
		verdict explain.Verdict
		volume  string
	}{
		{storagev1.VolumeBindingImmediate, now, explain.ControllerSearch, explain.WouldBind, "pv-1"},
		{wffc, waiting, explain.SchedulerSearch, explain.WaitForFirstConsumer, ""},
	} {
		objs := explain.Objects{Classes: []*storagev1.StorageClass{class("fast", "", tc.mode)},
			Volumes: []*v1.PersistentVolume{chosen}, Claims: []*v1.PersistentVolumeClaim{old, tc.claim}}
		e := newExplainer(t, objs, explain.Config{})
		x := explainClaim(t, e, tc.claim.Name, explain.ClaimOptions{})
		if x.Search != tc.search || x.Verdict != tc.verdict || x.Volume != tc.volume ||
			len(x.Candidates) != 1 || x.Candidates[0].Rule != explain.BoundElsewhere {
			t.Errorf("%s claim: %s search, verdict %s, volume %q, candidates %+v; want a %s search, %s %q, pv-1 bound elsewhere",
				tc.mode, x.Search, x.Verdict, x.Volume, x.Candidates, tc.search, tc.verdict, tc.volume)
		}
		if tc.volume != "" && !strings.Contains(x.Reason, "no longer satisfies") {
			t.Errorf("%s claim: reason %q, want the rollback named", tc.mode, x.Reason)
		}
		wants := pvc("wants", "fast", "5Gi")
		wants.Spec.VolumeName = "pv-1"
		e = newExplainer(t, explain.Objects{Classes: objs.Classes, Volumes: objs.Volumes,
			Claims: []*v1.PersistentVolumeClaim{old, tc.claim, wants}}, explain.Config{})
		if x := explainClaim(t, e, "wants", explain.ClaimOptions{}); x.Verdict != explain.WouldBind || x.Volume != "pv-1" ||
			!strings.Contains(x.Reason, "no longer satisfies") {
			t.Errorf("%s: claim naming pv-1: verdict %s %q (%s); want WouldBind pv-1 once the binding is rolled back", tc.mode, x.Verdict, x.Volume, x.Reason)
		}
		own := explainClaim(t, e, "old", explain.ClaimOptions{})
		if own.Volume == "pv-1" || len(own.Candidates) != 1 || own.Candidates[0].Rule != explain.Capacity {
			t.Errorf("%s: claim old: verdict %s %q, candidates %+v; want pv-1 rejected by capacity", tc.mode, own.Verdict, own.Volume, own.Candidates)
		}
	}
}

// TestRequestedVolumeNotMarkedYet: a claim naming an unbound volume that is
// not Available yet binds to it now, but the volume's own sync marks it
// Available first, and a pending claim it fits may take it then: that
// claim is a contender.
func TestRequestedVolumeNotMarkedYet(t *testing.T) {
	t.Parallel()
	failed := pv("pv-1", "manual", "10Gi")
	failed.Status.Phase = v1.VolumeFailed
	wants := pvc("wants", "manual", "10Gi")
	wants.Spec.VolumeName = "pv-1"
	other := pvc("other", "manual", "1Gi")
	e := newExplainer(t, explain.Objects{Classes: []*storagev1.StorageClass{class("manual", "", storagev1.VolumeBindingImmediate)},
		Volumes: []*v1.PersistentVolume{failed}, Claims: []*v1.PersistentVolumeClaim{wants, other}}, explain.Config{})
	x := explainClaim(t, e, "wants", explain.ClaimOptions{})
	if x.Verdict != explain.WouldBind || x.Volume != "pv-1" || strings.Join(x.Contenders, ",") != "app/other" {
		t.Errorf("verdict %s %q, contenders %v; want WouldBind pv-1 contended by app/other", x.Verdict, x.Volume, x.Contenders)
	}
}

// TestClaimedFirst: kube-controller-manager searches the access-mode sets
// fewest modes first, so a smaller RWO volume wins over an RWO+ROX volume a
// search already bound to the claim; a binder.Binder (ClaimedFirst)
// completes the binding it began.
func TestClaimedFirst(t *testing.T) {
	t.Parallel()
	claim := pvc("data", "fast", "1Gi")
	small := pv("pv-a", "fast", "1500Mi")
	begun := pv("pv-b", "fast", "2Gi")
	begun.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany}
	begun.Spec.ClaimRef = &v1.ObjectReference{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	begun.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
	begun.Status.Phase = v1.VolumeBound
	objs := explain.Objects{Classes: []*storagev1.StorageClass{class("fast", "", storagev1.VolumeBindingImmediate)},
		Volumes: []*v1.PersistentVolume{small, begun}, Claims: []*v1.PersistentVolumeClaim{claim}}
	for _, tc := range []struct {
		claimedFirst bool
		want         string
	}{{false, "pv-a"}, {true, "pv-b"}} {
		x := explainClaim(t, newExplainer(t, objs, explain.Config{ClaimedFirst: tc.claimedFirst}), "data", explain.ClaimOptions{})
		if x.Verdict != explain.WouldBind || x.Volume != tc.want {
			t.Errorf("ClaimedFirst=%t: verdict %s %q, want WouldBind %s", tc.claimedFirst, x.Verdict, x.Volume, tc.want)
		}
	}
}
