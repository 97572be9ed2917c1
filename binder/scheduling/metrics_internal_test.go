package scheduling

import (
	"testing"
	"time"
)

// TestNilRegistererMeansNoMetrics: as in binder.Config, a nil Registerer
// gives no metrics at all, and recording into them is a no-op.
func TestNilRegistererMeansNoMetrics(t *testing.T) {
	m, err := newMetrics(nil)
	if err != nil || m != nil {
		t.Fatalf("newMetrics(nil) = %v, %v; want nil, nil", m, err)
	}
	now := time.Unix(0, 0)
	m.stage(opBind, now, now.Add(time.Second), true)
	m.cacheRequest(opCacheAdd)
}
