package jitter

import (
	"fmt"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// TestResyncGrow checks that Grow, before, between or after Adds, leaves
// every key where it would be without it: the same offsets, the same
// keys removed and added again.
func TestResyncGrow(t *testing.T) {
	fc := testingclock.NewFakeClock(time.Unix(0, 0))
	cfg := ResyncConfig{Period: time.Hour, Slots: 50, Clock: fc}
	plain, err := NewResync(newRecorder(fc).Add, StringHash, cfg)
	if err != nil {
		t.Fatal(err)
	}
	grown, err := NewResync(newRecorder(fc).Add, StringHash, cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 600)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/claim-%d", i)
	}
	grown.Grow(400)
	for i, k := range keys {
		switch i {
		case 200:
			grown.Grow(10) // fewer than registered: nothing to do
		case 300:
			grown.Grow(1000) // room for more than it holds: copies them
		}
		plain.Add(k)
		grown.Add(k)
	}
	for i := 0; i < len(keys); i += 3 {
		plain.Remove(keys[i])
		grown.Remove(keys[i])
	}
	for i := 0; i < len(keys); i += 6 {
		plain.Add(keys[i])
		grown.Add(keys[i])
	}
	registered := 0
	for _, k := range keys {
		p, g := plain.Offset(k), grown.Offset(k)
		if p != g {
			t.Errorf("Offset(%q) = %v after Grow, %v without", k, g, p)
		}
		if p >= 0 {
			registered++
		}
	}
	if want := 600 - 200 + 100; registered != want {
		t.Errorf("%d keys registered, want %d", registered, want)
	}
}
