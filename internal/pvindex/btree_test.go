package pvindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// check verifies the B+tree invariants and returns the keys in leaf order.
func (t *tree) check(tb testing.TB) []key {
	tb.Helper()
	if t.root == nil {
		if t.len != 0 {
			tb.Fatalf("empty tree has len %d", t.len)
		}
		return nil
	}
	var inOrder []key
	depth := -1
	var walk func(n *node, lo, hi *key, d int, root bool)
	walk = func(n *node, lo, hi *key, d int, root bool) {
		if !root && n.size() < minEntries {
			tb.Fatalf("node with %d entries below the minimum %d", n.size(), minEntries)
		}
		if n.size() > maxEntries {
			tb.Fatalf("node with %d entries above the maximum %d", n.size(), maxEntries)
		}
		if n.leaf {
			if depth == -1 {
				depth = d
			} else if depth != d {
				tb.Fatalf("leaves at depths %d and %d", depth, d)
			}
			for _, it := range n.items {
				k := it.rec.key
				if lo != nil && k.compare(*lo) < 0 || hi != nil && k.compare(*hi) >= 0 {
					tb.Fatalf("key %v outside its node's range", k)
				}
				if f := k.cap.floor(); it.floor != f {
					tb.Fatalf("item of key %v has floor %d, its capacity %d", k, it.floor, f)
				}
				inOrder = append(inOrder, k)
			}
			return
		}
		for _, k := range n.keys {
			if k.prefix != namePrefix(k.name) {
				tb.Fatalf("separator %v has prefix %#x, its name %#x", k.key, k.prefix, namePrefix(k.name))
			}
		}
		if len(n.children) != len(n.keys)+1 {
			tb.Fatalf("inner node with %d children and %d keys", len(n.children), len(n.keys))
		}
		for i, c := range n.children {
			clo, chi := lo, hi
			if i > 0 {
				clo = &n.keys[i-1].key
			}
			if i < len(n.keys) {
				chi = &n.keys[i].key
			}
			walk(c, clo, chi, d+1, false)
		}
	}
	walk(t.root, nil, nil, 0, true)
	if !slices.IsSortedFunc(inOrder, key.compare) {
		tb.Fatalf("keys out of order")
	}
	if len(inOrder) != t.len {
		tb.Fatalf("tree holds %d keys, len says %d", len(inOrder), t.len)
	}
	var chained []key
	for c := t.atLeast(capacity{n: -1 << 63}); ; {
		r := c.next()
		if r == nil {
			break
		}
		chained = append(chained, r.key)
	}
	if !slices.Equal(chained, inOrder) {
		tb.Fatalf("leaf chain has %d keys, tree walk %d", len(chained), len(inOrder))
	}
	return inOrder
}

func TestTreeAgainstSortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	rounds := 20
	if raceEnabled {
		rounds = 6
	}
	for round := range rounds {
		var tr tree
		var want []key
		live := map[string]*record{}
		maxSize := 1 + rng.IntN(3000)
		for step := range 6000 {
			name := fmt.Sprintf("pv-%d", rng.IntN(maxSize))
			if r, ok := live[name]; ok && rng.IntN(2) == 0 {
				if !tr.remove(r) {
					t.Fatalf("round %d step %d: remove(%v) = false, want true", round, step, r.key)
				}
				delete(live, name)
				i, _ := slices.BinarySearchFunc(want, r.key, key.compare)
				want = slices.Delete(want, i, i+1)
				continue
			} else if ok {
				continue
			}
			r := &record{derived: derived{key: key{cap: capacity{n: int64(rng.IntN(50))}, name: name}}}
			if rng.IntN(50) == 0 {
				q := resource.MustParse(fmt.Sprintf("%dm", rng.IntN(50000)))
				r.key.cap = capacity{big: &q}
			}
			tr.insert(r)
			live[name] = r
			i, _ := slices.BinarySearchFunc(want, r.key, key.compare)
			want = slices.Insert(want, i, r.key)
			if step%500 == 0 {
				if got := tr.check(t); !slices.Equal(got, want) {
					t.Fatalf("round %d step %d: tree keys differ from the sorted slice", round, step)
				}
				// atLeast finds the first key of at least the capacity.
				c := capacity{n: int64(rng.IntN(52))}
				if rng.IntN(2) == 0 {
					q := resource.MustParse(fmt.Sprintf("%dm", rng.IntN(52000)))
					c = capacity{big: &q}
				}
				cur := tr.atLeast(c)
				got := cur.next()
				j, _ := slices.BinarySearchFunc(want, key{cap: c}, func(k, target key) int { return k.cap.compare(target.cap) })
				switch {
				case j == len(want) && got != nil:
					t.Fatalf("atLeast(%v) = %v, want end", c.quantity(), got.key)
				case j < len(want) && (got == nil || got.key != want[j]):
					t.Fatalf("atLeast(%v) = %v, want %v", c.quantity(), got.key, want[j])
				}
			}
		}
		if tr.remove(&record{derived: derived{key: key{name: "absent"}}}) {
			t.Fatalf("remove of an absent record = true")
		}
		for _, r := range live {
			if tr.remove(&record{derived: r.derived}) {
				t.Fatalf("remove of a copy of the record of %v = true", r.key)
			}
			tr.remove(r)
		}
		tr.check(t)
		if tr.root != nil || tr.len != 0 {
			t.Fatalf("round %d: tree not empty after removing everything", round)
		}
	}
}

// TestSeparatorCompare checks that comparing name prefixes first orders
// keys as comparing their names does, with names that share prefixes,
// differ only in length, or hold NUL and 0xff bytes.
func TestSeparatorCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 2))
	alphabet := []byte{0, 1, 'a', 'b', 0xfe, 0xff}
	name := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 200_000 {
		a := key{cap: capacity{n: int64(rng.IntN(2))}, name: name()}
		b := key{cap: capacity{n: int64(rng.IntN(2))}, name: name()}
		s := separatorOf(a)
		if got, want := s.compare(b, namePrefix(b.name)), a.compare(b); got != want {
			t.Fatalf("separator %q (cap %d) against %q (cap %d) = %d, keys compare %d", a.name, a.cap.n, b.name, b.cap.n, got, want)
		}
	}
}

// TestCapacityFloor checks the floors the leaves order by, and that they
// order capacities as compare does.
func TestCapacityFloor(t *testing.T) {
	tests := []struct {
		q    string
		want int64
	}{
		{"1Gi", 1 << 30},
		{"1500m", 1},
		{"999m", 0},
		{"1", 1},
		{"0", 0},
		{"-1", -1},
		{"-1500m", -2},
		{"-1m", -1},
		{"16Ei", math.MaxInt64}, // parsing caps it
		{"1e30", math.MaxInt64},
		{"-1e30", math.MinInt64},
		{"9223372036854775807500m", math.MaxInt64},
	}
	var caps []capacity
	for _, tc := range tests {
		c := storageOf(v1.ResourceList{v1.ResourceStorage: resource.MustParse(tc.q)})
		if got := c.floor(); got != tc.want {
			t.Errorf("floor(%s) = %d, want %d", tc.q, got, tc.want)
		}
		caps = append(caps, c)
	}
	for _, a := range caps {
		for _, b := range caps {
			if a.compare(b) < 0 && a.floor() > b.floor() || a.floor() < b.floor() && a.compare(b) >= 0 {
				t.Errorf("floors %d and %d of %v and %v order them otherwise", a.floor(), b.floor(), a.quantity(), b.quantity())
			}
		}
	}
}

func TestCapacityCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1Gi", "1Gi", 0},
		{"1Gi", "1073741824", 0},
		{"1G", "1Gi", -1},
		{"1500m", "1", 1},
		{"1500m", "2", -1},
		{"1500m", "1.5", 0},
		{"16Ei", "1Ei", 1},
		{"16Ei", "8Ei", 0}, // parsing caps both at MaxInt64, as Kubernetes sees them
		{"1000001m", "1000", 1},
		{"0", "0", 0},
		{"-1", "0", -1},
	}
	for _, tc := range tests {
		a := storageOf(v1.ResourceList{v1.ResourceStorage: resource.MustParse(tc.a)})
		b := storageOf(v1.ResourceList{v1.ResourceStorage: resource.MustParse(tc.b)})
		if got := a.compare(b); got != tc.want {
			t.Errorf("compare(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := b.compare(a); got != -tc.want {
			t.Errorf("compare(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}
