package volbind_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the root benchmarks and tests leave no goroutine
// behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
