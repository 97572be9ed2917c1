package binder

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/volbind/volbind/binder/bindertest"
)

// counterSum sums the counter name in g over the series whose labels
// include labelPairs ("label", "value", ...): all of them without pairs.
func counterSum(t *testing.T, g prometheus.Gatherer, name string, labelPairs ...string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			match := true
			for i := 0; i+1 < len(labelPairs); i += 2 {
				match = match && labels[labelPairs[i]] == labelPairs[i+1]
			}
			if match {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// ignoredCount returns volbind_binder_ignored_objects_total for resource
// and reason.
func ignoredCount(t *testing.T, g prometheus.Gatherer, resource, reason string) float64 {
	t.Helper()
	return counterSum(t, g, "volbind_binder_ignored_objects_total", "resource", resource, "reason", reason)
}

// TestIgnoredObjectsAreCounted: an informer object without an integer
// resourceVersion is not silently dropped: it is counted by resource and
// reason (and logged), and nothing is queued for it.
func TestIgnoredObjectsAreCounted(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	b, err := New(bindertest.New(), Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	pv := newPV("pv1", "1Gi")
	pv.ResourceVersion = ""
	pvc := newPVC("claim1", "1Gi")
	pvc.ResourceVersion = "v7"
	b.VolumeHandler().OnAdd(pv, false)
	b.VolumeHandler().OnUpdate(pv, pv)
	b.ClaimHandler().OnAdd(pvc, false)
	if got := ignoredCount(t, reg, "persistentvolumes", "invalid_version"); got != 2 {
		t.Errorf("ignored volumes = %v, want 2", got)
	}
	if got := ignoredCount(t, reg, "persistentvolumeclaims", "invalid_version"); got != 1 {
		t.Errorf("ignored claims = %v, want 1", got)
	}
	if _, ok := b.store.volumes.Get("pv1"); ok {
		t.Errorf("the volume without resourceVersion was stored")
	}
	if !b.ignoredLogged.Load() {
		t.Errorf("no ignored object was logged at the default verbosity")
	}
}

// TestFakeClientsetObjectsAreReported: a Binder on client-go's fake
// clientset (objects without resourceVersion) reports that it ignores
// them instead of doing nothing silently.
func TestFakeClientsetObjectsAreReported(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pv := newPV("pv1", "1Gi")
	pv.ResourceVersion = ""
	cs := fake.NewClientset(pv)
	factory := informers.NewSharedInformerFactory(cs, 0)
	reg := prometheus.NewRegistry()
	b, err := NewForClientset(ctx, cs, factory, Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	err = wait.PollUntilContextTimeout(ctx, wait.ForeverTestTimeout/100, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return ignoredCount(t, reg, "persistentvolumes", "invalid_version") > 0, nil
	})
	cancel()
	if runErr := <-done; runErr != nil && ctx.Err() == nil {
		t.Errorf("Run: %v", runErr)
	}
	if err != nil {
		t.Fatalf("the fake clientset's volume was not reported as ignored: %v", err)
	}
}

// TestStaleAnswersAreReported: on client-go's plain fake clientset, whose
// answers keep the resourceVersion they were sent with, the Binder cannot
// keep its writes' answers and says so (counted, logged once); on the fake
// made to advance versions (bindertest.AdvanceVersions) it keeps them, so
// a second sync of the bound claim writes nothing.
func TestStaleAnswersAreReported(t *testing.T) {
	for _, advance := range []bool{false, true} {
		t.Run(fmt.Sprintf("advance=%v", advance), func(t *testing.T) {
			t.Parallel()
			pv, pvc := newPV("pv1", "1Gi"), newPVC("claim1", "1Gi")
			pv.ResourceVersion, pvc.ResourceVersion = "1", "1"
			cs := fake.NewClientset(pv, pvc)
			if advance {
				bindertest.AdvanceVersions(cs)
			}
			reg := prometheus.NewRegistry()
			b, err := New(NewClientsetAPI(cs), Config{Registerer: reg})
			if err != nil {
				t.Fatal(err)
			}
			b.VolumeHandler().OnAdd(pv, true)
			b.ClaimHandler().OnAdd(pvc, true)
			for range 2 {
				if err := b.SyncClaim(t.Context(), ns+"/claim1"); err != nil {
					t.Fatalf("SyncClaim: %v", err)
				}
			}
			writes := 0
			for _, a := range cs.Actions() {
				if a.GetVerb() == "update" {
					writes++
				}
			}
			stale := ignoredCount(t, reg, "persistentvolumes", "stale_answer") + ignoredCount(t, reg, "persistentvolumeclaims", "stale_answer")
			if !advance {
				if stale == 0 || !b.staleAnswerLogged.Load() {
					t.Errorf("stale answers counted %v, logged %v; want them counted and logged", stale, b.staleAnswerLogged.Load())
				}
				return
			}
			if stale != 0 || b.staleAnswerLogged.Load() {
				t.Errorf("stale answers counted %v, logged %v; want none", stale, b.staleAnswerLogged.Load())
			}
			cached, ok := b.store.claim(ns + "/claim1")
			if writes != 4 || !ok || cached.Status.Phase != v1.ClaimBound {
				t.Errorf("%d writes in two syncs, claim cached %v (%+v); want 4 and cached Bound", writes, ok, cached)
			}
		})
	}
}
