package binder

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/volbind/volbind/jitter"
)

// runState is what exists while Run runs: the queues and their resyncs.
type runState struct {
	claims, volumes workqueue.TypedRateLimitingInterface[string]
	// claimResync and volumeResync re-queue every object once per resync
	// period, each at its own offset; nil when the resync is disabled.
	claimResync, volumeResync *jitter.Resync[string]
}

// newRunState creates the queues (which start their own goroutines, hence
// only in Run) and the resyncs.
func (b *Binder) newRunState() (*runState, error) {
	newQueue := func(name string) workqueue.TypedRateLimitingInterface[string] {
		cfg := workqueue.TypedRateLimitingQueueConfig[string]{Clock: b.cfg.Clock}
		if p := b.metrics.provider(); p != nil {
			cfg.Name, cfg.MetricsProvider = name, p
		}
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](b.cfg.RetryBaseDelay, b.cfg.RetryMaxDelay), cfg)
	}
	rs := &runState{claims: newQueue("claims"), volumes: newQueue("volumes")}
	if b.cfg.ResyncPeriod > 0 {
		rcfg := jitter.ResyncConfig{Period: b.cfg.ResyncPeriod, Jitter: b.cfg.ResyncJitter, Clock: b.cfg.Clock}
		var err error
		if rs.claimResync, err = jitter.NewResync[string](rs.claims, jitter.StringHash, rcfg); err == nil {
			rs.volumeResync, err = jitter.NewResync[string](rs.volumes, jitter.StringHash, rcfg)
		}
		if err != nil {
			rs.claims.ShutDown()
			rs.volumes.ShutDown()
			return nil, err
		}
	}
	return rs, nil
}

// resyncDue reports whether a resync was due by now and has not queued its
// keys yet.
func (rs *runState) resyncDue(now time.Time) bool {
	return rs.claimResync != nil && (rs.claimResync.Due(now) || rs.volumeResync.Due(now))
}

// resyncs returns the resyncs to run.
func (rs *runState) resyncs() []interface{ Run(context.Context) } {
	if rs.claimResync == nil {
		return nil
	}
	return []interface{ Run(context.Context) }{rs.claimResync, rs.volumeResync}
}

// enqueueClaim queues a claim key while Run runs; before Run, Run itself
// queues every known claim.
func (b *Binder) enqueueClaim(key string) { b.enqueue(workKey{key: key}) }

// enqueueVolume queues a volume name while Run runs.
func (b *Binder) enqueueVolume(name string) { b.enqueue(workKey{volume: true, key: name}) }

func (b *Binder) enqueue(wk workKey) {
	var waiting waitingClaim
	var isWaiting bool
	if b.holds != nil && !wk.volume {
		waiting, isWaiting = b.waitingClaimOf(wk.key)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	rs := b.running.Load()
	if rs == nil {
		return
	}
	b.queued[wk] = struct{}{}
	if wk.volume {
		rs.volumes.Add(wk.key)
		return
	}
	if b.holds != nil {
		// Under b.mu, so that a worker that finishes this claim's sync
		// sees it queued again and keeps it waiting.
		b.holds.claimQueued(wk.key, waiting, isWaiting)
	}
	rs.claims.Add(wk.key)
}

// track starts the periodic resync of an object.
func (b *Binder) track(wk workKey) {
	rs := b.running.Load()
	if rs == nil || rs.claimResync == nil {
		return
	}
	if wk.volume {
		rs.volumeResync.Add(wk.key)
	} else {
		rs.claimResync.Add(wk.key)
	}
}

// forget stops the resync of a deleted object.
func (b *Binder) forget(wk workKey) {
	rs := b.running.Load()
	if rs == nil || rs.claimResync == nil {
		return
	}
	if wk.volume {
		rs.volumeResync.Remove(wk.key)
	} else {
		rs.claimResync.Remove(wk.key)
	}
}
