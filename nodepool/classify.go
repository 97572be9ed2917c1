package nodepool

import (
	"cmp"
	"hash/maphash"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// podClass is a set of waiting pods with identical requirements.
type podClass struct {
	idx  int
	rep  *v1.Pod
	pods []*v1.Pod // sorted by namespace/name
	free []*v1.Pod // pods without a kept binding, in pods order
	disk int64     // requested disk bytes (FixedSizeDisk only), 0 = none
	// keys are the label keys the pod names; fields is set when it uses
	// matchFields.
	keys   []string
	fields bool
	aff    nodeaffinity.RequiredNodeAffinity
}

func (c *podClass) mentions(key string) bool { return slices.Contains(c.keys, key) }

// nodeGroup is a set of nodes that agree on every label key that matters
// in this round (and on the name when some pod uses matchFields).
type nodeGroup struct {
	idx   int
	rep   *v1.Node
	nodes []*v1.Node // participating nodes, by name
	ranks []uint8    // phaseRank of nodes[i]
	free  []*v1.Node // nodes without a kept binding, sorted by phase and name
	disk  int64      // disk size bytes (-1 = unparsable); only when disk matters
}

// requirementsHash hashes what decides a pod's class.
func requirementsHash(h *maphash.Hash, pod *v1.Pod, disk int64) uint64 {
	var sel uint64
	seed := h.Seed()
	for k, v := range pod.Spec.NodeSelector {
		sel += maphash.String(seed, k)*31 ^ maphash.String(seed, v)
	}
	h.Reset()
	writeUint64(h, sel)
	writeUint64(h, uint64(disk))
	if ns := requiredSelector(pod); ns != nil {
		for i := range ns.NodeSelectorTerms {
			t := &ns.NodeSelectorTerms[i]
			h.WriteByte(1)
			writeReqs(h, t.MatchExpressions)
			h.WriteByte(2)
			writeReqs(h, t.MatchFields)
		}
	}
	return h.Sum64()
}

func writeUint64(h *maphash.Hash, v uint64) {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	h.Write(b[:])
}

func writeReqs(h *maphash.Hash, reqs []v1.NodeSelectorRequirement) {
	for i := range reqs {
		r := &reqs[i]
		h.WriteString(r.Key)
		h.WriteByte(0)
		h.WriteString(string(r.Operator))
		h.WriteByte(0)
		for _, v := range r.Values {
			h.WriteString(v)
			h.WriteByte(0)
		}
		h.WriteByte(3)
	}
}

func requiredSelector(pod *v1.Pod) *v1.NodeSelector {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

// sameRequirements reports whether two pods have identical requirements.
func sameRequirements(a, b *v1.Pod) bool {
	if len(a.Spec.NodeSelector) != len(b.Spec.NodeSelector) {
		return false
	}
	for k, v := range a.Spec.NodeSelector {
		if w, ok := b.Spec.NodeSelector[k]; !ok || w != v {
			return false
		}
	}
	sa, sb := requiredSelector(a), requiredSelector(b)
	if (sa == nil) != (sb == nil) {
		return false
	}
	if sa == nil {
		return true
	}
	return slices.EqualFunc(sa.NodeSelectorTerms, sb.NodeSelectorTerms, func(x, y v1.NodeSelectorTerm) bool {
		return slices.EqualFunc(x.MatchExpressions, y.MatchExpressions, sameReq) &&
			slices.EqualFunc(x.MatchFields, y.MatchFields, sameReq)
	})
}

func sameReq(x, y v1.NodeSelectorRequirement) bool {
	return x.Key == y.Key && x.Operator == y.Operator && slices.Equal(x.Values, y.Values)
}

// podDisk returns the pod's ephemeral-storage request in bytes.
func podDisk(pod *v1.Pod) int64 {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	q, ok := reqs[v1.ResourceEphemeralStorage]
	if !ok {
		return 0
	}
	return q.Value()
}

// classify groups pods, sorted by namespace/name, by requirements. Classes
// come out in the order of their first pod; classOf[i] is the class of
// pods[i].
func (s *Scaler) classify(pods []*v1.Pod) (classes []*podClass, classOf []*podClass) {
	classOf = make([]*podClass, len(pods))
	var h maphash.Hash
	h.SetSeed(s.seed)
	byHash := newHashIndex()
	for i, p := range pods {
		var disk int64
		if s.cfg.FixedSizeDisk {
			disk = podDisk(p)
		}
		hv := requirementsHash(&h, p, disk)
		if j := byHash.find(hv, func(j int) bool {
			return classes[j].disk == disk && sameRequirements(classes[j].rep, p)
		}); j >= 0 {
			classes[j].pods = append(classes[j].pods, p)
			classOf[i] = classes[j]
			continue
		}
		byHash.add(hv)
		classOf[i] = &podClass{idx: len(classes), rep: p, pods: []*v1.Pod{p}, disk: disk}
		classes = append(classes, classOf[i])
	}
	for _, c := range classes {
		c.aff = nodeaffinity.GetRequiredNodeAffinity(c.rep)
		for k := range c.rep.Spec.NodeSelector {
			c.keys = append(c.keys, k)
		}
		if ns := requiredSelector(c.rep); ns != nil {
			for _, t := range ns.NodeSelectorTerms {
				for _, r := range t.MatchExpressions {
					c.keys = append(c.keys, r.Key)
				}
				if len(t.MatchFields) > 0 {
					c.fields = true
				}
			}
		}
		slices.Sort(c.keys)
		c.keys = slices.Compact(c.keys)
	}
	return classes, classOf
}

func comparePods(a, b *v1.Pod) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// groupNodes groups nodes, sorted by name, by the values of keys (and by
// name when byName). Groups come out in the order of their first node;
// groupOf[i] is the group of nodes[i].
func (s *Scaler) groupNodes(nodes []*v1.Node, keys []string, byName bool) (groups []*nodeGroup, groupOf []*nodeGroup) {
	groupOf = make([]*nodeGroup, len(nodes))
	var h maphash.Hash
	h.SetSeed(s.seed)
	byHash := newHashIndex()
	for i, n := range nodes {
		h.Reset()
		for i, k := range keys {
			v, ok := n.Labels[k]
			if ok {
				h.WriteByte(byte(i) | 0x80)
				h.WriteString(v)
			}
			h.WriteByte(0)
		}
		if byName {
			h.WriteString(n.Name)
		}
		hv := h.Sum64()
		if j := byHash.find(hv, func(j int) bool {
			rep := groups[j].rep
			return sameLabels(rep, n, keys) && (!byName || rep.Name == n.Name)
		}); j >= 0 {
			g := groups[j]
			g.nodes = append(g.nodes, n)
			g.ranks = append(g.ranks, phaseRank(n))
			groupOf[i] = g
			continue
		}
		byHash.add(hv)
		g := &nodeGroup{idx: len(groups), rep: n, nodes: []*v1.Node{n}, ranks: []uint8{phaseRank(n)}, disk: s.nodeDisk(n)}
		groupOf[i] = g
		groups = append(groups, g)
	}
	return groups, groupOf
}

// hashIndex finds the group an item belongs to among the groups made so
// far (0, 1, ... in order of add), when equal hashes may still differ.
type hashIndex struct {
	// last maps a hash to the latest group with it.
	last map[uint64]int32
	// prev[j] is the group added before j with j's hash, or -1.
	prev []int32
}

func newHashIndex() hashIndex { return hashIndex{last: make(map[uint64]int32)} }

// find returns the latest group with hash hv for which same holds, or -1.
func (x *hashIndex) find(hv uint64, same func(j int) bool) int {
	j, ok := x.last[hv]
	if !ok {
		return -1
	}
	for ; j >= 0; j = x.prev[j] {
		if same(int(j)) {
			return int(j)
		}
	}
	return -1
}

// add records the next group, len(prev), under hash hv.
func (x *hashIndex) add(hv uint64) {
	p, ok := x.last[hv]
	if !ok {
		p = -1
	}
	x.last[hv] = int32(len(x.prev))
	x.prev = append(x.prev, p)
}

func sameLabels(a, b *v1.Node, keys []string) bool {
	for _, k := range keys {
		va, oka := a.Labels[k]
		vb, okb := b.Labels[k]
		if oka != okb || va != vb {
			return false
		}
	}
	return true
}

// nodeDisk returns the node's disk size in bytes: the default when it has
// no disk size label, -1 when the label does not parse.
func (s *Scaler) nodeDisk(n *v1.Node) int64 {
	v, ok := n.Labels[s.cfg.DiskSizeKey]
	if !ok || s.cfg.DefaultDiskSize.IsZero() {
		return s.diskSize
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return -1
	}
	return q.Value()
}

// capacityType returns the node's capacity type; absent means on-demand.
func (s *Scaler) capacityType(labels map[string]string) string {
	if v := labels[s.cfg.CapacityTypeKey]; v != "" {
		return v
	}
	return CapacityOnDemand
}

// podFits reports whether the pods of class c may use the nodes of g, and
// an error (wrapping ErrInvalidPod) when c's requirements do not parse.
func (s *Scaler) podFits(c *podClass, g *nodeGroup) (bool, error) {
	return s.classFitsNode(c, g.rep, g.disk)
}

func (s *Scaler) classFitsNode(c *podClass, n *v1.Node, disk int64) (bool, error) {
	if !c.mentions(s.cfg.CapacityTypeKey) && s.capacityType(n.Labels) != CapacityOnDemand {
		return false, nil
	}
	for _, k := range s.cfg.ExtraKeys {
		if !c.mentions(k) && n.Labels[k] != "" {
			return false, nil
		}
	}
	if s.cfg.FixedSizeDisk {
		want := c.disk
		if want == 0 {
			want = s.diskSize
		}
		if disk != want {
			return false, nil
		}
	}
	return c.aff.Match(n)
}

// standbyFits reports whether a node of g may count for standby spec sp.
func (s *Scaler) standbyFits(sp *StandbySpec, g *nodeGroup) bool {
	l := g.rep.Labels
	if l[InstanceTypeLabel] != sp.InstanceType || s.capacityType(l) != sp.CapacityType {
		return false
	}
	if !s.cfg.DefaultDiskSize.IsZero() && g.disk != s.diskSize {
		return false
	}
	for k, v := range sp.Labels {
		if w, ok := l[k]; !ok || w != v {
			return false
		}
	}
	for _, k := range s.cfg.ExtraKeys {
		if _, named := sp.Labels[k]; !named && l[k] != "" {
			return false
		}
	}
	return true
}
