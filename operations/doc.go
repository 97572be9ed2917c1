// Package operations runs at most one operation per name and serialises work
// per key, as the Kubernetes PersistentVolume controller does with its
// goroutine map and the kubelet with its per-volume SetUp/TearDown mutex.
//
// A Map starts each operation in its own goroutine under a name. A second Run
// for a name that is still running is refused at once with ErrAlreadyRunning;
// Run never blocks on the running operation. When an operation fails (or
// panics: the panic is recovered and becomes the failure), the name backs off
// exponentially before it may run again, with Kubernetes' defaults of 500 ms
// doubling up to 2 min 2 s; the refusal is a *BackoffError that matches
// ErrBackoff and says when the name may run again. A success forgets the
// backoff. Time comes from the injected clock, so tests drive backoff with a
// fake clock. Shutdown cancels the context handed to running operations and
// refuses new ones; Wait waits for the running ones to return.
//
// VolumeOpName and ClaimOpName build the names the PV controller uses
// ("delete-<pv>[<uid>]", "provision-<namespace>/<name>[<uid>]"), so logs and
// errors show which object an operation is for.
//
// Locks is a set of mutexes keyed by string. Two different keys never wait
// for each other, and the memory of a key is released as soon as nobody holds
// or waits for it, so a long-running process does not accumulate keys.
//
// All methods are safe for concurrent use.
//
// It is for authors of controllers that run long operations per object
// (provision, delete, recycle) and must never run two at once for one
// object; the binder runs its operations and per-object locks on it.
package operations
