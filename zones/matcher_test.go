package zones

import (
	"context"
	"fmt"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestMatcherInvalidation(t *testing.T) {
	t.Parallel()
	nodeA := testNode("na", map[string]string{ZoneLabel: "a"})
	nodeB := testNode("nb", map[string]string{ZoneLabel: "b"})
	check := func(t *testing.T, m *Matcher, pv *v1.PersistentVolume, node *v1.Node, want bool) {
		t.Helper()
		if got, err := m.Matches(pv, node); err != nil || got != want {
			t.Fatalf("Matches(%s rv=%s uid=%s, %s) = %v, %v, want %v", pv.Name, pv.ResourceVersion, pv.UID, node.Name, got, err, want)
		}
	}

	t.Run("resourceVersion change re-parses", func(t *testing.T) {
		t.Parallel()
		m := NewMatcher()
		pv := testVolume("pv", map[string]string{ZoneLabel: "a"})
		check(t, m, pv, nodeA, true)
		check(t, m, pv, nodeB, false)
		moved := pv.DeepCopy()
		moved.Labels[ZoneLabel] = "b"
		moved.ResourceVersion = "2"
		check(t, m, moved, nodeA, false)
		check(t, m, moved, nodeB, true)
		if m.Len() != 1 {
			t.Errorf("Len() = %d, want 1 (one entry per volume name)", m.Len())
		}
	})

	t.Run("same resourceVersion is served from the cache", func(t *testing.T) {
		t.Parallel()
		m := NewMatcher()
		pv := testVolume("pv", map[string]string{ZoneLabel: "a"})
		check(t, m, pv, nodeA, true)
		// A caller that mutates a cached object without a new
		// resourceVersion breaks the informer contract; the matcher keeps
		// the parsed version, which proves it does not re-parse.
		stale := pv.DeepCopy()
		stale.Labels[ZoneLabel] = "b"
		check(t, m, stale, nodeA, true)
	})

	t.Run("re-created volume with a new UID re-parses", func(t *testing.T) {
		t.Parallel()
		m := NewMatcher()
		pv := testVolume("pv", map[string]string{ZoneLabel: "a"})
		check(t, m, pv, nodeA, true)
		again := testVolume("pv", map[string]string{ZoneLabel: "b"})
		again.UID = types.UID("other")
		check(t, m, again, nodeA, false)
	})

	t.Run("empty resourceVersion is never cached", func(t *testing.T) {
		t.Parallel()
		m := NewMatcher()
		pv := testVolume("pv", map[string]string{ZoneLabel: "a"})
		pv.ResourceVersion = ""
		check(t, m, pv, nodeA, true)
		if m.Len() != 0 {
			t.Errorf("Len() = %d, want 0", m.Len())
		}
		pv.Labels[ZoneLabel] = "b"
		check(t, m, pv, nodeA, false)
	})

	t.Run("Forget drops the entry", func(t *testing.T) {
		t.Parallel()
		var m Matcher // the zero value is ready
		for i := range 10 {
			check(t, &m, testVolume(fmt.Sprintf("pv-%d", i), nil), nodeA, true)
		}
		if m.Len() != 10 {
			t.Fatalf("Len() = %d, want 10", m.Len())
		}
		for i := range 10 {
			m.Forget(testVolume(fmt.Sprintf("pv-%d", i), nil))
		}
		if m.Len() != 0 {
			t.Errorf("Len() after Forget = %d, want 0", m.Len())
		}
	})

	t.Run("invalid placement error is cached with the version", func(t *testing.T) {
		t.Parallel()
		m := NewMatcher()
		pv := testVolume("pv", map[string]string{ZoneLabel: "__"})
		for range 2 {
			if _, err := m.Matches(pv, nodeA); err == nil {
				t.Fatal("Matches() error = nil, want invalid placement")
			}
		}
		fixed := testVolume("pv", map[string]string{ZoneLabel: "a"})
		fixed.ResourceVersion = "2"
		check(t, m, fixed, nodeA, true)
	})
}

// TestMatcherConcurrent runs Matches, volume updates and Forget from many
// goroutines at once (meaningful under -race) and checks every answer
// against the uncached Matches.
func TestMatcherConcurrent(t *testing.T) {
	t.Parallel()
	m := NewMatcher()
	nodes := []*v1.Node{
		testNode("na", map[string]string{ZoneLabel: "a"}),
		testNode("nb", map[string]string{ZoneLabel: "b"}),
	}
	zonesByRV := []string{"a", "b", "a__b"}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				rv := (i / 100) % len(zonesByRV)
				pv := testVolume(fmt.Sprintf("pv-%d", i%20), map[string]string{ZoneLabel: zonesByRV[rv]},
					term(expr(ZoneLabel, v1.NodeSelectorOpIn, "a", "b")))
				pv.ResourceVersion = fmt.Sprint(rv + 1)
				node := nodes[(g+i)%len(nodes)]
				got, err := m.Matches(pv, node)
				want, _ := Matches(pv, node)
				if err != nil || got != want {
					errs <- fmt.Errorf("goroutine %d step %d: Matches = %v, %v, want %v", g, i, got, err, want)
					return
				}
				if g == 0 && i%50 == 0 {
					m.Forget(pv)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	ctx, cancel := context.WithTimeout(context.Background(), wait.ForeverTestTimeout)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("concurrent Matches did not finish")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := m.Len(); n > 20 {
		t.Errorf("Len() = %d, want at most one entry per volume name (20)", n)
	}
}
