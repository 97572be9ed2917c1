package bindertest

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// store holds the stored versions of one kind by namespace and then name,
// without a "namespace/name" string per object: that key was 24 bytes per
// claim (a million claims: 24 MB) and a string built for every request
// naming a claim (BenchmarkMemoryPerPair and BenchmarkBindingWrites before
// and after: see docs/performance-notes.md). A cluster-scoped kind's
// objects are all in the namespace "".
type store struct {
	namespaced bool
	byNS       map[string]map[string]object
	// n is the number of objects stored.
	n int
	// reserved is, per namespace, the size reserve last made its map for.
	reserved map[string]int
	// room is what Grow made room for in a namespaced kind, not yet spread
	// over namespaces (see Server.Grow).
	room int
}

func newStore(namespaced bool) store {
	return store{namespaced: namespaced, byNS: make(map[string]map[string]object), reserved: make(map[string]int)}
}

// namespace returns the namespace the store files an object of namespace
// ns under: "" for a cluster-scoped kind.
func (st *store) namespace(ns string) string {
	if !st.namespaced {
		return ""
	}
	return ns
}

// get returns the object stored under namespace and name.
func (st *store) get(namespace, name string) (object, bool) {
	o, ok := st.byNS[st.namespace(namespace)][name]
	return o, ok
}

// put stores o under its namespace and name, replacing what is stored
// there.
func (st *store) put(o object) {
	ns := st.namespace(o.GetNamespace())
	m := st.byNS[ns]
	if m == nil {
		m = make(map[string]object)
		st.byNS[ns] = m
	}
	before := len(m)
	m[o.GetName()] = o
	st.n += len(m) - before
}

// remove removes the object stored under namespace and name, if any.
func (st *store) remove(namespace, name string) {
	ns := st.namespace(namespace)
	m := st.byNS[ns]
	before := len(m)
	delete(m, name)
	st.n -= before - len(m)
	if len(m) == 0 && before > 0 {
		delete(st.byNS, ns)
		delete(st.reserved, ns)
	}
}

// reserve makes room in namespace ns for n more objects at once when
// they are at least minReserve and as many as it holds: a map grown one
// insert at a time moves each object about twice as it grows, and at a
// million objects that growth took 2.7 s of CPU of a simulate run (2
// cores); copying what is stored moves each stored object once. A map
// made large enough before is kept.
func (st *store) reserve(ns string, n int) {
	ns = st.namespace(ns)
	m := st.byNS[ns]
	if n < minReserve || n < len(m) || len(m)+n <= st.reserved[ns] {
		return
	}
	grown := make(map[string]object, len(m)+n)
	maps.Copy(grown, m)
	st.byNS[ns] = grown
	st.reserved[ns] = len(m) + n
}

// minReserve is the smallest number of objects reserve makes room for.
const minReserve = 1024

// reserveSeed makes room for a seed of the kind: perNS counts its objects
// by namespace. Room that Grow made for a namespaced kind is spread over
// the seed's namespaces in the seed's proportions (a cluster seeded in
// chunks, as volbind simulate seeds it, spreads its objects alike in
// every chunk).
func (st *store) reserveSeed(perNS map[string]int) {
	total := 0
	for _, n := range perNS {
		total += n
	}
	room := st.room
	st.room = 0
	for ns, n := range perNS {
		if share := room * n / total; share > n {
			n = share
		}
		st.reserve(ns, n)
	}
}

// sorted returns the stored objects in the order of their keys ("name", or
// "namespace/name" for a namespaced kind), as an informer's initial list
// and kube-apiserver's lists return them: by "namespace/" and then by name,
// unless a namespace holds a '/' (which only SeedInvalid stores). The
// objects themselves are not read (sorting names with their objects
// instead of looking each sorted key up again: BenchmarkSharedVolumes, 2
// cores, 100,000 volumes 98 → 72 ms, a million 2.42, 2.14 → 1.68, 1.45
// s).
func (st *store) sorted() []object {
	prefixes := make([]string, 0, len(st.byNS)) // "namespace/", or "" for a cluster-scoped kind
	largest := 0
	for ns, m := range st.byNS {
		if strings.Contains(ns, "/") {
			return st.sortedKeys()
		}
		if st.namespaced {
			ns += "/"
		}
		prefixes = append(prefixes, ns)
		largest = max(largest, len(m))
	}
	slices.Sort(prefixes)
	out := make([]object, 0, st.n)
	objs := make([]named, 0, largest)
	for _, prefix := range prefixes {
		objs = objs[:0]
		for name, o := range st.byNS[strings.TrimSuffix(prefix, "/")] {
			objs = append(objs, named{name, o})
		}
		slices.SortFunc(objs, func(a, b named) int { return cmp.Compare(a.name, b.name) })
		for _, o := range objs {
			out = append(out, o.obj)
		}
	}
	return out
}

// named is a stored object with its name.
type named struct {
	name string
	obj  object
}

// sortedKeys returns the stored objects of a namespaced kind in the order
// of their "namespace/name" keys, built: with a '/' in a namespace, keys of
// different namespaces can interleave.
func (st *store) sortedKeys() []object {
	all := make([]named, 0, st.n)
	for ns, m := range st.byNS {
		for name, o := range m {
			all = append(all, named{ns + "/" + name, o})
		}
	}
	slices.SortFunc(all, func(a, b named) int { return cmp.Compare(a.name, b.name) })
	out := make([]object, len(all))
	for i, k := range all {
		out[i] = k.obj
	}
	return out
}
