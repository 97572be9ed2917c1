package binder

import (
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestConfigLoggerReceivesHandlerLogs: the event handlers, which have no
// context, log to Config.Logger.
func TestConfigLoggerReceivesHandlerLogs(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		lines []string
	)
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	b, err := New(bindertest.New(), Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	pv := newPV("pv1", "1Gi")
	pv.ResourceVersion = "" // ignored, with an error log
	b.VolumeHandler().OnAdd(pv, false)
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 || !strings.Contains(lines[0], "Ignoring an object the Binder cannot order") || !strings.Contains(lines[0], "pv1") {
		t.Errorf("Config.Logger got %q, want the ignored volume's error", lines)
	}
}
