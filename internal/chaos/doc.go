// Package chaos drives the Binder through random clusters and fault
// schedules on a bindertest.Server and checks, once everything has settled,
// the invariants a volume binder must never break (Violation lists them):
// on the Server's objects, on the storage behind them (every Provision,
// Delete and Recycle call is checked as it is made) and on what each
// Binder reports through binder.Config.Observer (every object must have
// been synced at its final version).
//
// A Case is derived from a seed (CaseFor) and can be written as one line
// (Case.String, ParseCase), so that a failing run replays:
//
//	go test ./internal/chaos -run 'TestChaos$' -chaos.case='seed=7,objects=40,...'
//
// Run executes a Case; Shrink cuts a failing Case down to a smaller one
// that still fails. The tests of this package run a fixed set of seeds in
// CI; hack/chaos.sh runs many more in parallel.
//
// The disturbances come in classes (Class), all on by default; a class
// that shows a known, unfixed problem goes into KnownBugs, which the
// default leaves out (-chaos.classes=all, or its name, enables it). A run
// whose settled cluster breaks an invariant that a new Binder then
// repairs (Result.RepairedByRestart) left the Binder stuck rather than
// broke something; such seeds fail too, unless -chaos.strict=false.
//
// A run uses a fake clock for the Binder and the Server, real goroutines
// for the Binder's workers and informers, and waits on conditions (the
// Binder's quiescence, informers caught up with the Server), never on
// sleeps. Interleavings differ between runs of one Case: a Case replays
// its cluster, its fault schedule and its random streams, and usually its
// outcome.
package chaos
