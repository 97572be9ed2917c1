package binder

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSmallMap: keys that differ only in kind, namespace or name are told
// apart, in the slice and beyond it in the map, and each keeps its state
// until it is removed, whatever the order of removals.
func TestSmallMap(t *testing.T) {
	t.Parallel()
	var keys []ownKey
	for i := range 3 * smallMapSlots {
		name := fmt.Sprint("x", i/3)
		switch i % 3 {
		case 0:
			keys = append(keys, ownKey{kind: volumeQueue, name: name})
		case 1:
			keys = append(keys, ownKey{kind: claimQueue, namespace: "a", name: name})
		default:
			keys = append(keys, ownKey{kind: claimQueue, namespace: "b", name: name})
		}
	}
	var tab smallMap[ownKey, ownWrite]
	for i, k := range keys {
		tab.add(k).events = i + 1
	}
	if tab.len() != len(keys) || len(tab.more) == 0 {
		t.Fatalf("len = %d (%d in the map), want %d, some in the map", tab.len(), len(tab.more), len(keys))
	}
	check := func(held map[ownKey]int) {
		t.Helper()
		for i, k := range keys {
			w := tab.find(k)
			want, ok := held[k]
			switch {
			case ok && (w == nil || w.events != want):
				t.Fatalf("find(%+v) = %+v, want events %d", k, w, want)
			case !ok && w != nil:
				t.Fatalf("find(%+v) after its removal = %+v (key %d)", k, w, i)
			}
		}
		if tab.len() != len(held) {
			t.Fatalf("len = %d, want %d", tab.len(), len(held))
		}
	}
	held := map[ownKey]int{}
	for i, k := range keys {
		held[k] = i + 1
	}
	check(held)
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(len(keys)) {
		tab.remove(keys[i])
		delete(held, keys[i])
		check(held)
	}
	tab.add(keys[0]).writers++
	if w := tab.find(keys[0]); w == nil || w.writers != 1 || w.events != 0 {
		t.Errorf("a key added again = %+v, want a fresh state with one writer", w)
	}
}
