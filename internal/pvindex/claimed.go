package pvindex

import (
	"hash/maphash"
	"maps"
	"slices"
	"strings"
)

// claimHash is a claim's key in the claim map: a seeded 64-bit hash of its
// namespace and name. A map by the hash has 16-byte slots where one by
// claimKey had 40: 31 bytes less per bound volume at 100,000 pairs
// (BenchmarkMemoryPerPair). Two claims of one hash are told apart by the
// claimRefs of their records (claimsWith), so a collision costs time, never
// an answer.
type claimHash uint64

// hashClaim returns k's claimHash under ix's seed, or under ix.hash when
// a test set one.
func (ix *Index) hashClaim(k claimKey) claimHash {
	if ix.hash != nil {
		return claimHash(ix.hash(k))
	}
	return claimHash(maphash.Comparable(ix.seed, k))
}

// claimedLocked returns the volumes whose claimRef names k, sorted by
// name, or nil. A single volume is returned in one, so that the common
// case does not allocate. The caller holds ix.mu.
func (ix *Index) claimedLocked(k claimKey, one *[1]*record) []*record {
	if len(ix.byClaim) == 0 {
		return nil // no volume has a claimRef: skip the hash
	}
	h := ix.hashClaim(k)
	if len(ix.claimedMore) > 0 {
		if list, ok := ix.claimedMore[h]; ok {
			return claimsWith(list, k)
		}
	}
	r, ok := ix.byClaim[h]
	if !ok || r.claim() != k {
		return nil
	}
	one[0] = r
	return one[:]
}

// claimsWith returns the records of list (sorted by name) whose claimRef
// names k: list itself when all do, as they do unless two claims share a
// hash.
func claimsWith(list []*record, k claimKey) []*record {
	if !slices.ContainsFunc(list, func(r *record) bool { return r.claim() != k }) {
		return list
	}
	var out []*record
	for _, r := range list {
		if r.claim() == k {
			out = append(out, r)
		}
	}
	return out
}

// linkClaimLocked files r, which has a claimRef, under the hash of the
// claim it names. The caller holds ix.mu for writing.
func (ix *Index) linkClaimLocked(r *record) {
	h := ix.hashClaim(r.claim())
	held, ok := ix.byClaim[h]
	if !ok {
		ix.byClaim[h] = r
		return
	}
	list, ok := ix.claimedMore[h]
	if !ok {
		list = []*record{held}
	}
	i, _ := slices.BinarySearchFunc(list, r.key.name, func(e *record, name string) int {
		return strings.Compare(e.key.name, name)
	})
	ix.claimedMore[h] = slices.Insert(list, i, r)
}

// unlinkClaimLocked removes r, which has a claimRef, from under the hash of
// the claim it names. The caller holds ix.mu for writing.
func (ix *Index) unlinkClaimLocked(r *record) {
	h := ix.hashClaim(r.claim())
	list, ok := ix.claimedMore[h]
	if !ok {
		if ix.byClaim[h] == r {
			delete(ix.byClaim, h)
		}
		return
	}
	// A list holds two records or more, so one is left at least; byClaim
	// may hold r.
	list = slices.DeleteFunc(list, func(e *record) bool { return e == r })
	if len(list) == 1 {
		delete(ix.claimedMore, h)
	} else {
		ix.claimedMore[h] = list
	}
	ix.byClaim[h] = list[0]
}

// relinkClaimLocked puts r in old's place under the claim both name (r
// replaces old, of the same volume name). The caller holds ix.mu for
// writing.
func (ix *Index) relinkClaimLocked(old, r *record) {
	h := ix.hashClaim(r.claim())
	if list, ok := ix.claimedMore[h]; ok {
		// Sorted by name: r takes old's index. byClaim holds one of
		// them, maybe old.
		list[slices.Index(list, old)] = r
		if ix.byClaim[h] != old {
			return
		}
	}
	ix.byClaim[h] = r
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
	grown := make(map[claimHash]*record, n)
	maps.Copy(grown, ix.byClaim)
	ix.byClaim = grown
}

// minReserveClaims is the smallest n that ReserveClaims makes room for.
const minReserveClaims = 1024
