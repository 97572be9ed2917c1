package cli

import "runtime/debug"

// DefaultGOGC is the GC target of the commands that hold a cluster in
// memory, "volbind controller" and "volbind simulate", when $GOGC is not
// set: the heap may grow 50 % over the live heap between collections
// instead of Go's 100 %. Measured, 2 cores:
//   - the controller waits for the API server, not for the CPU: one
//     hack/bench-real.sh run (5,000 pairs, qps/burst 1000/2000), peak RSS
//     77 MiB instead of 88, 6.9 CPU-seconds instead of 5.9 (117 collections
//     instead of 52), bindings/s 130 and 136 (the API server's ceiling,
//     within the run-to-run noise);
//   - simulate of a million pairs, farm-bench -n 3 against GOGC=100 (A B A
//     B, 2026-11-29): peak RSS 3,801 MiB instead of 4,571 (medians;
//     3,751–3,836 against 4,570–4,830), CPU 1.13 times, the time to bind
//     the same (55.1–67.2 s against 58.5–67.3), the whole run 1.06 times.
const DefaultGOGC = 50

// ApplyGOGC sets the GC target to DefaultGOGC unless the environment
// (lookupEnv, os.LookupEnv in the program) sets GOGC, which the Go runtime
// has then applied already (GOMEMLIMIT is the runtime's too). It changes
// process-wide state.
func ApplyGOGC(lookupEnv func(string) (string, bool)) {
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(DefaultGOGC)
	}
}
