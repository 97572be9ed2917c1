package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/internal/manifest"
)

// simulation is the outcome of a run: the report and the in-memory API it
// ran on (final objects, counters).
type simulation struct {
	report *report
	server *bindertest.Server
}

// injectFaults makes o's fractions of writes (creates, updates, status
// updates and deletes) fail.
func injectFaults(srv *bindertest.Server, o simulateOptions) {
	seed := int64(o.Scenario.Seed)
	for i, verb := range []bindertest.Verb{bindertest.VerbCreate, bindertest.VerbUpdate, bindertest.VerbUpdateStatus, bindertest.VerbDelete} {
		if o.ConflictRate > 0 {
			srv.InjectFault(bindertest.Fault{Verb: verb, Conflict: true, Fraction: o.ConflictRate, Seed: seed + int64(2*i)})
		}
		if o.FailRate > 0 {
			srv.InjectFault(bindertest.Fault{Verb: verb, Fraction: o.FailRate, Seed: seed + int64(2*i+1),
				Err: apierrors.NewInternalError(errors.New("volbind simulate: injected fault"))})
		}
	}
}

// seedChunk is how many objects seedReleasing stores per Seed.
const seedChunk = 10_000

// seedReleasing stores objs in srv chunk by chunk and clears each stored
// chunk's elements of objs, so that the input holds no object once the
// Server has replaced its stored version.
func seedReleasing(ctx context.Context, srv *bindertest.Server, objs []runtime.Object) error {
	for start := 0; start < len(objs); start += seedChunk {
		end := min(start+seedChunk, len(objs))
		if err := srv.Seed(ctx, objs[start:end]...); err != nil {
			return err
		}
		clear(objs[start:end])
	}
	return nil
}

// runSimulation seeds a new in-memory API with objs, runs the Binder on it
// until it has nothing left to do or o.Deadline passes, and reports. As in
// a cluster where an administrator created the volumes before users made
// claims, it seeds the classes, nodes and volumes first and lets the Binder
// make the volumes Available, then seeds the claims (and pods): the
// report's numbers are those of this second part, the writes of the first
// are reported as setup writes. Once the Binder has settled, the pods
// without a node are scheduled (podScheduler), whose WaitForFirstConsumer
// claims the Binder then binds. When ctx is cancelled it stops the Binder
// and reports what was done so far. It returns after every goroutine it
// started has exited. It consumes objs: the Server stores its objects
// themselves (bindertest.Config.AdoptSeeds) and objs drops its references
// to them, so that no version is held after the Server has replaced it.
func runSimulation(ctx context.Context, o simulateOptions, objs *manifest.Objects, stderr io.Writer) (*simulation, error) {
	heap := newHeapPeak()
	heapCtx, stopHeap := context.WithCancel(ctx)
	var sampling sync.WaitGroup
	sampling.Go(func() { heap.Run(heapCtx, heapSamplePeriod) })
	defer func() {
		stopHeap()
		sampling.Wait()
	}()
	// Only the Binder and the simulated scheduler write, and neither
	// modifies what the API returns: the Binder's cache of its writes
	// shares the stored versions instead of holding copies, and the
	// consumed input is stored without a copy. Events reach the handlers
	// on the API's own goroutine, after the write, as from informers: no
	// worker stops its syncs to deliver them (settledBinder waits for
	// both).
	srv := bindertest.NewWithConfig(bindertest.Config{SharedResults: true, AdoptSeeds: true, AsyncEvents: true})
	objects := len(objs.Volumes) + len(objs.Claims)
	if o.ResyncAuto {
		o.ResyncPeriod = autoResync(objects)
	}
	if o.DeadlineAuto {
		o.Deadline = autoDeadline(objects)
	}
	events := newEventLog()
	// The Binder records its metrics as in a controller (their cost is part
	// of the run's), though the report does not read them.
	reg := prometheus.NewRegistry()
	cfg := binder.Config{
		Recorder:      events,
		Registerer:    reg,
		ClaimWorkers:  o.Workers,
		VolumeWorkers: o.Workers,
		ResyncPeriod:  o.ResyncPeriod,
	}
	if o.Provision {
		nodes := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
		defer srv.AddEventHandler(bindertest.KindNode, indexerHandler(nodes))()
		cfg.Provisioning = simProvisioning(objs.Classes, binder.ListerNodes{Lister: corelisters.NewNodeLister(nodes)})
	}
	if len(objs.Pods) > 0 {
		// Claims waiting for their first consumer name its pods.
		pods := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{binder.PodClaimIndex: binder.PodClaimKeys})
		defer srv.AddEventHandler(bindertest.KindPod, indexerHandler(pods))()
		cfg.Pods = binder.IndexerPods{Indexer: pods}
	}
	bb, err := binder.New(srv, cfg)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	b := settledBinder{Binder: bb, srv: srv}
	for _, r := range []struct {
		kind bindertest.Kind
		h    toolscache.ResourceEventHandler
	}{
		{bindertest.KindStorageClass, b.ClassHandler()},
		{bindertest.KindVolume, b.VolumeHandler()},
		{bindertest.KindClaim, b.ClaimHandler()},
	} {
		defer srv.AddEventHandler(r.kind, r.h)()
	}
	if o.Progress {
		fmt.Fprintf(stderr, "\r%-*s", progressWidth, fmt.Sprintf("storing %d objects", len(objs.Volumes)+len(objs.Claims)+len(objs.Classes)+len(objs.Nodes)+len(objs.Pods)))
	}
	// What the run needs to know of the input, taken before seeding
	// releases it.
	clock := newBindClock(time.Time{}, objs.Claims)
	bindable := bindableClaims(objs)
	podQueue := podKeys(objs.Pods) // the scheduler's queue
	started := len(objs.Volumes) > 0
	workload := objs.Workload()
	// Seeded in chunks: the store is sized for all at once.
	srv.Grow(bindertest.KindVolume, len(objs.Volumes))
	srv.Grow(bindertest.KindClaim, len(objs.Claims))
	srv.Grow(bindertest.KindPod, len(objs.Pods))
	if err := seedReleasing(ctx, srv, objs.TakeInfrastructure()); err != nil {
		return nil, fmt.Errorf("simulate: seed the in-memory API: %w", err)
	}
	injectFaults(srv, o)
	srv.ResetStats()
	// The handlers have their replay of what is stored (the indexers the
	// Binder reads included) before the Binder runs.
	if err := srv.WaitForEvents(ctx); err != nil {
		return nil, err
	}

	runCtx, stop := context.WithCancel(ctx)
	var runErr error
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		runErr = b.Run(runCtx)
	}()
	defer func() {
		stop()
		<-runDone
	}()
	waitCtx, cancelWait := context.WithTimeout(runCtx, o.Deadline)
	defer cancelWait()

	// Setup: the Binder makes the volumes Available.
	var waitErr error
	if started {
		// WaitForQuiescence waits for Run to have queued every object.
		waitErr = b.WaitForQuiescence(waitCtx)
	}
	setup := srv.Stats()

	// The claims.
	clock.start = time.Now()
	defer srv.AddEventHandler(bindertest.KindClaim, clock.handler())()
	objs.Claims, objs.Pods = nil, nil
	if err := seedReleasing(ctx, srv, workload); err != nil {
		return nil, fmt.Errorf("simulate: seed the in-memory API: %w", err)
	}
	var progress sync.WaitGroup
	if o.Progress {
		progress.Go(func() { printProgress(runCtx, stderr, clock, bindable) })
	}
	var passes int
	if waitErr == nil {
		waitErr = b.WaitForQuiescence(waitCtx)
	}
	if waitErr == nil {
		passes, waitErr = resyncPending(waitCtx, b, clock)
	}
	var sched *podScheduler
	if len(podQueue) > 0 {
		if sched, err = newPodScheduler(srv, podQueue); err != nil {
			return nil, err
		}
		defer sched.stop()
		if waitErr == nil {
			waitErr = srv.WaitForEvents(waitCtx) // the scheduler's caches
		}
		if waitErr == nil {
			waitErr = sched.run(waitCtx, func(ctx context.Context) error {
				n, err := settle(ctx, b, clock)
				passes += n
				return err
			})
		}
	}
	wall := time.Since(clock.start)
	if o.MemProfile != "" {
		if err := writeHeapProfile(o.MemProfile); err != nil {
			return nil, err
		}
	}
	stop()
	progress.Wait()
	if o.Progress {
		fmt.Fprintf(stderr, "\r%-*s\n", progressWidth, fmt.Sprintf("bound %d/%d claims in %.1fs", clock.bound(), bindable, wall.Seconds()))
	}
	<-runDone
	if runErr != nil {
		return nil, fmt.Errorf("simulate: binder: %w", runErr)
	}
	if waitErr != nil && !errors.Is(waitErr, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, waitErr
	}

	r := &report{Completed: waitErr == nil, Interrupted: ctx.Err() != nil, ResyncPasses: passes, SetupWrites: setup.TotalWrites()}
	var classes []string
	for _, o := range srv.List(bindertest.KindStorageClass) {
		classes = append(classes, o.(*storagev1.StorageClass).Name)
	}
	r.tally(srv.SharedVolumes(), srv.SharedClaims(), classes, events)
	r.timing(wall, clock.latencies(), statsSince(setup, srv.Stats()))
	if len(podQueue) > 0 {
		r.tallyPods(srv.Pods(), srv.List(bindertest.KindNode), srv.SharedClaims(), srv.SharedVolumes(), sched)
	}
	stopHeap()
	sampling.Wait()
	r.memory(heap.peaks())
	return &simulation{report: r, server: srv}, nil
}

// heapSamplePeriod is how often a simulation samples the heap for its peak.
const heapSamplePeriod = 20 * time.Millisecond

// indexerHandler keeps idx in step with the events it gets, as an
// informer keeps its store. The index functions it is used with (none,
// or binder.PodClaimKeys) never fail, so neither do its updates.
func indexerHandler(idx toolscache.Indexer) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { _ = idx.Add(obj) },
		UpdateFunc: func(_, obj any) { _ = idx.Update(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			_ = idx.Delete(obj)
		},
	}
}

// statsSince returns the requests counted in now and not in before.
func statsSince(before, now bindertest.Stats) bindertest.Stats {
	out := bindertest.Stats{
		Writes:    map[bindertest.Kind]map[bindertest.Verb]int64{},
		Reads:     map[bindertest.Kind]int64{},
		Conflicts: now.Conflicts - before.Conflicts,
		Faults:    now.Faults - before.Faults,
	}
	for kind, byVerb := range now.Writes {
		for verb, n := range byVerb {
			if d := n - before.Writes[kind][verb]; d != 0 {
				if out.Writes[kind] == nil {
					out.Writes[kind] = map[bindertest.Verb]int64{}
				}
				out.Writes[kind][verb] = d
			}
		}
	}
	for kind, n := range now.Reads {
		if d := n - before.Reads[kind]; d != 0 {
			out.Reads[kind] = d
		}
	}
	return out
}

// settle waits until the Binder has nothing left to do after the
// scheduler's writes: their events delivered, the queues drained and the
// claims left pending synced again (resyncPending, whose passes it
// returns).
func settle(ctx context.Context, b settledBinder, claims interface{ pending() []string }) (int, error) {
	if err := b.WaitForQuiescence(ctx); err != nil {
		return 0, err
	}
	return resyncPending(ctx, b, claims)
}

// settledBinder is a Binder on an in-memory API that delivers its events
// asynchronously, as informers do (bindertest.Config.AsyncEvents): the
// Binder can be idle while the events of its last writes, which may give
// it work, are on their way.
type settledBinder struct {
	*binder.Binder
	srv *bindertest.Server
}

// WaitForQuiescence waits until every event has been delivered and then
// the Binder has nothing left to do, with no write in between.
func (b settledBinder) WaitForQuiescence(ctx context.Context) error {
	for {
		rv := b.srv.ResourceVersion()
		if err := b.srv.WaitForEvents(ctx); err != nil {
			return err
		}
		if err := b.Binder.WaitForQuiescence(ctx); err != nil {
			return err
		}
		if b.srv.ResourceVersion() == rv {
			return nil
		}
	}
}

// claimSyncer is what resyncPending needs of a running Binder.
type claimSyncer interface {
	SyncClaim(ctx context.Context, key string) error
	WaitForQuiescence(ctx context.Context) error
}

// maxResyncPasses bounds the passes of resyncPending.
const maxResyncPasses = 10

// resyncPending syncs every claim left Pending once more, as the periodic
// resync would, and waits for the Binder to settle again, until a pass
// binds nothing and fails no sync (or maxResyncPasses). Kubernetes offers a
// claim only volumes that are Available, and a volume becoming Available
// does not queue the claims waiting for one: a claim synced before its
// volume was made Available waits for its resync. It returns the number of
// passes that bound claims.
func resyncPending(ctx context.Context, b claimSyncer, claims interface{ pending() []string }) (int, error) {
	passes := 0
	for range maxResyncPasses {
		pending := claims.pending()
		if len(pending) == 0 {
			return passes, nil
		}
		failed := false
		for _, key := range pending {
			if err := b.SyncClaim(ctx, key); err != nil {
				if ctx.Err() != nil {
					return passes, ctx.Err()
				}
				failed = true
			}
		}
		if err := b.WaitForQuiescence(ctx); err != nil {
			return passes, err
		}
		bound := len(pending) - len(claims.pending())
		if bound > 0 {
			passes++
		}
		if bound == 0 && !failed {
			return passes, nil
		}
	}
	return passes, nil
}

// progressWidth is the width the progress line is padded to, so that a
// shorter line overwrites a longer one.
const progressWidth = 48

// printProgress prints the bound claims and the binding rate on one
// rewritten line of w until ctx is done.
func printProgress(ctx context.Context, w io.Writer, c *bindClock, total int) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			bound := c.bound()
			elapsed := time.Since(c.start).Seconds()
			fmt.Fprintf(w, "\r%-*s", progressWidth, fmt.Sprintf("bound %d/%d claims (%.0f/s)", bound, total, float64(bound)/elapsed))
		}
	}
}
