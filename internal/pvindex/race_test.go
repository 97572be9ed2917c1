//go:build race

package pvindex

// raceEnabled is true when the tests run under the race detector, which
// makes the randomized tests about six times slower.
const raceEnabled = true
