package pvindex

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"gopkg.in/inf.v0"
)

// tree is a B+tree of records ordered by key (capacity, then name). Leaves
// hold the records and are chained left to right, so a search finds the first
// record of at least some capacity in O(log N) and then walks forward. Insert
// and remove are O(log N): nodes split when they overflow and borrow from or
// merge with a sibling when they fall below half full. The zero value is an
// empty tree. tree is not safe for concurrent writes; Index guards it.
//
// It is kept instead of github.com/google/btree's BTreeG because the leaf
// chain gives FindBestMatch a plain cursor: finding the first record of at
// least some capacity and walking a few records measured 30–41 ns against
// 240–260 ns for BTreeG.AscendGreaterOrEqual with a callback (1,000 and
// 100,000 keys, 2 cores), with equal or faster updates and no new module.
type tree struct {
	root *node
	len  int
}

const (
	maxEntries = 64             // most items of a leaf, most children of an inner node
	minEntries = maxEntries / 2 // fewest, except at the root
)

// node is a leaf (items, next) or an inner node (keys, children). In an inner
// node len(children) == len(keys)+1, every key in children[i] is less than
// keys[i], and keys[i] is at most every key in children[i+1]. A key may
// outlive the record it was copied from; the order still holds.
type node struct {
	leaf     bool
	items    []item
	next     *node
	keys     []separator
	children []*node
}

// separator is an inner node's key with the first 8 bytes of its name,
// big-endian, so that a descent by key compares names of equal capacity as
// integers and reads a separator's name (a string elsewhere on the heap)
// only when those bytes are equal. Inner nodes are 1/32 or less of the
// nodes, so the 8 bytes cost nothing that counts; in the leaves the same
// prefix made every item larger and searches slower.
type separator struct {
	key
	prefix uint64
}

func separatorOf(k key) separator { return separator{key: k, prefix: namePrefix(k.name)} }

// namePrefix returns the first 8 bytes of name, big-endian, zero-padded:
// namePrefix(a) < namePrefix(b) implies a < b.
func namePrefix(name string) uint64 {
	var b [8]byte
	copy(b[:], name)
	return binary.BigEndian.Uint64(b[:])
}

// compare orders s against k, whose name has the prefix kp, as key.compare
// orders their keys.
func (s *separator) compare(k key, kp uint64) int {
	if c := s.cap.compare(k.cap); c != 0 {
		return c
	}
	if c := cmp.Compare(s.prefix, kp); c != 0 {
		return c
	}
	return strings.Compare(s.name, k.name)
}

// item is a leaf's entry: its record, whose key orders it, and the floor of
// the key's capacity. Searches compare the integers and read records (and
// their names, strings elsewhere on the heap) only among the items of one
// floor, and a removal finds its record there by pointer, comparing no
// names. An item is 16 bytes instead of the 40 of a copy of the key: a full
// leaf is 1 KiB instead of 2.5. CPU profiles of BenchmarkBinderBindAll at
// 100,000 pairs (about 33 volumes of each size per class, 600,000
// bindings, 2 cores): tree.remove 1.55 → 0.79 s, tree.atLeast 1.16 → 0.70 s
// (the VM 17 % faster in the second run); the scheduler's
// BenchmarkMemoryPerVolume 307 → 276 bytes per volume.
type item struct {
	floor int64
	rec   *record
}

// floor returns the largest integer not above c, clamped to the int64
// range. It orders capacities as compare does, with ties: c < d implies
// c.floor() <= d.floor(), and c.floor() < d.floor() implies c < d.
func (c capacity) floor() int64 {
	if c.big == nil {
		return c.n
	}
	q := c.big.DeepCopy() // AsDec converts its receiver in place; big is shared
	f := new(inf.Dec).Round(q.AsDec(), 0, inf.RoundFloor).UnscaledBig()
	switch {
	case f.IsInt64():
		return f.Int64()
	case f.Sign() > 0:
		return math.MaxInt64
	default:
		return math.MinInt64
	}
}

// firstFloor returns the index of n's first item whose floor is at least f.
// Every item before it has a smaller capacity than any capacity of floor f.
func (n *node) firstFloor(f int64) int {
	lo, hi := 0, len(n.items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.items[m].floor < f {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// childFor returns the index of the first of n.keys greater than k, that
// is, the child that holds k.
func (n *node) childFor(k key) int {
	kp := namePrefix(k.name)
	lo, hi := 0, len(n.keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.keys[m].compare(k, kp) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// itemAt returns the index of the first item not less than k.
func (n *node) itemAt(k key) int {
	f := k.cap.floor()
	lo := n.firstFloor(f)
	hi := lo
	for hi < len(n.items) && n.items[hi].floor == f {
		hi++ // items from hi on have larger capacities than k's
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.items[m].rec.key.compare(k) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// insert adds r; its key must not be in the tree yet.
func (t *tree) insert(r *record) {
	it := item{floor: r.key.cap.floor(), rec: r}
	t.len++
	if t.root == nil {
		t.root = &node{leaf: true, items: make([]item, 1, maxEntries+1)}
		t.root.items[0] = it
		return
	}
	right, sep := t.root.insert(it)
	if right != nil {
		t.root = &node{keys: []separator{separatorOf(sep)}, children: []*node{t.root, right}}
	}
}

// insert adds it below n. When n overflows it splits, returning the new right
// sibling and the key that separates the two.
func (n *node) insert(it item) (*node, key) {
	if n.leaf {
		n.items = slices.Insert(n.items, n.itemAt(it.rec.key), it)
		if len(n.items) <= maxEntries {
			return nil, key{}
		}
		mid := len(n.items) / 2
		right := &node{leaf: true, items: make([]item, len(n.items)-mid, maxEntries+1), next: n.next}
		copy(right.items, n.items[mid:])
		clear(n.items[mid:])
		n.items = n.items[:mid]
		n.next = right
		return right, right.items[0].rec.key
	}
	i := n.childFor(it.rec.key)
	split, sep := n.children[i].insert(it)
	if split == nil {
		return nil, key{}
	}
	n.keys = slices.Insert(n.keys, i, separatorOf(sep))
	n.children = slices.Insert(n.children, i+1, split)
	if len(n.children) <= maxEntries {
		return nil, key{}
	}
	mid := len(n.children) / 2
	up := n.keys[mid-1].key
	right := &node{
		keys:     append(make([]separator, 0, maxEntries), n.keys[mid:]...),
		children: append(make([]*node, 0, maxEntries+1), n.children[mid:]...),
	}
	clear(n.keys[mid-1:])
	clear(n.children[mid:])
	n.keys = n.keys[:mid-1]
	n.children = n.children[:mid]
	return right, up
}

// remove deletes r and reports whether it was there.
func (t *tree) remove(r *record) bool {
	if t.root == nil || !t.root.remove(r, r.key.cap.floor()) {
		return false
	}
	t.len--
	switch {
	case t.root.leaf && len(t.root.items) == 0:
		t.root = nil
	case !t.root.leaf && len(t.root.children) == 1:
		t.root = t.root.children[0]
	}
	return true
}

// remove deletes r, whose key's capacity has floor f, from below n.
func (n *node) remove(r *record, f int64) bool {
	if n.leaf {
		for i := n.firstFloor(f); i < len(n.items) && n.items[i].floor == f; i++ {
			if n.items[i].rec == r {
				n.items = slices.Delete(n.items, i, i+1)
				return true
			}
		}
		return false
	}
	i := n.childFor(r.key)
	if !n.children[i].remove(r, f) {
		return false
	}
	if n.children[i].size() < minEntries {
		n.rebalance(i)
	}
	return true
}

func (n *node) size() int {
	if n.leaf {
		return len(n.items)
	}
	return len(n.children)
}

// rebalance refills children[i], which fell below minEntries, from a sibling
// that can spare an entry, or else merges it with a sibling.
func (n *node) rebalance(i int) {
	c := n.children[i]
	if i > 0 && n.children[i-1].size() > minEntries {
		l := n.children[i-1]
		if c.leaf {
			last := l.items[len(l.items)-1]
			l.items = slices.Delete(l.items, len(l.items)-1, len(l.items))
			c.items = slices.Insert(c.items, 0, last)
			n.keys[i-1] = separatorOf(last.rec.key)
			return
		}
		c.keys = slices.Insert(c.keys, 0, n.keys[i-1])
		c.children = slices.Insert(c.children, 0, l.children[len(l.children)-1])
		n.keys[i-1] = l.keys[len(l.keys)-1]
		l.keys = slices.Delete(l.keys, len(l.keys)-1, len(l.keys))
		l.children = slices.Delete(l.children, len(l.children)-1, len(l.children))
		return
	}
	if i+1 < len(n.children) && n.children[i+1].size() > minEntries {
		r := n.children[i+1]
		if c.leaf {
			c.items = append(c.items, r.items[0])
			r.items = slices.Delete(r.items, 0, 1)
			n.keys[i] = separatorOf(r.items[0].rec.key)
			return
		}
		c.keys = append(c.keys, n.keys[i])
		c.children = append(c.children, r.children[0])
		n.keys[i] = r.keys[0]
		r.keys = slices.Delete(r.keys, 0, 1)
		r.children = slices.Delete(r.children, 0, 1)
		return
	}
	if i > 0 {
		i-- // merge with the left sibling
	}
	if i+1 < len(n.children) {
		n.merge(i)
	}
}

// merge folds children[i+1] into children[i].
func (n *node) merge(i int) {
	l, r := n.children[i], n.children[i+1]
	if l.leaf {
		l.items = append(l.items, r.items...)
		l.next = r.next
	} else {
		l.keys = append(l.keys, n.keys[i])
		l.keys = append(l.keys, r.keys...)
		l.children = append(l.children, r.children...)
	}
	n.keys = slices.Delete(n.keys, i, i+1)
	n.children = slices.Delete(n.children, i+1, i+2)
}

// cursor walks the records of a tree in key order.
type cursor struct {
	leaf *node
	i    int
}

// atLeast returns a cursor on the first record whose capacity is at least c.
func (t *tree) atLeast(c capacity) cursor {
	n := t.root
	if n == nil {
		return cursor{}
	}
	for !n.leaf {
		lo, hi := 0, len(n.keys)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if n.keys[m].cap.compare(c) < 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		n = n.children[lo]
	}
	f := c.floor()
	i := n.firstFloor(f)
	if c.big != nil || f == math.MinInt64 {
		// Items of floor f may be smaller than c: a fraction, or a
		// capacity clamped to the int64 range. (For any other c, an item of
		// floor f has a capacity of at least f, which is c.)
		for i < len(n.items) && n.items[i].floor == f && n.items[i].rec.key.cap.compare(c) < 0 {
			i++
		}
	}
	return cursor{leaf: n, i: i}
}

// next returns the record under the cursor and advances it; nil at the end.
func (c *cursor) next() *record {
	for c.leaf != nil && c.i == len(c.leaf.items) {
		c.leaf, c.i = c.leaf.next, 0
	}
	if c.leaf == nil {
		return nil
	}
	r := c.leaf.items[c.i].rec
	c.i++
	return r
}
