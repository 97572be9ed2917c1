package explain

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/pvindex"
)

// ErrNodeForImmediate is returned for ClaimOptions.Node on a claim that
// binds immediately: kube-scheduler does not choose its volume.
var ErrNodeForImmediate = errors.New("explain: the claim binds immediately; a node applies to WaitForFirstConsumer claims only")

// ClaimOptions tune one claim explanation. The zero value lists
// DefaultMax candidates, matched as the PV controller matches the claim.
type ClaimOptions struct {
	// Max is the number of candidate volumes listed; zero means
	// DefaultMax, negative means all of them.
	Max int
	// Node, when set, matches the candidates of a WaitForFirstConsumer
	// claim as kube-scheduler does on that node.
	Node string
}

func (o ClaimOptions) max() int {
	switch {
	case o.Max == 0:
		return DefaultMax
	case o.Max < 0:
		return -1
	}
	return o.Max
}

// Claim explains the claim namespace/name: its verdict, the volumes
// closest to fitting it and why each does not (or does). It fails with
// ErrNotFound for an unknown claim or node, and with ErrNodeForImmediate.
// Explaining one claim among 100,000 volumes takes a few milliseconds
// (BenchmarkClaim).
func (e *Explainer) Claim(namespace, name string, opts ClaimOptions) (*ClaimExplanation, error) {
	pvc, ok := e.claims[claimName{namespace, name}]
	if !ok {
		return nil, fmt.Errorf("%w: PersistentVolumeClaim %s/%s", ErrNotFound, namespace, name)
	}
	var node *v1.Node
	if opts.Node != "" {
		if node = e.nodeByName[opts.Node]; node == nil {
			return nil, fmt.Errorf("%w: Node %s", ErrNotFound, opts.Node)
		}
	}
	x := e.newClaimExplanation(pvc)
	if err := e.explainClaim(x, pvc, node, opts.max()); err != nil {
		return nil, err
	}
	return x, nil
}

func (e *Explainer) newClaimExplanation(pvc *v1.PersistentVolumeClaim) *ClaimExplanation {
	req := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	return &ClaimExplanation{
		Claim:        cache.Key(pvc),
		Phase:        string(pvc.Status.Phase),
		Request:      req.String(),
		AccessModes:  modeNames(pvc.Spec.AccessModes),
		VolumeMode:   string(modeOrDefault(pvc.Spec.VolumeMode)),
		StorageClass: volume.GetPersistentVolumeClaimClass(pvc),
		Volumes:      len(e.volumes),
		Search:       ControllerSearch,
		Consumers:    e.consumers(pvc),
	}
}

func (x *ClaimExplanation) set(v Verdict, summary, reason string) {
	x.Verdict, x.Summary, x.Reason = v, summary, reason
}

// explainClaim follows the Binder's syncClaim.
func (e *Explainer) explainClaim(x *ClaimExplanation, pvc *v1.PersistentVolumeClaim, node *v1.Node, max int) error {
	if bad := invalidClaim(pvc); bad != "" {
		x.set(Unsatisfiable, "nothing can satisfy it: the claim is invalid", bad+"; the controller does not sync it")
		return nil
	}
	switch {
	case metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted):
		e.boundClaim(x, pvc)
	case pvc.Spec.VolumeName != "":
		e.requestedClaim(x, pvc)
	default:
		return e.unrequestedClaim(x, pvc, node, max)
	}
	return nil
}

// boundClaim explains a claim that completed binding once.
func (e *Explainer) boundClaim(x *ClaimExplanation, pvc *v1.PersistentVolumeClaim) {
	name := pvc.Spec.VolumeName
	v := e.volumeByName[name]
	switch {
	case name == "":
		x.set(Unsatisfiable, "nothing can satisfy it: the claim is Lost",
			"it completed binding but names no volume; the controller marks it Lost (ClaimLost)")
	case v == nil:
		x.set(Unsatisfiable, "nothing can satisfy it: the claim is Lost",
			fmt.Sprintf("its volume %s does not exist; the controller marks it Lost (ClaimLost)", name))
	case v.pv.Spec.ClaimRef == nil:
		x.set(Bound, "bound to "+name, "the claim completed binding, but the volume's claimRef is not set: the controller sets it again at its next sync")
		x.Volume = name
		// Until then the volume is Available to every claim.
		x.Contenders = e.contenders(pvc, v)
	case v.pv.Spec.ClaimRef.UID == pvc.UID:
		x.set(Bound, "bound to "+name, "")
		x.Volume = name
		if pvc.Status.Phase != v1.ClaimBound {
			x.Reason = "the controller writes what is left of the binding at its next sync"
		}
	default:
		ref := v.pv.Spec.ClaimRef
		lost := fmt.Sprintf("its volume %s is bound to another claim, %s/%s (UID %s); the controller marks it Lost (ClaimMisbound)",
			name, ref.Namespace, ref.Name, ref.UID)
		if why := e.futureReason(v); why != "" {
			// The controller frees the volume, and the claim, which still
			// names it, takes it back.
			x.set(WouldBind, "would bind to "+name+" again once it is Available", lost+"; but "+why)
			x.Volume = name
			x.Contenders = e.contenders(pvc, availableCopy(v))
			return
		}
		x.set(Unsatisfiable, "nothing can satisfy it: the claim is Lost", lost)
	}
}

// requestedClaim explains an unbound claim that asks for a volume by name.
func (e *Explainer) requestedClaim(x *ClaimExplanation, pvc *v1.PersistentVolumeClaim) {
	name := pvc.Spec.VolumeName
	v := e.volumeByName[name]
	if v == nil {
		x.set(Unsatisfiable, "nothing can satisfy it: it asks for volume "+name+", which does not exist",
			"spec.volumeName names it; the controller binds the claim once it is created")
		return
	}
	m := newMatcher(pvc, false, nil, e.cfg.UnmarkedCandidates)
	d := &detailer{e: e, m: m}
	switch {
	case v.invalid != "":
		x.set(Unsatisfiable, "nothing can satisfy it: the volume it asks for is malformed",
			fmt.Sprintf("Cannot bind to requested volume %q: %s", name, v.invalid))
		x.Candidates = []Candidate{requestedCandidate(v, Invalid, d)}
	case v.pv.Spec.ClaimRef == nil:
		rule, msg := checkRequested(v, pvc)
		x.Candidates = []Candidate{requestedCandidate(v, rule, d)}
		if rule != Fits {
			x.set(Unsatisfiable, "nothing can satisfy it: the volume it asks for does not fit",
				fmt.Sprintf("Cannot bind to requested volume %q: %s", name, msg))
			return
		}
		x.set(WouldBind, "would bind to "+name+" now", "the claim asks for it by name (spec.volumeName)")
		x.Volume = name
		if v.phase != v1.VolumeAvailable {
			// The volume's next sync marks it Available: a claim that
			// syncs after that may take it first.
			x.Contenders = e.contenders(pvc, availableCopy(v))
		} else {
			x.Contenders = e.contenders(pvc, v)
		}
	case volume.IsVolumeBoundToClaim(v.pv, pvc):
		x.set(WouldBind, "would bind to "+name+" now",
			"the claim asks for it by name and its claimRef names the claim: the controller finishes the binding")
		x.Volume = name
		x.Candidates = []Candidate{requestedCandidate(v, Fits, d)}
	default:
		ref := v.pv.Spec.ClaimRef
		bound := fmt.Sprintf("volume %q already bound to a different claim (%s/%s).", name, ref.Namespace, ref.Name)
		x.Candidates = []Candidate{requestedCandidate(v, BoundElsewhere, d)}
		if why := e.futureReason(v); why != "" {
			// The controller frees the volume, and the claim takes it at
			// its next sync if it fits.
			free := availableCopy(v)
			if rule, _ := checkRequested(free, pvc); rule == Fits {
				x.set(WouldBind, "would bind to "+name+" once it is Available", bound+" But "+why)
				x.Volume = name
				x.Contenders = e.contenders(pvc, free)
				return
			}
		}
		x.set(Unsatisfiable, "nothing can satisfy it: the volume it asks for is bound to another claim", bound)
	}
}

func requestedCandidate(v *volumeInfo, rule Rule, d *detailer) Candidate {
	c := Candidate{Volume: v.pv.Name, Capacity: v.capacityText(), AccessModes: modeNames(v.pv.Spec.AccessModes),
		StorageClass: v.class, Rule: rule, Chosen: rule == Fits}
	if rule == Fits {
		c.Detail = "chosen: the claim asks for it by name"
	} else {
		c.Detail = d.ruleDetail(v, rule)
	}
	return c
}

// checkRequested is Kubernetes' checkVolumeSatisfyClaim for an unbound
// volume a claim asks for by name: its first failing rule, in its order,
// and its message.
func checkRequested(v *volumeInfo, pvc *v1.PersistentVolumeClaim) (Rule, string) {
	pv := v.pv
	req := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	switch {
	case pv.DeletionTimestamp != nil:
		return Deleting, fmt.Sprintf("the volume is marked for deletion %q", pv.Name)
	case v.bytes < req.Value():
		return Capacity, "requested PV is too small"
	case v.class != volume.GetPersistentVolumeClaimClass(pvc):
		return StorageClass, "storageClassName does not match"
	case ptr.Deref(pvc.Spec.VolumeAttributesClassName, "") != ptr.Deref(pv.Spec.VolumeAttributesClassName, ""):
		return VolumeAttributesClass, "volumeAttributesClassName does not match"
	case volume.CheckVolumeModeMismatches(&pvc.Spec, &pv.Spec):
		return VolumeMode, "incompatible volumeMode"
	case !volume.CheckAccessModes(pvc, pv):
		return AccessModes, "incompatible accessMode"
	}
	return Fits, ""
}

// delayBinding is component-helpers' IsDelayBindingMode on the classes:
// false without class or for an unknown class, an error for a class
// without volumeBindingMode.
func (e *Explainer) delayBinding(pvc *v1.PersistentVolumeClaim) (bool, *storagev1.StorageClass, error) {
	name := volume.GetPersistentVolumeClaimClass(pvc)
	sc := e.classes[name]
	if name == "" || sc == nil {
		return false, nil, nil
	}
	if sc.VolumeBindingMode == nil {
		return false, sc, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", name)
	}
	return *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, sc, nil
}

// unrequestedClaim explains an unbound claim that does not name a volume:
// the Binder's syncUnrequestedClaim.
func (e *Explainer) unrequestedClaim(x *ClaimExplanation, pvc *v1.PersistentVolumeClaim, node *v1.Node, max int) error {
	delay, sc, err := e.delayBinding(pvc)
	if sc != nil && sc.VolumeBindingMode != nil {
		x.BindingMode = string(*sc.VolumeBindingMode)
	}
	if err != nil {
		x.set(Unsatisfiable, "nothing can satisfy it: its storage class has no binding mode", err.Error())
		return nil
	}
	if node != nil && !delay {
		return fmt.Errorf("claim %s: %w", cache.Key(pvc), ErrNodeForImmediate)
	}
	var best *v1.PersistentVolume
	if e.cfg.ClaimedFirst {
		best = e.claimedVolume(pvc)
	}
	if best == nil {
		// The claim's own rolled-back volumes fail it: its sync searches
		// again once they are Available.
		best, err = e.index.FindBestMatch(pvc, pvindex.FindOptions{DelayBinding: delay, Exclude: e.rolledFor[cache.Key(pvc)]})
	}
	if err != nil {
		x.set(Unsatisfiable, "nothing can satisfy it: the claim is invalid", err.Error())
		return nil
	}
	sr := e.scanClaim(x, pvc, delay, node, best, max)
	if best != nil {
		x.set(WouldBind, "would bind to "+best.Name+" now", sr.d.whyChosen())
		x.Volume = best.Name
		x.Contenders = e.contenders(pvc, e.volumeByName[best.Name])
		x.Alternatives = sr.alternatives()
		return nil
	}
	if !volume.PersistentVolumeClaimHasClass(pvc) && e.defaultClass != nil {
		return e.defaultClassClaim(x, pvc, node, max, sr.alternatives())
	}
	alts := sr.alternatives()
	switch {
	case delay && !volume.IsDelayBindingProvisioning(pvc):
		e.waitsForConsumer(x, pvc)
		if x.Node != "" {
			x.Reason += "; " + onNode(x)
		}
		return nil
	case x.StorageClass != "":
		e.provision(x, pvc)
	default:
		x.set(Unsatisfiable, "nothing can satisfy it: no volume fits and it has no storage class",
			"no persistent volumes available for this claim and no storage class is set")
	}
	x.Alternatives = alts
	if x.Verdict == Unsatisfiable && len(alts) > 0 {
		next := alts[0]
		x.set(WouldBind, "would bind to "+next.Volume+" once it is Available", next.Reason)
		x.Volume, x.Alternatives = next.Volume, alts[1:]
		x.Contenders = e.contenders(pvc, availableCopy(e.volumeByName[next.Volume]))
	}
	return nil
}

// claimedVolume returns the volume a binder.Binder takes for the claim
// before any search: the first by name whose claimRef names the claim by
// UID, if it still fits the claim (all matching rules for a volume a search
// chose, the pre-bound rules otherwise); else nil.
func (e *Explainer) claimedVolume(pvc *v1.PersistentVolumeClaim) *v1.PersistentVolume {
	for _, v := range e.claimedBy[claimName{pvc.Namespace, pvc.Name}] {
		if v.refUID != pvc.UID {
			continue
		}
		m := newMatcher(pvc, false, nil, e.cfg.UnmarkedCandidates)
		rule := m.checkPrebound(v)
		if m.chosenBySearch(v) {
			rule = m.checkChosen(v)
		}
		if rule == Fits {
			return v.pv
		}
		return nil
	}
	return nil
}

// defaultClassClaim explains a claim without class that no volume without
// class fits: the controller gives it the default class and syncs it again.
func (e *Explainer) defaultClassClaim(x *ClaimExplanation, pvc *v1.PersistentVolumeClaim, node *v1.Node, max int, alts []Alternative) error {
	name := e.defaultClass.Name
	clone := pvc.DeepCopy()
	clone.Spec.StorageClassName = ptr.To(name)
	x.StorageClass = name
	if err := e.unrequestedClaim(x, clone, node, max); err != nil {
		return err
	}
	x.DefaultClass = name
	x.Summary += fmt.Sprintf(" (after the default class %q is assigned)", name)
	why := fmt.Sprintf("the claim has no storage class and no volume without class fits: the controller assigns the default class %q (retroactive default StorageClass assignment)", name)
	if x.Reason != "" {
		why += "; then " + x.Reason
	}
	x.Reason = why
	x.Alternatives = append(alts, x.Alternatives...)
	return nil
}

// waitsForConsumer explains a WaitForFirstConsumer claim without a
// selected node and without a volume pre-bound to it.
func (e *Explainer) waitsForConsumer(x *ClaimExplanation, pvc *v1.PersistentVolumeClaim) {
	var waiting []string
	for _, c := range x.Consumers {
		if c.Node == "" {
			waiting = append(waiting, c.Pod)
		}
	}
	summary := "waits for a first consumer: no pod that uses it exists"
	switch len(waiting) {
	case 0:
		if len(x.Consumers) > 0 {
			summary = "waits for a first consumer: its pods are scheduled, but none has had the claim bound"
		}
	case 1:
		summary = "waits for pod " + waiting[0] + " to be scheduled"
	default:
		summary = "waits for pods " + strings.Join(waiting, ", ") + " to be scheduled"
	}
	reason := "its class binds WaitForFirstConsumer: kube-scheduler picks its volume on the node of the first pod that uses it"
	p, why := e.provisioner(pvc)
	if p != nil {
		x.Provisioner = p
		reason += ", or has one provisioned there"
	} else {
		reason += "; only an existing volume can serve it (" + why + ")"
	}
	x.set(WaitForFirstConsumer, summary, reason)
}

// onNode says what kube-scheduler chooses for the claim on x.Node.
func onNode(x *ClaimExplanation) string {
	for _, c := range x.Candidates {
		if c.Chosen {
			return fmt.Sprintf("on node %s, kube-scheduler would choose %s", x.Node, c.Volume)
		}
	}
	return fmt.Sprintf("on node %s, no existing volume fits", x.Node)
}

// consumers lists the pods that use the claim and have not terminated.
func (e *Explainer) consumers(pvc *v1.PersistentVolumeClaim) []Consumer {
	var out []Consumer
	for _, pod := range e.podsByClaim[cache.Key(pvc)] {
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		out = append(out, Consumer{Pod: cache.Key(pod), Node: pod.Spec.NodeName})
	}
	return out
}
