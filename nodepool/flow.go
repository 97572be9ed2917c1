package nodepool

// flowGraph is a flow network solved with Dinic's algorithm. A round builds
// it over pod classes and node groups (not single pods and nodes), so it is
// small; on unit capacities Dinic is Hopcroft–Karp.
type flowGraph struct {
	head []int32 // first edge of each vertex, -1 = none
	next []int32 // next edge of the same tail
	to   []int32
	cap  []int64 // residual capacity; edge e^1 is the reverse of e

	level []int32
	iter  []int32
	queue []int32
}

// unlimited is the capacity of class→group and spec→group edges.
const unlimited = int64(1) << 50

func newFlowGraph(vertices int) *flowGraph {
	g := &flowGraph{head: make([]int32, vertices)}
	for i := range g.head {
		g.head[i] = -1
	}
	return g
}

// addEdge adds u→v with capacity c and returns its index.
func (g *flowGraph) addEdge(u, v int, c int64) int {
	e := len(g.to)
	g.to = append(g.to, int32(v), int32(u))
	g.cap = append(g.cap, c, 0)
	g.next = append(g.next, g.head[u], g.head[v])
	g.head[u] = int32(e)
	g.head[v] = int32(e + 1)
	return e
}

// flow returns the flow on edge e (for an edge added with addEdge).
func (g *flowGraph) flow(e int) int64 { return g.cap[e^1] }

// maxFlow augments the current flow from s to t to a maximum and returns
// the amount added. Flow already on edges out of s is never reduced, so a
// second call after raising capacities keeps what the first one routed.
func (g *flowGraph) maxFlow(s, t int) int64 {
	n := len(g.head)
	if cap(g.level) < n {
		g.level = make([]int32, n)
		g.iter = make([]int32, n)
		g.queue = make([]int32, 0, n)
	}
	g.level, g.iter = g.level[:n], g.iter[:n]
	var total int64
	for g.bfs(s, t) {
		copy(g.iter, g.head)
		for {
			f := g.dfs(s, t, unlimited)
			if f == 0 {
				break
			}
			total += f
		}
	}
	return total
}

func (g *flowGraph) bfs(s, t int) bool {
	for i := range g.level {
		g.level[i] = -1
	}
	g.level[s] = 0
	q := g.queue[:0]
	q = append(q, int32(s))
	for i := 0; i < len(q); i++ {
		u := q[i]
		for e := g.head[u]; e >= 0; e = g.next[e] {
			v := g.to[e]
			if g.cap[e] > 0 && g.level[v] < 0 {
				g.level[v] = g.level[u] + 1
				q = append(q, v)
			}
		}
	}
	g.queue = q
	return g.level[t] >= 0
}

// dfs finds one augmenting path in the level graph; its depth is at most
// the number of vertices of the (small, compressed) graph.
func (g *flowGraph) dfs(u, t int, f int64) int64 {
	if u == t {
		return f
	}
	for ; g.iter[u] >= 0; g.iter[u] = g.next[g.iter[u]] {
		e := g.iter[u]
		v := int(g.to[e])
		if g.cap[e] <= 0 || g.level[v] != g.level[u]+1 {
			continue
		}
		if d := g.dfs(v, t, min(f, g.cap[e])); d > 0 {
			g.cap[e] -= d
			g.cap[e^1] += d
			return d
		}
	}
	return 0
}
