package cli

import (
	"runtime/debug"
	"testing"
)

// TestApplyGOGC: without $GOGC the commands collect at 50 %
// heap growth; a GOGC in the environment is left as the runtime applied it.
// Not parallel: the GC target is process-wide.
func TestApplyGOGC(t *testing.T) {
	orig := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(orig) })
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int
	}{
		{"GOGC unset", nil, DefaultGOGC},
		{"GOGC set", map[string]string{"GOGC": "200"}, 100},
		{"GOGC=off", map[string]string{"GOGC": "off"}, 100},
		{"only GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, DefaultGOGC},
	} {
		debug.SetGCPercent(100) // as the runtime left it
		ApplyGOGC(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("%s: GC percent %d, want %d", tc.name, got, tc.want)
		}
	}
}
