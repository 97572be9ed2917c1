package nodepool

// flowEdge is an edge from a class or spec vertex to a group vertex.
type flowEdge struct {
	group int
	edge  int
}

// matching is the solved flow network of one round.
type matching struct {
	g          *flowGraph
	classEdges [][]flowEdge // per class, in group order
	specEdges  [][]flowEdge // per standby spec, in group order
}

// match solves the round's matching as a maximum flow: source → class
// (capacity: its unbound pods) → group (when the class fits the group) →
// sink (capacity: the group's unbound nodes). It first maximises the pods
// matched, then, without unmatching any pod, adds source → standby spec
// (capacity: its count) → group edges and maximises the nodes kept for
// standby. Edge order follows the sorted classes, specs and groups, so the
// result is deterministic.
func (s *Scaler) match(classes []*podClass, groups []*nodeGroup, adj [][]int32) *matching {
	nc, ns := len(classes), len(s.cfg.Standby)
	const src, sink = 0, 1
	classV := func(i int) int { return 2 + i }
	specV := func(j int) int { return 2 + nc + j }
	groupV := func(i int) int { return 2 + nc + ns + i }
	g := newFlowGraph(2 + nc + ns + len(groups))
	m := &matching{g: g, classEdges: make([][]flowEdge, nc), specEdges: make([][]flowEdge, ns)}
	for _, c := range classes {
		if len(c.free) == 0 || len(adj[c.idx]) == 0 {
			continue
		}
		g.addEdge(src, classV(c.idx), int64(len(c.free)))
		for _, gi := range adj[c.idx] {
			if len(groups[gi].free) > 0 {
				m.classEdges[c.idx] = append(m.classEdges[c.idx], flowEdge{group: int(gi), edge: g.addEdge(classV(c.idx), groupV(int(gi)), unlimited)})
			}
		}
	}
	specSrc := make([]int, ns)
	for j := range s.cfg.Standby {
		specSrc[j] = -1
		sp := &s.cfg.Standby[j]
		if sp.Count == 0 {
			continue
		}
		for _, gr := range groups {
			if len(gr.free) > 0 && s.standbyFits(sp, gr) {
				if specSrc[j] < 0 {
					specSrc[j] = g.addEdge(src, specV(j), 0)
				}
				m.specEdges[j] = append(m.specEdges[j], flowEdge{group: gr.idx, edge: g.addEdge(specV(j), groupV(gr.idx), unlimited)})
			}
		}
	}
	for _, gr := range groups {
		if len(gr.free) > 0 {
			g.addEdge(groupV(gr.idx), sink, int64(len(gr.free)))
		}
	}
	g.maxFlow(src, sink)
	raised := false
	for j, e := range specSrc {
		if e >= 0 {
			g.cap[e] = int64(s.cfg.Standby[j].Count)
			raised = true
		}
	}
	if raised {
		g.maxFlow(src, sink)
	}
	return m
}
