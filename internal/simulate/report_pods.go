package simulate

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"
)

// podsReport is the pods part of the report, present when the cluster has
// pods.
type podsReport struct {
	// Total counts the pods; Scheduled those with a node at the end (by
	// this run or before it: ScheduledByRun counts the first), Pending
	// the others.
	Total          int `json:"total"`
	Scheduled      int `json:"scheduled"`
	ScheduledByRun int `json:"scheduledByRun"`
	Pending        int `json:"pending"`
	// PendingReasons are the most frequent reasons of the pending pods,
	// most frequent first, with object names replaced by "…".
	PendingReasons []podReasonCount `json:"pendingReasons,omitempty"`
	// Unscheduled lists every pending pod with its reason in full.
	Unscheduled []objectState `json:"unscheduled,omitempty"`
}

// podReasonCount is one line of the pods' pending reasons.
type podReasonCount struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Pods    int    `json:"pods"`
}

// msgNotTried is the reason of a pod the scheduler did not get to.
const msgNotTried = "the run ended before the scheduler tried the pod"

// tallyPods fills r.Pods from the final pods, nodes (*v1.Node), claims and volumes
// and the scheduler's outcomes (nil when it did not run), and adds the
// broken invariants of the pods scheduled by the run: each is on an
// existing node and every claim of it is Bound to a volume whose node
// affinity admits that node.
func (r *report) tallyPods(pods []*v1.Pod, nodes []runtime.Object, claims []*v1.PersistentVolumeClaim, volumes []*v1.PersistentVolume, sched *podScheduler) {
	if len(pods) == 0 {
		return
	}
	p := &podsReport{Total: len(pods)}
	r.Pods = p
	nodeByName := make(map[string]*v1.Node, len(nodes))
	for _, o := range nodes {
		if n, ok := o.(*v1.Node); ok {
			nodeByName[n.Name] = n
		}
	}
	claimByKey := make(map[string]*v1.PersistentVolumeClaim, len(claims))
	for _, c := range claims {
		claimByKey[c.Namespace+"/"+c.Name] = c
	}
	volumeByName := make(map[string]*v1.PersistentVolume, len(volumes))
	for _, pv := range volumes {
		volumeByName[pv.Name] = pv
	}
	reasons := map[string]int{}
	for _, pod := range pods {
		key := pod.Namespace + "/" + pod.Name
		msg, tried := "", false
		if sched != nil {
			msg, tried = sched.outcomes[key]
		}
		if pod.Spec.NodeName != "" {
			p.Scheduled++
			if tried && msg == "" {
				p.ScheduledByRun++
				r.Violations = append(r.Violations, podViolations(pod, nodeByName, claimByKey, volumeByName)...)
			}
			continue
		}
		p.Pending++
		if !tried {
			msg = msgNotTried
		}
		reasons[quoted.ReplaceAllString(msg, `"…"`)]++
		p.Unscheduled = append(p.Unscheduled, objectState{Kind: "Pod", Name: key, Phase: string(pod.Status.Phase),
			Reason: reasonFailedScheduling, Message: msg})
	}
	for m, n := range reasons {
		p.PendingReasons = append(p.PendingReasons, podReasonCount{Reason: reasonFailedScheduling, Message: m, Pods: n})
	}
	slices.SortFunc(p.PendingReasons, func(a, b podReasonCount) int {
		if a.Pods != b.Pods {
			return b.Pods - a.Pods
		}
		return strings.Compare(a.Message, b.Message)
	})
	if len(p.PendingReasons) > maxPendingReasons {
		p.PendingReasons = p.PendingReasons[:maxPendingReasons]
	}
}

// podViolations checks a pod the run scheduled: its node exists and each
// of its claims is Bound to a volume usable from that node.
func podViolations(pod *v1.Pod, nodes map[string]*v1.Node, claims map[string]*v1.PersistentVolumeClaim, volumes map[string]*v1.PersistentVolume) []string {
	key := pod.Namespace + "/" + pod.Name
	node, ok := nodes[pod.Spec.NodeName]
	if !ok {
		return []string{fmt.Sprintf("pod %s is scheduled to node %q, which does not exist", key, pod.Spec.NodeName)}
	}
	var out []string
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name := podClaimName(pod, vol)
		if name == "" {
			continue
		}
		claimKey := pod.Namespace + "/" + name
		pvc, ok := claims[claimKey]
		if !ok || pvc.Status.Phase != v1.ClaimBound {
			out = append(out, fmt.Sprintf("pod %s is scheduled to node %s but its claim %s is not Bound", key, node.Name, claimKey))
			continue
		}
		pv, ok := volumes[pvc.Spec.VolumeName]
		if !ok {
			continue // reported by tally
		}
		if err := volume.CheckNodeAffinity(pv, node.Labels); err != nil {
			out = append(out, fmt.Sprintf("pod %s is scheduled to node %s but the volume %s of its claim %s cannot be used there: %v",
				key, node.Name, pv.Name, claimKey, err))
		}
	}
	return out
}

// writeText writes the pods' lines of the text report.
func (p *podsReport) writeText(b *strings.Builder) {
	if p == nil {
		return
	}
	fmt.Fprintf(b, "pods:              %d scheduled (%d by this run), %d pending (of %d)\n", p.Scheduled, p.ScheduledByRun, p.Pending, p.Total)
	if len(p.PendingReasons) > 0 {
		fmt.Fprintf(b, "why pods are pending:\n")
		for _, pr := range p.PendingReasons {
			fmt.Fprintf(b, "  %6d  %s: %s\n", pr.Pods, pr.Reason, pr.Message)
		}
	}
	for i, s := range p.Unscheduled {
		if i == maxListed {
			fmt.Fprintf(b, "  ... and %d more pending pods (-o json or -o yaml lists them all)\n", len(p.Unscheduled)-maxListed)
			break
		}
		fmt.Fprintf(b, "  Pod %s (%s): %s\n", s.Name, s.Phase, s.Message)
	}
}
