package operations

import "time"

// backoff is the state of a name whose last operation failed, as
// Kubernetes' exponentialbackoff.ExponentialBackoff keeps it.
type backoff struct {
	// lastErr is the failure that set until.
	lastErr error
	// delay is the current delay: initial after one failure, doubled after
	// each further one, capped.
	delay time.Duration
	// until is when the backoff ends: Run is refused while now <= until.
	until time.Time
}

// fail records a failure at now: the first failure waits initial, every
// further one twice the previous delay, at most maxDelay.
func (b *backoff) fail(now time.Time, err error, initial, maxDelay time.Duration) {
	switch {
	case b.delay == 0:
		b.delay = initial
	case b.delay > maxDelay/2:
		b.delay = maxDelay
	default:
		b.delay *= 2
	}
	b.lastErr = err
	b.until = now.Add(b.delay)
}
