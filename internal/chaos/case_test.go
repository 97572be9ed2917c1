package chaos_test

import (
	"testing"

	"github.com/volbind/volbind/internal/chaos"
)

func TestCaseRoundTrip(t *testing.T) {
	for seed := range int64(50) {
		c := chaos.CaseFor(seed, chaos.AllClasses)
		got, err := chaos.ParseCase(c.String())
		if err != nil {
			t.Fatalf("ParseCase(%q) = %v", c, err)
		}
		if got != c {
			t.Errorf("ParseCase(%q) = %s, want the same case", c, got)
		}
		if again := chaos.CaseFor(seed, chaos.AllClasses); again != c {
			t.Errorf("CaseFor(%d) = %s, then %s", seed, c, again)
		}
	}
}

func TestCaseForKeepsToEnabledClasses(t *testing.T) {
	for seed := range int64(200) {
		c := chaos.CaseFor(seed, chaos.DefaultClasses)
		if c.Classes&chaos.KnownBugs != 0 {
			t.Errorf("CaseFor(%d, default) = %s, which has a known-bug class", seed, c)
		}
		if c.Objects < 1 || c.Objects > 200 {
			t.Errorf("CaseFor(%d) has %d objects, want 1-200", seed, c.Objects)
		}
		if c.Classes&chaos.Crash == 0 && c.CrashAt != 0 {
			t.Errorf("CaseFor(%d) = %s crashes without the crash class", seed, c)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"seed", "seed=x", "bogus=1", "seed=1,workers=0", "seed=1,workers=1,classes=nope"} {
		if c, err := chaos.ParseCase(s); err == nil {
			t.Errorf("ParseCase(%q) = %s, want an error", s, c)
		}
	}
	if c, err := chaos.ParseClasses("default+overlap"); err != nil || c != chaos.DefaultClasses|chaos.Overlap {
		t.Errorf("ParseClasses(default+overlap) = %s, %v", c, err)
	}
}
