// Package jitter runs jittered periodic loops on an injected clock and
// spreads the periodic resync of many objects evenly over the period.
//
// Every runs a function every period, stretched by a random factor, like
// wait.JitterUntil but on an injected clock.WithTicker, so tests drive it
// with a fake clock; it is built on wait.BackoffUntilWithContext. Factor 0
// is a plain period.
//
// A Resync hands every registered key to an add function (a client-go
// workqueue's Add, or whatever the caller puts in front of its queue) once
// per period, each key at its own stable offset within the
// period, so that N objects' resyncs arrive at a flat rate instead of all at
// once as an informer's resync does.
//
// # How Resync spreads keys
//
// The period is cut into Slots equal slots (1,000 by default); a slot's keys
// are enqueued together at the slot's start. A key's preferred slot comes
// from its hash. A plain hash would put Poisson-distributed numbers of keys
// in each slot: for 10,000 keys the busiest hundredth of the period would
// get 1.25 to 1.3 times the mean. Resync instead balances while it assigns:
// a new key goes to the first slot, from its preferred one onwards, that
// holds fewer than ⌈(n+1)/Slots⌉ keys, where n is the number of keys already
// registered. While keys are only added, every slot therefore holds
// ⌊n/Slots⌋ or ⌈n/Slots⌉ keys, and any window of w·Period receives at most
// (⌊w·Slots⌋+1)·⌈n/Slots⌉ enqueues per period: for 10,000 keys and
// windows of a hundredth of the period, at most 110, 1.1 times the mean
// (with the default 1,000 slots, whose boundaries fall on the windows',
// exactly 100 each). Most keys land in their preferred slot or just after
// it, and a key keeps its slot, and so its offset, as long as it is
// registered. Removing keys never moves the others, and the rule never fills
// a slot beyond ⌈m/Slots⌉, m the largest number of keys registered at once:
// with churn at a steady number of keys the bound above holds at all times.
//
// Periods start at multiples of Period since the Unix epoch, so the same
// keys added in the same order get the same offsets in every process.
//
// # Sweep: the same without a copy of the keys
//
// A Resync keeps every key (its map entry and slot: about 55 bytes per
// string key at 100,000 keys, besides the strings). A Sweep keeps none: the caller's store is split into parts
// (a sharded cache's shards), the period into as many slots, and at the
// start of slot p the Sweep asks the caller for part p's keys and adds
// them. A key is swept exactly while the store holds it, with nothing to
// register or remove; the price is a coarser spread, a part's keys at
// once, as flat as the caller's hash spreads keys over its parts.
//
// It is for authors of controllers that resync many objects periodically
// and want a flat load instead of a burst per period; the binder's resync
// runs on a Sweep over its caches' 64 shards.
package jitter
