package manifest

import (
	"strings"
	"testing"
)

// wantContains fails t, without stopping it, for each of wants that got
// (called what in the message) does not contain.
func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}
