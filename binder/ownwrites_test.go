package binder

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestOwnWritesOutcomes: what a writer is told about the events that came
// while its update was in flight.
func TestOwnWritesOutcomes(t *testing.T) {
	t.Parallel()
	pv := ownKey{kind: volumeQueue, name: "pv"}
	tests := []struct {
		name   string
		events []string // resourceVersions of the events during the write
		ok     bool
		answer string
		want   ownOutcome
	}{
		{name: "no event", ok: true, answer: "7", want: ownNone},
		{name: "the answer's event", events: []string{"7"}, ok: true, answer: "7", want: ownAnswer},
		{name: "another version's event", events: []string{"8"}, ok: true, answer: "7", want: ownQueue},
		{name: "the answer's event and a later one", events: []string{"7", "8"}, ok: true, answer: "7", want: ownQueue},
		{name: "another writer's event, then the answer's", events: []string{"6", "7"}, ok: true, answer: "7", want: ownQueue},
		{name: "failed write, no event", want: ownNone},
		{name: "failed write with an event", events: []string{"7"}, want: ownQueue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOwnWrites()
			o.begin(pv)
			for _, rv := range tt.events {
				if !o.event(pv, rv) {
					t.Fatalf("event(%s) during the write = false, want true", rv)
				}
			}
			if got := o.end(pv, tt.ok, tt.answer); got != tt.want {
				t.Errorf("end = %d, want %d", got, tt.want)
			}
			if o.event(pv, "9") {
				t.Error("event after the write = true, want false (the key is no longer written)")
			}
			if o.writes.len() != 0 || o.inFlight.Load() != 0 {
				t.Errorf("after end: %d keys, %d in flight; want none", o.writes.len(), o.inFlight.Load())
			}
		})
	}
}

// TestOwnWritesKeys: an event counts only for the key being written, and
// two writers of one key each see only the events after the last end.
func TestOwnWritesKeys(t *testing.T) {
	t.Parallel()
	o := newOwnWrites()
	claim := ownKey{kind: claimQueue, namespace: "ns", name: "a"}
	if o.event(claim, "1") {
		t.Error("event with no write in flight = true")
	}
	o.begin(claim)
	for _, other := range []ownKey{
		{kind: volumeQueue, name: "a"},
		{kind: claimQueue, namespace: "other", name: "a"},
		{kind: claimQueue, namespace: "ns", name: "b"},
	} {
		if o.event(other, "2") {
			t.Errorf("event(%+v) while %+v is written = true", other, claim)
		}
	}
	o.begin(claim) // a second writer of the same claim
	o.event(claim, "3")
	if got := o.end(claim, true, "3"); got != ownAnswer {
		t.Errorf("first end = %d, want ownAnswer", got)
	}
	if !o.event(claim, "4") {
		t.Error("event while the second writer is in flight = false")
	}
	if got := o.end(claim, true, "5"); got != ownQueue {
		t.Errorf("second end = %d, want ownQueue (it saw version 4 only)", got)
	}
	if o.writes.len() != 0 || o.inFlight.Load() != 0 {
		t.Errorf("after both ends: %d keys, %d in flight; want none", o.writes.len(), o.inFlight.Load())
	}
}

// syncedVersions is a SyncObserver that remembers every version reported.
type syncedVersions struct {
	mu   sync.Mutex
	seen map[string]bool // "kind/name@resourceVersion"
}

func (s *syncedVersions) ObjectSynced(obj metav1.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[versionOf(obj)] = true
}

func (s *syncedVersions) saw(obj metav1.Object) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[versionOf(obj)]
}

func versionOf(obj metav1.Object) string {
	return fmt.Sprintf("%T/%s/%s@%s", obj, obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion())
}

// TestOwnWritesQueueNoSecondSync: on an API that delivers the events of the
// Binder's writes before answering them (bindertest's synchronous events),
// binding queues each claim and volume once, as on informers, where the
// event of a write arrives after its answer and finds nothing newer; and
// the Observer is still told of every version the Binder wrote.
func TestOwnWritesQueueNoSecondSync(t *testing.T) {
	t.Parallel()
	const pairs = 3
	e := newEnv(t)
	for i := range pairs {
		if err := e.srv.Seed(e.ctx, newPV(fmt.Sprintf("pv%d", i), "1Gi"), newPVC(fmt.Sprintf("claim%d", i), "1Gi")); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	obs := &syncedVersions{seen: map[string]bool{}}
	b := e.newBinder(Config{Registerer: reg, Observer: obs})
	e.run(b)
	e.settle(b)
	for i := range pairs {
		pvc, pv := e.claim(fmt.Sprintf("claim%d", i)), e.volume(fmt.Sprintf("pv%d", i))
		if pvc.Status.Phase != v1.ClaimBound || pv.Status.Phase != v1.VolumeBound {
			t.Fatalf("claim%d is %s, pv%d is %s; want both Bound", i, pvc.Status.Phase, i, pv.Status.Phase)
		}
		for _, obj := range []metav1.Object{pvc, pv} {
			if !obs.saw(obj) {
				t.Errorf("the Observer was not told of %s, the version the Binder wrote", versionOf(obj))
			}
		}
	}
	for _, name := range []string{"claims", "volumes"} {
		// Run queues each object once; the binding writes add nothing.
		if got := counterSum(t, reg, "volbind_binder_workqueue_adds_total", "name", name); got != pairs {
			t.Errorf("adds_total{name=%q} = %v, want %d", name, got, pairs)
		}
	}
}

// meddler is an API on which another writer changes a volume's labels
// after the Binder's first status update of it has been applied and before
// the answer reaches the Binder.
type meddler struct {
	API
	srv     *bindertest.Server
	once    sync.Once
	meddled *v1.PersistentVolume
	err     error
}

func (m *meddler) UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	out, err := m.API.UpdateVolumeStatus(ctx, pv)
	if err == nil {
		m.once.Do(func() {
			c := out.DeepCopy()
			c.Labels = map[string]string{"meddled": "yes"}
			m.meddled, m.err = m.srv.UpdateVolume(ctx, c)
		})
	}
	return out, err
}

// TestOwnWritesQueueOtherVersions: an event of another writer's version
// that arrives while the Binder's update is in flight is synced, as it
// would have been without the update: the Observer is told that a sync
// started from it.
func TestOwnWritesQueueOtherVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv", "1Gi"), newPVC("claim", "1Gi"))
	m := &meddler{API: newResultCheck(t, e.srv), srv: e.srv}
	obs := &syncedVersions{seen: map[string]bool{}}
	e.rec = record.NewFakeRecorder(100)
	b, err := New(m, Config{Clock: e.fc, Recorder: e.rec, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	e.register(b)
	e.run(b)
	e.settle(b)
	if m.err != nil || m.meddled == nil {
		t.Fatalf("the other writer's update: %v (object %v)", m.err, m.meddled)
	}
	if got := e.claim("claim").Status.Phase; got != v1.ClaimBound {
		t.Fatalf("claim is %s, want Bound", got)
	}
	if !obs.saw(m.meddled) {
		t.Errorf("no sync started from %s, the other writer's version", versionOf(m.meddled))
	}
}

// TestOwnUpdateAbandoned: an update whose API call panics (operations.Map
// recovers an operation's panic) holds back no later event of its key, and
// queues the key, as the events it let through would have queued it.
func TestOwnUpdateAbandoned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv", "1Gi", boundTo("claim", "uid-claim"), pvPhase(v1.VolumeBound)))
	reg := prometheus.NewRegistry()
	b := e.newBinder(Config{Registerer: reg})
	e.run(b)
	e.settle(b)
	before := counterSum(t, reg, "volbind_binder_workqueue_adds_total", "name", "volumes")
	k := ownVolume(e.volume("pv"))
	func() {
		defer func() {
			if r := recover(); r != "API" {
				t.Errorf("recovered %v, want the API's panic", r)
			}
		}()
		u := b.beginUpdate(k, "")
		defer u.abandon()
		panic("API")
	}()
	if b.own.event(k, "99") {
		t.Error("an event after the abandoned update is still held back")
	}
	if b.own.writes.len() != 0 || b.own.inFlight.Load() != 0 {
		t.Errorf("after the abandoned update: %d keys, %d in flight; want none", b.own.writes.len(), b.own.inFlight.Load())
	}
	if got := counterSum(t, reg, "volbind_binder_workqueue_adds_total", "name", "volumes"); got != before+1 {
		t.Errorf("volume adds = %v after the abandoned update, want %v", got, before+1)
	}
	e.settle(b)
}
