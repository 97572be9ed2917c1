package nodepool

import "testing"

func TestFlowGraph(t *testing.T) {
	t.Parallel()
	type edge struct {
		u, v int
		c    int64
	}
	tests := []struct {
		name  string
		n     int
		edges []edge
		want  int64
	}{
		{"empty", 2, nil, 0},
		{"single edge", 2, []edge{{0, 1, 5}}, 5},
		{"bottleneck", 3, []edge{{0, 2, 5}, {2, 1, 3}}, 3},
		{"needs a reverse edge", 6, []edge{
			// s=0 t=1; left 2,3; right 4,5. 2-4, 2-5, 3-4. Greedy 2-4
			// blocks 3; the maximum reroutes 2 to 5.
			{0, 2, 1}, {0, 3, 1}, {2, 4, 1}, {2, 5, 1}, {3, 4, 1}, {4, 1, 1}, {5, 1, 1},
		}, 2},
		{"classic", 6, []edge{
			{0, 2, 10}, {0, 3, 10}, {2, 3, 2}, {2, 4, 4}, {2, 5, 8}, {3, 5, 9}, {5, 4, 6}, {4, 1, 10}, {5, 1, 10},
		}, 19},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFlowGraph(tc.n)
			for _, e := range tc.edges {
				g.addEdge(e.u, e.v, e.c)
			}
			if got := g.maxFlow(0, 1); got != tc.want {
				t.Errorf("maxFlow() = %d, want %d", got, tc.want)
			}
			if got := g.maxFlow(0, 1); got != 0 {
				t.Errorf("second maxFlow() = %d, want 0", got)
			}
		})
	}
}

// TestFlowGraphPriority: raising a capacity out of the source and solving
// again adds flow without taking any from the first source edges.
func TestFlowGraphPriority(t *testing.T) {
	t.Parallel()
	// s=0 t=1; pod class 2, spec 3, groups 4 and 5 with one node each.
	// The class fits both groups, the spec only group 4.
	g := newFlowGraph(6)
	class := g.addEdge(0, 2, 1)
	spec := g.addEdge(0, 3, 0)
	g.addEdge(2, 5, unlimited)
	c4 := g.addEdge(2, 4, unlimited) // tried first: adjacency is LIFO
	g.addEdge(3, 4, unlimited)
	g.addEdge(4, 1, 1)
	g.addEdge(5, 1, 1)
	if got := g.maxFlow(0, 1); got != 1 {
		t.Fatalf("first maxFlow() = %d, want 1", got)
	}
	if g.flow(c4) != 1 {
		t.Fatalf("test assumes the class first takes group 4")
	}
	g.cap[spec] = 1
	if got := g.maxFlow(0, 1); got != 1 {
		t.Fatalf("second maxFlow() = %d, want 1", got)
	}
	if g.flow(class) != 1 || g.flow(spec) != 1 || g.flow(c4) != 0 {
		t.Errorf("flows: class %d spec %d class→4 %d; want 1 1 0 (class rerouted to group 5)", g.flow(class), g.flow(spec), g.flow(c4))
	}
}
