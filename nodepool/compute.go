package nodepool

import (
	"cmp"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Binding binds a waiting pod to an existing node. Both are shared with the
// caller's input; do not mutate.
type Binding struct {
	Pod  *v1.Pod
	Node *v1.Node
}

// Unbound is a waiting pod left without a node this round, and why: Err
// wraps ErrShapeUnavailable, ErrBootLimit, ErrUnsatisfiable or
// ErrInvalidPod. Pod is shared with the caller's input.
type Unbound struct {
	Pod *v1.Pod
	Err error
}

// Round is the outcome of one Compute. Node and pod pointers other than
// Boot.Node are the caller's inputs, shared; do not mutate them. Every list
// is in a deterministic order that does not depend on the input order.
type Round struct {
	// Bindings are the waiting pods bound to existing nodes: bindings kept
	// from the nodes' annotations and new ones.
	Bindings []Binding
	// Boots are the nodes to boot: one per pod that got no existing node
	// (pre-bound to it), and standby refills.
	Boots []Boot
	// Stop are the nodes to stop: unbound idle nodes not kept for standby,
	// and used nodes handed back for cleanup (PhaseCleaning).
	Stop []*v1.Node
	// Standby are the unbound nodes kept for the standby pools.
	Standby []*v1.Node
	// Updates are the binding annotation writes to apply.
	Updates []NodeUpdate
	// Unbound are the waiting pods that got neither a node nor a boot.
	Unbound []Unbound
}

// BindingMap returns the round's bindings as pod → node name.
func (r *Round) BindingMap() map[types.NamespacedName]string {
	m := make(map[types.NamespacedName]string, len(r.Bindings))
	for _, b := range r.Bindings {
		m[podKey(b.Pod)] = b.Node.Name
	}
	return m
}

// Compute computes one pool-loop round for the given nodes and pods (all of
// them; Compute picks the waiting pods and the nodes that take part). It
// does not modify its arguments and writes nothing. It fails, wrapping
// ErrInvalidInput, only on a nil object or a duplicate node or pod.
//
// A round has five steps: pick the waiting pods and the nodes that take
// part; work out which pod class fits which node group; keep the recorded
// bindings that still hold; match the remaining pods and standby pools to
// the free nodes; boot nodes for what is left.
func (s *Scaler) Compute(nodes []*v1.Node, pods []*v1.Pod) (*Round, error) {
	waiting, err := s.waitingPods(pods)
	if err != nil {
		return nil, err
	}
	part, cleaning, err := partNodes(nodes)
	if err != nil {
		return nil, err
	}
	r := &Round{Stop: cleaning}
	classes, classOf := s.classify(waiting)
	keys, byName := s.roundKeys(classes)
	groups, groupOf := s.groupNodes(part, keys, byName)
	adj, invalid := s.compatibility(classes, groups)
	stale := keepBindings(r, part, waiting, classes, classOf, groups, groupOf, adj)
	m := s.match(classes, groups, adj)
	needBoot, deficit := s.expand(r, m, classes, groups, stale)
	s.boot(r, classes, invalid, needBoot, deficit)
	return r, nil
}

// waitingPods returns the waiting pods sorted by namespace and name. It
// fails on a nil pod or a duplicate waiting pod.
func (s *Scaler) waitingPods(pods []*v1.Pod) ([]*v1.Pod, error) {
	waiting := make([]*v1.Pod, 0, len(pods))
	for i, p := range pods {
		if p == nil {
			return nil, fmt.Errorf("%w: pod %d is nil", ErrInvalidInput, i)
		}
		if s.cfg.IsWaiting(p) {
			waiting = append(waiting, p)
		}
	}
	slices.SortFunc(waiting, comparePods)
	for i := 1; i < len(waiting); i++ {
		if comparePods(waiting[i-1], waiting[i]) == 0 {
			return nil, fmt.Errorf("%w: duplicate pod %s", ErrInvalidInput, klog.KObj(waiting[i]))
		}
	}
	return waiting, nil
}

// partNodes returns the nodes that take part in matching and the nodes
// being cleaned (to stop), each sorted by name. It fails on a nil node or a
// duplicate node that takes part.
func partNodes(nodes []*v1.Node) (part, cleaning []*v1.Node, err error) {
	part = make([]*v1.Node, 0, len(nodes))
	for i, n := range nodes {
		if n == nil {
			return nil, nil, fmt.Errorf("%w: node %d is nil", ErrInvalidInput, i)
		}
		switch ph := NodePhase(n); {
		case ph == PhaseCleaning:
			cleaning = append(cleaning, n)
		case ph.takesPart():
			part = append(part, n)
		}
	}
	slices.SortFunc(part, compareNodes)
	for i := 1; i < len(part); i++ {
		if part[i-1].Name == part[i].Name {
			return nil, nil, fmt.Errorf("%w: duplicate node %q", ErrInvalidInput, part[i].Name)
		}
	}
	slices.SortFunc(cleaning, compareNodes)
	return part, cleaning, nil
}

// compatibility returns, for every class, the sorted indexes of the groups
// its pods fit (adjacency), and for every class whose pods cannot be
// evaluated, why (such a class fits nothing).
func (s *Scaler) compatibility(classes []*podClass, groups []*nodeGroup) (adj [][]int32, invalid []error) {
	invalid = make([]error, len(classes))
	adj = make([][]int32, len(classes))
	gidx := newGroupIndex(groups)
	var every []int32 // 0..len(groups)-1, made for the first class that pins nothing
	for _, c := range classes {
		cands, all := gidx.candidates(c)
		if all {
			if every == nil {
				every = allGroups(len(groups))
			}
			cands = every
		}
		for _, gi := range cands {
			g := groups[gi]
			ok, err := s.podFits(c, g)
			if err != nil {
				invalid[c.idx] = fmt.Errorf("%w: pod %s: %w", ErrInvalidPod, klog.KObj(c.rep), err)
				adj[c.idx] = nil
				break
			}
			if ok {
				adj[c.idx] = append(adj[c.idx], int32(g.idx))
			}
		}
	}
	return adj, invalid
}

// keepBindings keeps the bindings recorded on the nodes that still hold
// (the pod waits, its class fits the node's group, and no node earlier by
// name holds it already) and adds them to r. It sets every class's free
// pods and every group's free nodes to those without a kept binding, and
// returns the annotated nodes whose binding did not hold, by name.
func keepBindings(r *Round, part []*v1.Node, waiting []*v1.Pod, classes []*podClass, classOf []*podClass,
	groups []*nodeGroup, groupOf []*nodeGroup, adj [][]int32) (stale []*v1.Node) {
	var annotated []int
	for i, n := range part {
		if n.Annotations[BoundPodAnnotation] != "" {
			annotated = append(annotated, i)
		}
	}
	boundPod := make(map[*v1.Pod]bool, len(annotated))
	kept := make(map[*v1.Node]bool, len(annotated))
	for _, i := range annotated {
		n := part[i]
		if key, ok := BoundPod(n); ok {
			if wi, found := slices.BinarySearchFunc(waiting, key, comparePodKey); found {
				p := waiting[wi]
				if _, fits := slices.BinarySearch(adj[classOf[wi].idx], int32(groupOf[i].idx)); fits && !boundPod[p] {
					boundPod[p] = true
					kept[n] = true
					r.Bindings = append(r.Bindings, Binding{Pod: p, Node: n})
					continue
				}
			}
		}
		stale = append(stale, n)
	}
	for _, c := range classes {
		c.free = c.pods
		if len(boundPod) > 0 {
			c.free = slices.DeleteFunc(slices.Clone(c.pods), func(p *v1.Pod) bool { return boundPod[p] })
		}
	}
	for _, g := range groups {
		g.free = freeNodes(g, kept)
	}
	return stale
}

// expand turns the matching m into concrete bindings, binding writes,
// standby nodes and stops, in class and group order, and clears the stale
// bindings whose node got no new pod. It returns, per class, the pods left
// without a node, and per standby spec, how many nodes it still lacks.
func (s *Scaler) expand(r *Round, m *matching, classes []*podClass, groups []*nodeGroup, stale []*v1.Node) (needBoot [][]*v1.Pod, deficit []int) {
	cursor := make([]int, len(groups))
	staleSet := make(map[*v1.Node]bool, len(stale))
	for _, n := range stale {
		staleSet[n] = true
	}
	needBoot = make([][]*v1.Pod, len(classes))
	for _, c := range classes {
		i := 0
		for _, e := range m.classEdges[c.idx] {
			g := groups[e.group]
			for range m.g.flow(e.edge) {
				p, n := c.free[i], g.free[cursor[g.idx]]
				i++
				cursor[g.idx]++
				r.Bindings = append(r.Bindings, Binding{Pod: p, Node: n})
				delete(staleSet, n) // rebound: no clear
				// A free node carries no binding or a stale one; write
				// unless that stale binding already names p.
				if !annotatedWith(n, p) {
					r.Updates = append(r.Updates, NodeUpdate{Node: n, Pod: podKey(p)})
				}
			}
		}
		needBoot[c.idx] = c.free[i:]
	}
	deficit = s.expandStandby(r, m, groups, cursor)
	for _, g := range groups {
		r.Stop = append(r.Stop, g.free[cursor[g.idx]:]...)
	}
	for _, n := range stale {
		if staleSet[n] {
			r.Updates = append(r.Updates, NodeUpdate{Node: n})
		}
	}
	return needBoot, deficit
}

// expandStandby adds the free nodes the matching m keeps for the standby
// pools to r.Standby, from each group's cursor on, and returns how many
// nodes every spec still lacks.
func (s *Scaler) expandStandby(r *Round, m *matching, groups []*nodeGroup, cursor []int) (deficit []int) {
	deficit = make([]int, len(s.cfg.Standby))
	for j := range s.cfg.Standby {
		got := 0
		for _, e := range m.specEdges[j] {
			g := groups[e.group]
			for range m.g.flow(e.edge) {
				r.Standby = append(r.Standby, g.free[cursor[g.idx]])
				cursor[g.idx]++
				got++
			}
		}
		deficit[j] = s.cfg.Standby[j].Count - got
	}
	return deficit
}

// allGroups returns 0..n-1.
func allGroups(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// roundKeys returns the label keys that split nodes into groups this round:
// the base keys and every key a waiting pod names; byName is set when some
// pod uses matchFields.
func (s *Scaler) roundKeys(classes []*podClass) (keys []string, byName bool) {
	keys = s.baseKeys
	extended := false
	for _, c := range classes {
		byName = byName || c.fields
		for _, k := range c.keys {
			if _, found := slices.BinarySearch(keys, k); !found {
				if !extended {
					keys = slices.Clone(keys)
					extended = true
				}
				keys = append(keys, k)
				slices.Sort(keys)
			}
		}
	}
	return keys, byName
}

// phaseRank orders nodes for pods: available ones first.
func phaseRank(n *v1.Node) uint8 {
	switch NodePhase(n) {
	case PhaseAvailable:
		return 0
	case PhaseCreated:
		return 1
	}
	return 2
}

// freeNodes returns g's nodes without a kept binding: available ones
// first, then created, then creating, each by name.
func freeNodes(g *nodeGroup, kept map[*v1.Node]bool) []*v1.Node {
	sorted := true
	for i := 1; i < len(g.ranks); i++ {
		if g.ranks[i] < g.ranks[i-1] {
			sorted = false
			break
		}
	}
	if sorted && len(kept) == 0 {
		return g.nodes
	}
	free := make([]*v1.Node, 0, len(g.nodes))
	for rank := uint8(0); rank <= 2; rank++ {
		for i, n := range g.nodes {
			if g.ranks[i] == rank && !kept[n] {
				free = append(free, n)
			}
		}
	}
	return free
}

func compareNodes(a, b *v1.Node) int { return cmp.Compare(a.Name, b.Name) }

func comparePodKey(p *v1.Pod, k types.NamespacedName) int {
	return cmp.Or(cmp.Compare(p.Namespace, k.Namespace), cmp.Compare(p.Name, k.Name))
}

// annotatedWith reports whether n's binding annotation already names p.
func annotatedWith(n *v1.Node, p *v1.Pod) bool {
	v := n.Annotations[BoundPodAnnotation]
	return len(v) == len(p.Namespace)+1+len(p.Name) && v[:len(p.Namespace)] == p.Namespace &&
		v[len(p.Namespace)] == '/' && v[len(p.Namespace)+1:] == p.Name
}

// boot fills r.Boots and r.Unbound for the pods without a node and the
// standby deficits, honouring the BootLimiter and the per-round cap: pods
// first, round-robin over shapes, then standby refills with what the cap
// leaves.
func (s *Scaler) boot(r *Round, classes []*podClass, invalid []error, needBoot [][]*v1.Pod, deficit []int) {
	unavailable := map[Shape]bool{}
	isUnavailable := func(sh Shape) bool {
		u, ok := unavailable[sh]
		if !ok {
			u = s.cfg.Limiter.Unavailable(sh)
			unavailable[sh] = u
		}
		return u
	}
	qs := s.bootQueues(r, classes, invalid, needBoot, isUnavailable)
	limit := s.cfg.MaxBootsPerRound
	n := s.bootPods(r, qs, limit)
	if limit >= 0 {
		limit -= n
	}
	s.bootStandby(r, deficit, limit, isUnavailable)
}

// bootQueues sorts the pods without a node into one queue per shape, in
// shape order. Pods that cannot get a node (invalid, no template, shape
// unavailable) go to r.Unbound with the reason.
func (s *Scaler) bootQueues(r *Round, classes []*podClass, invalid []error, needBoot [][]*v1.Pod, isUnavailable func(Shape) bool) []*bootQueue {
	queues := map[Shape]*bootQueue{}
	for _, c := range classes {
		pods := needBoot[c.idx]
		if len(pods) == 0 {
			continue
		}
		err := invalid[c.idx]
		var labels map[string]string
		if err == nil {
			labels, err = s.template(c)
		}
		if err == nil {
			if sh := shapeOf(labels, s.cfg.CapacityTypeKey); isUnavailable(sh) {
				err = fmt.Errorf("%w: %s %s in zone %q", ErrShapeUnavailable, sh.CapacityType, sh.InstanceType, sh.Zone)
			} else {
				q := queues[sh]
				if q == nil {
					q = &bootQueue{shape: sh}
					queues[sh] = q
				}
				// Classes of one shape may differ in labels beyond the
				// shape; each pod's node takes its own class's labels.
				q.spans = append(q.spans, labelSpan{from: len(q.pods), labels: labels})
				q.pods = append(q.pods, pods...)
				continue
			}
		}
		for _, p := range pods {
			r.Unbound = append(r.Unbound, Unbound{Pod: p, Err: err})
		}
	}
	qs := make([]*bootQueue, 0, len(queues))
	for _, q := range queues {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b *bootQueue) int { return compareShapes(a.shape, b.shape) })
	return qs
}

// bootPods boots a node per queued pod, round-robin over the queues, up to
// limit (negative: no limit); the pods beyond it go to r.Unbound with
// ErrBootLimit. It returns the number of boots.
func (s *Scaler) bootPods(r *Round, qs []*bootQueue, limit int) int {
	lens := make([]int, len(qs))
	for i, q := range qs {
		lens[i] = len(q.pods)
	}
	took := make([]int, len(qs))
	n := roundRobin(lens, limit, func(q, i int) {
		p := qs[q].pods[i]
		r.Boots = append(r.Boots, Boot{Node: s.newNode(qs[q].labelsAt(i), p), Pod: p, Standby: -1})
		took[q]++
	})
	for i, q := range qs {
		for _, p := range q.pods[took[i]:] {
			r.Unbound = append(r.Unbound, Unbound{Pod: p, Err: ErrBootLimit})
		}
	}
	return n
}

// bootStandby boots standby nodes for the specs' deficits, round-robin over
// the specs whose shape is available, up to limit (negative: no limit).
func (s *Scaler) bootStandby(r *Round, deficit []int, limit int, isUnavailable func(Shape) bool) {
	specLens := make([]int, len(deficit))
	for j, d := range deficit {
		sp := &s.cfg.Standby[j]
		if d <= 0 {
			continue
		}
		if isUnavailable(shapeOf(s.standbyLabels(sp), s.cfg.CapacityTypeKey)) {
			continue
		}
		specLens[j] = d
	}
	roundRobin(specLens, limit, func(j, _ int) {
		r.Boots = append(r.Boots, Boot{Node: s.newNode(s.standbyLabels(&s.cfg.Standby[j]), nil), Standby: j})
	})
}
