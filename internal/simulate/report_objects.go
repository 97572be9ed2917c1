package simulate

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// objectState is one object of the report's unbound list: a volume that
// is not Bound or Available, or a claim that is not Bound, with the reason
// (its last event, or why the Binder sent none) and the message in full.
type objectState struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"` // namespace/name for claims
	Phase   string `json:"phase"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func volumeState(pv *v1.PersistentVolume, events *eventLog) objectState {
	s := objectState{Kind: "PersistentVolume", Name: pv.Name, Phase: string(pv.Status.Phase), Reason: reasonNoEvent,
		Message: "the Binder emitted no event about this volume"}
	if e, ok := events.lastFor(pv); ok {
		s.Reason, s.Message = e.Reason, e.Message
	} else if pv.Status.Message != "" {
		s.Reason, s.Message = pv.Status.Reason, pv.Status.Message
	}
	return s
}

func claimState(pvc *v1.PersistentVolumeClaim, events *eventLog) objectState {
	s := objectState{Kind: "PersistentVolumeClaim", Name: pvc.Namespace + "/" + pvc.Name, Phase: string(pvc.Status.Phase),
		Reason: reasonNoEvent, Message: "the Binder emitted no event about this claim"}
	if e, ok := events.lastFor(pvc); ok {
		s.Reason, s.Message = e.Reason, e.Message
	}
	return s
}

// writeUnbound writes the first maxListed unbound objects and a count of
// the others.
func (r *report) writeUnbound(b *strings.Builder) {
	if len(r.Unbound) == 0 {
		return
	}
	fmt.Fprintf(b, "not bound (%d):\n", len(r.Unbound))
	for i, s := range r.Unbound {
		if i == maxListed {
			fmt.Fprintf(b, "  ... and %d more (-o json or -o yaml lists them all)\n", len(r.Unbound)-maxListed)
			break
		}
		fmt.Fprintf(b, "  %s %s (%s): %s: %s\n", s.Kind, s.Name, s.Phase, s.Reason, s.Message)
	}
}
