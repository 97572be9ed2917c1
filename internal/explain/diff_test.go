package explain_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/explain"
	"github.com/volbind/volbind/internal/randcluster"
	"github.com/volbind/volbind/internal/testhelp"
)

var (
	diffSeed     = flag.Uint64("explain.seed", 1, "first seed of TestDifferential")
	diffClusters = flag.Int("explain.clusters", 100, "clusters per generator in TestDifferential (10 with -short)")
)

// TestDifferential explains every claim of random clusters, then lets a
// Binder run each cluster to a standstill and checks that what the
// explanation said is what happened: a claim said to be bound or to bind
// to V is bound to V (or, where the explanation names contenders or
// alternatives, to one of those, or V went to a contender); a claim that
// waits for a consumer or that nothing can satisfy is not bound; one to be
// provisioned gets its volume (in-tree) or is handed to its provisioner
// (external); and every candidate volume fails the rule it is rejected by,
// or fits when it is said to. Pods are checked against
// binder/scheduling's Find (TestDifferentialPods). Replay a failure with
// -explain.seed=N -explain.clusters=1 -run 'TestDifferential/GEN$'.
func TestDifferential(t *testing.T) {
	n := *diffClusters
	if testing.Short() && n > 10 {
		n = 10
	}
	for _, g := range generators {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			t.Logf("seeds %d to %d", *diffSeed, *diffSeed+uint64(n)-1)
			for i := range n {
				c := g.make(*diffSeed + uint64(i))
				c.drawController()
				if err := runClaimCase(t.Context(), c); err != nil {
					t.Fatalf("%s: %v", c, err)
				}
			}
		})
	}
}

// runClaimCase explains the claims of c, runs a Binder on it and compares.
func runClaimCase(ctx context.Context, c *diffCase) error {
	ctx = klog.NewContext(ctx, logr.Discard())
	fc := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	srv := bindertest.NewWithConfig(bindertest.Config{Clock: fc})
	if err := srv.Seed(ctx, c.objs...); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	objs := c.objectsOf(srv)
	e, err := explain.New(objs, c.explainConfig())
	if err != nil {
		return err
	}
	before := make(map[string]*v1.PersistentVolumeClaim, len(objs.Claims))
	xs := make(map[string]*explain.ClaimExplanation, len(objs.Claims))
	volumes := make(map[string]*v1.PersistentVolume, len(objs.Volumes))
	for _, pv := range objs.Volumes {
		volumes[pv.Name] = pv
	}
	for _, pvc := range objs.Claims {
		x, err := e.Claim(pvc.Namespace, pvc.Name, explain.ClaimOptions{Max: -1})
		if err != nil {
			return fmt.Errorf("explain claim %s: %w", cache.Key(pvc), err)
		}
		if err := checkExplanation(x, pvc, volumes, c.availableDelay); err != nil {
			return fmt.Errorf("claim %s: %w\n%s", x.Claim, err, dump(x))
		}
		before[x.Claim], xs[x.Claim] = pvc, x
	}
	if err := settle(ctx, c, srv, fc); err != nil {
		return err
	}
	after := make(map[string]*v1.PersistentVolumeClaim)
	for _, pvc := range srv.Claims() {
		after[cache.Key(pvc)] = pvc
	}
	final := make(map[string]*v1.PersistentVolume)
	for _, pv := range srv.Volumes() {
		final[pv.Name] = pv
	}
	for key, x := range xs {
		if err := checkOutcome(x, before[key], after[key], final); err != nil {
			var ref *v1.ObjectReference
			var phase v1.PersistentVolumePhase
			if pv := final[x.Volume]; pv != nil {
				ref, phase = pv.Spec.ClaimRef, pv.Status.Phase
			}
			return fmt.Errorf("claim %s: %w\nexplanation:\n%s\nafter: volumeName=%q phase=%s annotations=%v; volume %q phase %s claimRef %v",
				key, err, dump(x), after[key].Spec.VolumeName, after[key].Status.Phase, after[key].Annotations, x.Volume, phase, ref)
		}
	}
	return nil
}

// checkExplanation checks an explanation against the claim alone.
func checkExplanation(x *explain.ClaimExplanation, pvc *v1.PersistentVolumeClaim, volumes map[string]*v1.PersistentVolume, unmarked bool) error {
	scheduler := x.Search == explain.SchedulerSearch
	claim := pvc
	if x.DefaultClass != "" {
		claim = pvc.DeepCopy()
		claim.Spec.StorageClassName = &x.DefaultClass
	}
	if err := checkCandidates(x.Candidates, claim, volumes, scheduler, nil, unmarked); err != nil {
		return err
	}
	shown := len(x.Candidates)
	for _, m := range x.More {
		shown += m.Count
	}
	if x.Candidates != nil && pvc.Spec.VolumeName == "" && shown != x.Volumes {
		return fmt.Errorf("%d candidates and counted volumes, want %d", shown, x.Volumes)
	}
	if x.Verdict == explain.WouldBind && pvc.Spec.VolumeName == "" && !strings.Contains(x.Summary, "once") {
		i := slices.IndexFunc(x.Candidates, func(c explain.Candidate) bool { return c.Chosen })
		if i < 0 || x.Candidates[i].Volume != x.Volume {
			return fmt.Errorf("verdict %s, but the chosen candidate is not %s", x.Verdict, x.Volume)
		}
	}
	return nil
}

// settle runs a Binder on srv until nothing changes: the first syncs,
// then rounds of resyncs (and of held Available writes) until a round
// writes nothing.
func settle(ctx context.Context, c *diffCase, srv *bindertest.Server, fc *testingclock.FakeClock) (err error) {
	cfg := binder.Config{Clock: fc, ClaimWorkers: c.workers, VolumeWorkers: c.workers, Logger: logr.Discard()}
	if c.availableDelay {
		cfg.AvailableDelay = 10 * time.Second
	}
	if !c.noProvisioning {
		cfg.Provisioning = &binder.ProvisioningConfig{Nodes: srv, Provisioners: map[string]binder.Provisioner{}}
		if c.inTree {
			cfg.Provisioning.Provisioners[randcluster.Disk] = provisioner{}
			cfg.Provisioning.Provisioners["disk.chaos.volbind.io"] = provisioner{}
		}
	}
	cfg.Reclaim = &binder.ReclaimConfig{}
	if !c.noRecycling {
		cfg.Reclaim.Recycler = recycler{}
	}
	b, err := binder.New(srv, cfg)
	if err != nil {
		return err
	}
	defer srv.AddEventHandler(bindertest.KindStorageClass, b.ClassHandler())()
	defer srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler())()
	defer srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler())()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	defer func() {
		cancel()
		if runErr := <-done; runErr != nil && err == nil {
			err = fmt.Errorf("binder: %w", runErr)
		}
	}()
	// A round waits until the Binder is quiescent, then steps the clock
	// past the resync period and any held Available write; a sync whose
	// retry backs off on the fake clock keeps the Binder from quiescence
	// until the clock is stepped, so a round that does not get there
	// within a few seconds of real time steps the clock too. Settled is
	// three quiescent rounds in a row without a write: on a loaded machine
	// a resync that a step made due may start a moment after the step.
	deadline := time.Now().Add(3 * time.Minute)
	last, quiet := int64(-1), 0
	for time.Now().Before(deadline) {
		wait, stop := context.WithTimeout(ctx, 3*time.Second)
		err := b.WaitForQuiescence(wait)
		stop()
		switch writes := srv.Stats().TotalWrites(); {
		case err != nil:
			quiet = 0
		case writes == last:
			if quiet++; quiet == 3 {
				return nil
			}
		default:
			last, quiet = writes, 0
		}
		// A resync timer armed after the step would count from the new
		// time and never fire within the rounds.
		testhelp.WaitArmed(fc)
		fc.Step(2*binder.DefaultResyncPeriod + cfg.AvailableDelay)
	}
	return fmt.Errorf("the Binder did not settle within three minutes")
}

// checkOutcome compares the explanation of a claim with the claim after
// the Binder settled.
func checkOutcome(x *explain.ClaimExplanation, before, after *v1.PersistentVolumeClaim, final map[string]*v1.PersistentVolume) error {
	bound := after.Status.Phase == v1.ClaimBound && after.Spec.VolumeName != ""
	alt := bound && slices.ContainsFunc(x.Alternatives, func(a explain.Alternative) bool { return a.Volume == after.Spec.VolumeName })
	switch x.Verdict {
	case explain.Bound:
		if (!bound || after.Spec.VolumeName != x.Volume) && !takenByContender(x, final) {
			return fmt.Errorf("said bound to %s", x.Volume)
		}
	case explain.WouldBind:
		if (!bound || after.Spec.VolumeName != x.Volume) && !alt && !takenByContender(x, final) {
			return fmt.Errorf("said it would bind to %s", x.Volume)
		}
	case explain.WaitForFirstConsumer:
		if after.Spec.VolumeName != "" && !alt {
			return fmt.Errorf("said it waits for a first consumer")
		}
	case explain.WillProvision:
		return checkProvisioned(x, after, bound, alt)
	case explain.Unsatisfiable:
		if bound && !alt {
			return fmt.Errorf("said nothing can satisfy it")
		}
		if before.Spec.VolumeName == "" && after.Spec.VolumeName != "" && !alt {
			return fmt.Errorf("said nothing can satisfy it, but it asks for %s now", after.Spec.VolumeName)
		}
	default:
		return fmt.Errorf("unknown verdict %q", x.Verdict)
	}
	if x.DefaultClass != "" && (after.Spec.StorageClassName == nil || *after.Spec.StorageClassName != x.DefaultClass) && !alt {
		return fmt.Errorf("said the default class %s is assigned", x.DefaultClass)
	}
	return nil
}

// takenByContender reports whether the explanation's volume went to one
// of the contenders it named.
func takenByContender(x *explain.ClaimExplanation, final map[string]*v1.PersistentVolume) bool {
	pv := final[x.Volume]
	return pv != nil && pv.Spec.ClaimRef != nil &&
		slices.Contains(x.Contenders, pv.Spec.ClaimRef.Namespace+"/"+pv.Spec.ClaimRef.Name)
}

func checkProvisioned(x *explain.ClaimExplanation, after *v1.PersistentVolumeClaim, bound, alt bool) error {
	p := x.Provisioner
	if alt {
		return nil
	}
	if p.Kind == explain.InTree {
		if want := "pvc-" + string(after.UID); !bound || after.Spec.VolumeName != want {
			return fmt.Errorf("said it is provisioned in-tree as %s", want)
		}
		return nil
	}
	want := p.Name
	if p.Kind == explain.Migrated {
		want = p.CSIDriver
	}
	if got := after.Annotations[volume.AnnStorageProvisioner]; got != want || after.Spec.VolumeName != "" {
		return fmt.Errorf("said it is handed to provisioner %s; annotation %q", want, got)
	}
	return nil
}

func dump(x any) string {
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
