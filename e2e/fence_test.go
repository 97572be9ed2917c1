//go:build e2e && linux

package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
)

// gatedDeleter is a binder.Deleter that records the owner of the
// operation mark on each volume it is given and blocks until gate is
// closed.
type gatedDeleter struct {
	gate chan struct{}
	// mu guards owners.
	mu     sync.Mutex
	owners []string
}

func (d *gatedDeleter) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	var mark struct {
		Owner string `json:"owner"`
	}
	_ = json.Unmarshal([]byte(pv.Annotations[binder.AnnOperation]), &mark)
	d.mu.Lock()
	d.owners = append(d.owners, mark.Owner)
	d.mu.Unlock()
	select {
	case <-d.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *gatedDeleter) calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.owners)
}

// volumeSyncs reads volbind_binder_syncs_total{kind="volume"} from reg.
func volumeSyncs(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "volbind_binder_syncs_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "volume" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// TestReclaimOnceAcrossInstances runs two Binders at once on the real API
// server (a leader-election handover overlap) with one Deleter. The one
// that wins the conditional write of the volbind.io/operation mark calls
// the Deleter; the other, resyncing the released volume several times
// meanwhile, finds the mark on the object it reads back and does not.
func TestReclaimOnceAcrossInstances(t *testing.T) {
	f := newFixture(t)
	d := &gatedDeleter{gate: make(chan struct{})}
	regs := map[string]*prometheus.Registry{"replica-a": prometheus.NewRegistry(), "replica-b": prometheus.NewRegistry()}
	for id, reg := range regs {
		startBinder(t, binder.Config{Identity: id, Registerer: reg, ResyncPeriod: 200 * time.Millisecond,
			Reclaim: &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{"kubernetes.io/host-path": d}}})
	}
	pv := f.bindAndRelease("contested", v1.PersistentVolumeReclaimDelete)
	f.eventually(time.Minute, "a Deleter call", func(context.Context) (bool, error) { return len(d.calls()) > 0, nil })
	owner := d.calls()[0]
	other := "replica-a"
	if owner == other {
		other = "replica-b"
	}
	if regs[owner] == nil {
		t.Fatalf("Deleter called with the mark of %q, want one of the replicas", owner)
	}
	var mark struct {
		Op    string    `json:"op"`
		Owner string    `json:"owner"`
		Start time.Time `json:"start"`
	}
	got := f.getVolume(pv.Name)
	if err := json.Unmarshal([]byte(got.Annotations[binder.AnnOperation]), &mark); err != nil || mark.Owner != owner || mark.Op != "delete" || mark.Start.IsZero() {
		t.Errorf("annotation %s on the server = %q (%v), want op delete by %s with a start time", binder.AnnOperation, got.Annotations[binder.AnnOperation], err, owner)
	}
	// Let the other replica resync the volume a few times while the
	// deletion runs: three syncs of every volume.
	all, err := f.cs.CoreV1().PersistentVolumes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before, want := volumeSyncs(t, regs[other]), float64(3*len(all.Items))
	f.eventually(time.Minute, other+" resyncing the volume", func(context.Context) (bool, error) {
		return volumeSyncs(t, regs[other]) >= before+want, nil
	})
	close(d.gate)
	f.waitGone(pv.Name)
	if got := d.calls(); len(got) != 1 {
		t.Errorf("Deleter calls by %q, want exactly one", got)
	}
}
