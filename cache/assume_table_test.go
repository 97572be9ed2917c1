package cache

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// modelEntry is what the model of TestAssumeModel holds for one key.
type modelEntry struct {
	latest, api *v1.PersistentVolume
}

// TestAssumeModel runs random operations on a cache and on a plain map
// that implements the rules, and compares them after every step. Enough
// keys come and go for the table to grow, shrink and fill with tombstones.
func TestAssumeModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	classes := []string{"gold", "silver", "bronze"}
	rvOf := func(pv *v1.PersistentVolume) uint64 { v, _ := ParseVersion(pv.ResourceVersion); return v }

	c := newPVCache()
	model := map[string]*modelEntry{}
	keys := 40
	const steps = 8_000
	for step := range steps {
		// Grow the key space, then shrink it, so the table resizes both
		// ways.
		switch step {
		case 2_000:
			keys = 1_500
		case 5_000:
			for i := 20; i < keys; i++ {
				c.deleteKey(pvName(i))
				delete(model, pvName(i))
			}
			keys = 20
			compareModel(t, step, c, model, classes)
		}
		key := pvName(r.IntN(keys))
		pv := newPV(key, classes[r.IntN(len(classes))], strconv.Itoa(r.IntN(1000)))
		m := model[key]
		switch op := r.IntN(10); {
		case op < 4: // informer event
			_, err := c.inform(pv, false)
			if err != nil {
				t.Fatalf("step %d: Inform(%s@%s) = %v", step, key, pv.ResourceVersion, err)
			}
			switch {
			case m == nil:
				model[key] = &modelEntry{latest: pv, api: pv}
			case rvOf(pv) >= rvOf(m.latest):
				m.latest, m.api = pv, pv
			case rvOf(pv) >= rvOf(m.api):
				m.api = pv
			}
		case op < 6:
			err := c.Assume(pv)
			switch {
			case m == nil:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("step %d: Assume(unknown %s) = %v", step, key, err)
				}
			case rvOf(pv) < rvOf(m.latest):
				if !IsStale(err) {
					t.Fatalf("step %d: Assume(%s@%s) over %s = %v, want stale", step, key, pv.ResourceVersion, m.latest.ResourceVersion, err)
				}
			default:
				if err != nil {
					t.Fatalf("step %d: Assume(%s@%s) = %v", step, key, pv.ResourceVersion, err)
				}
				m.latest = pv
			}
		case op < 8:
			c.Restore(key)
			if m != nil {
				m.latest = m.api
			}
		default:
			c.OnDelete(pv)
			delete(model, key)
		}
		if step%193 == 0 || step > steps-50 {
			compareModel(t, step, c, model, classes)
		}
	}
	if n := len(c.tab.Load().slots); n > 8*minTableSize {
		t.Errorf("%d slots for %d keys: the table did not shrink", n, length(c))
	}
}

func compareModel(t *testing.T, step int, c *Assume[*v1.PersistentVolume], model map[string]*modelEntry, classes []string) {
	t.Helper()
	if got, want := length(c), len(model); got != want {
		t.Fatalf("step %d: Len = %d, want %d", step, got, want)
	}
	wantLists := map[string][]string{}
	for key, m := range model {
		if got, ok := c.Get(key); !ok || got != m.latest {
			t.Fatalf("step %d: Get(%s) = %v, %v; want %s", step, key, describeOne(got), ok, m.latest.ResourceVersion)
		}
		if got, ok := c.GetAPIObj(key); !ok || got != m.api {
			t.Fatalf("step %d: GetAPIObj(%s) = %v, %v; want %s", step, key, describeOne(got), ok, m.api.ResourceVersion)
		}
		if got, want := c.IsAssumed(key), m.latest != m.api; got != want {
			t.Fatalf("step %d: IsAssumed(%s) = %v, want %v", step, key, got, want)
		}
		class := m.latest.Spec.StorageClassName
		wantLists[class] = append(wantLists[class], key+"@"+m.latest.ResourceVersion)
	}
	for _, class := range classes {
		want := describeStrings(wantLists[class])
		if diff := cmp.Diff(want, nilIfEmpty(describe(ofClass(c, class)))); diff != "" {
			t.Fatalf("step %d: List(%s) (-want +got):\n%s", step, class, diff)
		}
	}
	checkTable(t, c)
}

// TestAssumeConcurrent has readers Get, GetAPIObj and List while writers
// add, update, assume, restore and delete, so that the table grows and
// shrinks under the readers. Run it with -race.
func TestAssumeConcurrent(t *testing.T) {
	const keys = 1_000
	c := newPVCache()
	var stop atomic.Bool
	var writers, readers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for round := range 3 {
				for i := range keys {
					key := pvName(i)
					rv := strconv.Itoa(round*keys + i + 1)
					switch r.IntN(4) {
					case 0:
						c.OnDelete(newPV(key, "", "1"))
					case 1:
						_ = c.Assume(newPV(key, "gold", rv))
					case 2:
						c.Restore(key)
					default:
						c.OnAdd(newPV(key, "silver", rv), false)
					}
				}
			}
		})
	}
	var errs atomic.Int64
	for range 2 {
		readers.Go(func() {
			for i := 0; !stop.Load(); i = (i + 1) % keys {
				key := pvName(i)
				if pv, ok := c.Get(key); ok && pv.Name != key {
					errs.Add(1)
				}
				if pv, ok := c.GetAPIObj(key); ok && pv.Name != key {
					errs.Add(1)
				}
				if i%100 == 0 {
					for _, pv := range ofClass(c, "gold") {
						if pv.Spec.StorageClassName != "gold" {
							errs.Add(1)
						}
					}
				}
			}
		})
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
	if n := errs.Load(); n != 0 {
		t.Errorf("readers saw %d wrong objects", n)
	}
	checkTable(t, c)
}

func describeOne(pv *v1.PersistentVolume) string {
	if pv == nil {
		return "<nil>"
	}
	return pv.Name + "@" + pv.ResourceVersion
}

func describeStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
