package explain

import (
	"fmt"
	"io"
	"strings"
)

// WritePodText writes x for a terminal: the verdict, each claim's verdict,
// then the nodes, those with the same outcome together, with the
// candidates of a claim that found no volume shown for the first node of
// its group.
func WritePodText(w io.Writer, x *PodExplanation) error {
	ew := &errWriter{w: w}
	ew.printf("Pod %s: %s\n", x.Pod, x.Summary)
	if x.Verdict != Scheduled {
		ew.printf("(volumes only: kube-scheduler's other filters, such as resources and taints, are not consulted)\n")
	}
	if len(x.Claims) > 0 {
		ew.printf("\nClaims:\n")
		for _, c := range x.Claims {
			ew.printf("  %s: %s\n", c.Claim, c.Summary)
			if c.Reason != "" {
				ew.printf("    Why: %s\n", c.Reason)
			}
			if c.Verdict == Unsatisfiable || c.Verdict == WouldBind && x.Verdict == Unschedulable {
				writeCandidates(ew, c.Candidates, c.More, "", "  ")
			}
		}
	}
	if len(x.Nodes) > 0 {
		ew.printf("\nNodes:\n")
	}
	for _, g := range groupNodes(x.Nodes) {
		writeNodeGroup(ew, g)
	}
	return ew.err
}

// nodeGroup is nodes whose outcome reads the same.
type nodeGroup struct {
	names []string
	first *NodeExplanation
	key   string
}

// groupNodes groups the nodes by their outcome without node-specific
// details (candidates), in the order each outcome first appears.
func groupNodes(nodes []NodeExplanation) []*nodeGroup {
	var out []*nodeGroup
	byKey := map[string]*nodeGroup{}
	for i := range nodes {
		n := &nodes[i]
		key := nodeKey(n)
		g := byKey[key]
		if g == nil {
			g = &nodeGroup{first: n, key: key}
			byKey[key] = g
			out = append(out, g)
		}
		g.names = append(g.names, n.Node)
	}
	return out
}

func nodeKey(n *NodeExplanation) string {
	var b strings.Builder
	fmt.Fprint(&b, n.Fits)
	for _, c := range n.Claims {
		fmt.Fprintf(&b, "|%s %s %s %s", c.Claim, c.Action, c.Volume, c.Provisioner)
		if c.Capacity != nil {
			b.WriteString(" " + c.Capacity.Name)
		}
	}
	for _, r := range n.Reasons {
		fmt.Fprintf(&b, "|%s %s %s %s", r.Kind, r.Claim, r.Volume, genericDetail(r.Detail, n.Node))
	}
	return b.String()
}

// genericDetail drops the node's name from a detail, so that nodes whose
// details differ only by it group together.
func genericDetail(detail, node string) string {
	return strings.ReplaceAll(detail, fmt.Sprintf("node %q", node), "the node")
}

func writeNodeGroup(w *errWriter, g *nodeGroup) {
	names := g.names
	more := ""
	if len(names) > 5 {
		names, more = names[:5], fmt.Sprintf(" and %d more", len(g.names)-5)
	}
	verdict := "fits"
	if !g.first.Fits {
		msgs := make([]string, 0, len(g.first.Reasons))
		for _, r := range g.first.Reasons {
			msgs = append(msgs, r.Message)
		}
		verdict = strings.Join(msgs, "; ")
	}
	w.printf("  %s%s: %s\n", strings.Join(names, ", "), more, verdict)
	for _, c := range g.first.Claims {
		w.printf("    %s: %s\n", c.Claim, nodeClaimText(c))
	}
	for _, r := range g.first.Reasons {
		line := r.Kind
		if r.Claim != "" {
			line += ", claim " + r.Claim
		}
		if r.Volume != "" {
			line += ", volume " + r.Volume
		}
		w.printf("    %s: %s\n", line, genericDetail(r.Detail, g.first.Node))
		for _, c := range r.Capacities {
			w.printf("      CSIStorageCapacity %s: %s\n", c.Name, c.Detail)
		}
		if len(r.Candidates) > 0 {
			title := "closest volumes on node " + g.first.Node + ":"
			writeCandidates(w, r.Candidates, r.More, "  "+title, "    ")
		}
	}
}

func nodeClaimText(c NodeClaim) string {
	switch c.Action {
	case "bind":
		return "binds to " + c.Volume
	case "provision":
		s := "provisioned by " + c.Provisioner
		if c.Capacity != nil {
			s += fmt.Sprintf(" (CSIStorageCapacity %s: %s)", c.Capacity.Name, c.Capacity.Detail)
		}
		return s
	}
	return "bound to " + c.Volume
}
