//go:build e2e && linux

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/volbind/volbind/binder"
)

// binderWrites sums the API server's apiserver_request_total of updates
// (PUT and PATCH, objects and status) of volumes and claims, and its 409s.
func binderWrites(t *testing.T, f *fixture) (writes, conflicts int64) {
	t.Helper()
	raw, err := f.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("scrape /metrics: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		value, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			t.Fatalf("malformed sample %q: %v", line, err)
		}
		labels := line[:end]
		if strings.Contains(labels, `code="409"`) {
			conflicts += int64(value)
		}
		write := strings.Contains(labels, `verb="PUT"`) || strings.Contains(labels, `verb="PATCH"`)
		if write && (strings.Contains(labels, `resource="persistentvolumes"`) || strings.Contains(labels, `resource="persistentvolumeclaims"`)) {
			writes += int64(value)
		}
	}
	return writes, conflicts
}

// TestAvailableDelayFourWrites runs the Binder with AvailableDelay on
// volumes and claims created while it runs: each binding costs exactly the
// four writes (no Available write first), no write conflicts, the bound
// volumes keep the server's managedFields although the Binder's informers
// drop them, and the volume no claim takes is marked Available after the
// delay.
func TestAvailableDelayFourWrites(t *testing.T) {
	const n, delay = 200, 10 * time.Second
	f := newFixture(t)
	startBinder(t, binder.Config{AvailableDelay: delay, ClaimWorkers: 16, VolumeWorkers: 4})
	before, conflictsBefore := binderWrites(t, f)
	objs := make([]runtime.Object, 0, 2*n+1)
	for i := range n {
		objs = append(objs, f.volume(fmt.Sprintf("pv-%04d", i), 1), f.claim(fmt.Sprintf("pvc-%04d", i), 1))
	}
	objs = append(objs, f.volume("spare", 5))
	start := time.Now()
	f.create(objs...)
	f.waitBound(n, 3*time.Minute)
	t.Logf("%d pairs Bound %.1fs after the first create", n, time.Since(start).Seconds())
	if bound := f.checkBindings(); len(bound) != n {
		t.Errorf("%d claims Bound, want %d", len(bound), n)
	}
	f.eventually(time.Minute, "spare volume Available", func(context.Context) (bool, error) {
		return f.getVolume(f.ns+"-spare").Status.Phase == v1.VolumeAvailable, nil
	})
	// The metric is counted once the answer is written: wait until it
	// reaches the writes the objects show.
	want := int64(4*n + 1)
	var writes, conflicts int64
	f.eventually(30*time.Second, "write metrics", func(context.Context) (bool, error) {
		w, c := binderWrites(t, f)
		writes, conflicts = w-before, c-conflictsBefore
		return writes >= want, nil
	})
	if writes != want || conflicts != 0 {
		t.Errorf("%d writes and %d conflicts for %d bindings and one spare volume, want %d and 0", writes, conflicts, n, want)
	}
	pv := f.getVolume(f.ns + "-pv-0000")
	managers := map[string]bool{}
	for _, e := range pv.ManagedFields {
		managers[e.Manager+"/"+e.Subresource] = true
	}
	// The creator's entry survives the Binder's updates, which carry no
	// managedFields: the server kept its own.
	if !managers["volbind-e2e/"] || !managers["volbind-e2e-binder/"] || !managers["volbind-e2e-binder/status"] {
		t.Errorf("bound volume's managedFields name %v, want the creator's and the Binder's of the object and its status", managers)
	}
}
