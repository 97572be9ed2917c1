package simulate

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
	"sigs.k8s.io/yaml"

	"github.com/volbind/volbind/binder/bindertest"
)

// maxPendingReasons is how many pending reasons the report lists.
const maxPendingReasons = 5

// maxListed is how many unbound objects and pending pods the text report
// names before it gives only a count (-o json and -o yaml list them all).
const maxListed = 20

// report is what "volbind simulate" prints: text by default, JSON with -o json.
type report struct {
	Claims        int `json:"claims"`
	ClaimsBound   int `json:"claimsBound"`
	ClaimsPending int `json:"claimsPending"`
	ClaimsLost    int `json:"claimsLost"`

	Volumes          int `json:"volumes"`
	VolumesBound     int `json:"volumesBound"`
	VolumesAvailable int `json:"volumesAvailable"`
	// VolumesPending counts the volumes in any other phase (Pending: the
	// Binder did not make them Available), so that the phases add up.
	VolumesPending  int `json:"volumesPending"`
	VolumesReleased int `json:"volumesReleased"`
	VolumesFailed   int `json:"volumesFailed"`

	// Unbound lists every volume not Bound or Available and every claim
	// not Bound, with the reason (report_objects.go); the text report
	// names the first maxListed.
	Unbound []objectState `json:"unbound,omitempty"`

	// Pods counts the pods scheduled and pending, with why (report_pods.go);
	// nil when the cluster has no pods.
	Pods *podsReport `json:"pods,omitempty"`

	// Events counts the Binder's events by reason.
	Events map[string]int `json:"events,omitempty"`
	// PendingReasons are the most frequent last events of the claims left
	// Pending, most frequent first.
	PendingReasons []reasonCount `json:"pendingReasons,omitempty"`

	WallSeconds       float64 `json:"wallSeconds"`
	Bindings          int     `json:"bindings"` // claims that became Bound during the run
	BindingsPerSecond float64 `json:"bindingsPerSecond"`
	// APIWrites counts every write request the Binder sent (bindertest
	// Stats.TotalWrites), failed ones included; WritesByResource splits it
	// by "resource verb".
	APIWrites int64 `json:"apiWrites"`
	// SetupWrites counts the writes made before the claims were created
	// (volumes made Available); they are not in APIWrites.
	SetupWrites      int64            `json:"setupWrites"`
	WritesByResource map[string]int64 `json:"writesByResource,omitempty"`
	APIReads         int64            `json:"apiReads"`
	WritesPerBinding float64          `json:"writesPerBinding"`
	Conflicts        int64            `json:"conflicts"`
	InjectedFaults   int64            `json:"injectedFaults"`
	// BindP50Millis and BindP99Millis are percentiles of the time from the
	// claim's creation to its Bound status, over Bindings.
	BindP50Millis float64 `json:"bindP50Millis"`
	BindP99Millis float64 `json:"bindP99Millis"`

	// ResyncPasses counts the final passes over the pending claims (as
	// the periodic resync would make) that bound claims the Binder's
	// queues had left Pending.
	ResyncPasses int `json:"resyncPasses"`
	// Completed is false when the deadline passed (or the run was
	// interrupted) before the Binder had nothing left to do.
	Completed bool `json:"completed"`
	// Interrupted is set when the run was interrupted (Ctrl-C).
	Interrupted bool `json:"interrupted,omitempty"`
	// PeakHeapMiB is the largest heap (live objects and garbage not yet
	// collected) sampled during the run, report included; PeakLiveHeapMiB
	// the largest heap a garbage collection found live. Process RSS is
	// about the peak heap plus the runtime's own memory.
	PeakHeapMiB     float64 `json:"peakHeapMiB"`
	PeakLiveHeapMiB float64 `json:"peakLiveHeapMiB"`
	// LiveHeapPerClaim is PeakLiveHeapMiB in bytes per claim.
	LiveHeapPerClaim float64 `json:"liveHeapBytesPerClaim,omitempty"`

	// Violations lists broken invariants; the exit status is 1 when any.
	Violations []string `json:"violations,omitempty"`
}

// reasonCount is one line of the pending reasons: an event reason, its
// message with object names replaced by "…", and how many pending claims
// had it as their last event.
type reasonCount struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Claims  int    `json:"claims"`
}

// reasonNoEvent marks pending claims the Binder emitted no event about.
const reasonNoEvent = "NoEvent"

// reasonClassNotFound marks pending claims of a StorageClass that does not
// exist.
const reasonClassNotFound = "StorageClassNotFound"

// quoted matches the quoted object names in event messages.
var quoted = regexp.MustCompile(`"[^"]*"`)

// pendingReason returns the reason a pending claim is listed under: its
// last event, or why the Binder sends none for such a claim.
// The message names objects; the report's aggregated reasons replace the
// names by "…" (the per-object list keeps them). classes holds the names
// of the StorageClasses that exist.
func pendingReason(pvc *v1.PersistentVolumeClaim, events *eventLog, volumes map[string]*v1.PersistentVolume, classes map[string]bool) (reason, message string) {
	if e, ok := events.lastFor(pvc); ok {
		return e.Reason, e.Message
	}
	class := volume.GetPersistentVolumeClaimClass(pvc)
	switch {
	case pvc.Spec.VolumeName != "" && volumes[pvc.Spec.VolumeName] == nil:
		return reasonNoEvent, fmt.Sprintf("the requested volume %q does not exist", pvc.Spec.VolumeName)
	case class != "" && !classes[class]:
		return reasonClassNotFound, fmt.Sprintf("storage class %q does not exist", class)
	case class != "":
		return reasonNoEvent, "no volume matches; a claim of a storage class is left to dynamic provisioning (simulate registers no provisioner)"
	}
	return reasonNoEvent, "the Binder emitted no event about this claim"
}

// claimKey returns a claim's namespace/name.
func claimKey(pvc *v1.PersistentVolumeClaim) string { return pvc.Namespace + "/" + pvc.Name }

// tally fills the object counts, the list of unbound objects, the pending
// reasons and the invariant checks of r from the final objects; classes
// are the names of the StorageClasses. It only reads the objects, which
// may be shared with the in-memory API.
func (r *report) tally(volumes []*v1.PersistentVolume, claims []*v1.PersistentVolumeClaim, classes []string, events *eventLog) {
	classSet := make(map[string]bool, len(classes))
	for _, c := range classes {
		classSet[c] = true
	}
	r.Claims, r.Volumes = len(claims), len(volumes)
	if counts := events.counts(); len(counts) > 0 {
		r.Events = counts
	}
	byName := make(map[string]*v1.PersistentVolume, len(volumes))
	for _, pv := range volumes {
		byName[pv.Name] = pv
		switch pv.Status.Phase {
		case v1.VolumeBound:
			r.VolumesBound++
		case v1.VolumeAvailable:
			r.VolumesAvailable++
		case v1.VolumeReleased:
			r.VolumesReleased++
		case v1.VolumeFailed:
			r.VolumesFailed++
		default:
			r.VolumesPending++
		}
		if pv.Status.Phase != v1.VolumeBound && pv.Status.Phase != v1.VolumeAvailable {
			r.Unbound = append(r.Unbound, volumeState(pv, events))
		}
	}
	reasons := map[[2]string]int{}
	// boundTo maps a volume name to the first claim Bound to it.
	boundTo := make(map[string]*v1.PersistentVolumeClaim, len(volumes))
	for _, pvc := range claims {
		switch pvc.Status.Phase {
		case v1.ClaimBound:
			r.ClaimsBound++
			name := pvc.Spec.VolumeName
			pv, ok := byName[name]
			switch {
			case !ok:
				r.Violations = append(r.Violations, fmt.Sprintf("claim %s is Bound to volume %q, which does not exist", claimKey(pvc), name))
			case !volume.IsVolumeBoundToClaim(pv, pvc) || pv.Spec.ClaimRef.UID != pvc.UID:
				r.Violations = append(r.Violations, fmt.Sprintf("claim %s is Bound to volume %s, whose claimRef points elsewhere", claimKey(pvc), name))
			}
			if other, dup := boundTo[name]; dup {
				r.Violations = append(r.Violations, fmt.Sprintf("volume %s is bound to two claims: %s and %s", name, claimKey(other), claimKey(pvc)))
			} else {
				boundTo[name] = pvc
			}
		case v1.ClaimLost:
			r.ClaimsLost++
			r.Unbound = append(r.Unbound, claimState(pvc, events))
		default:
			r.ClaimsPending++
			reason, message := pendingReason(pvc, events, byName, classSet)
			reasons[[2]string{reason, quoted.ReplaceAllString(message, `"…"`)}]++
			r.Unbound = append(r.Unbound, objectState{Kind: "PersistentVolumeClaim", Name: claimKey(pvc), Phase: string(pvc.Status.Phase), Reason: reason, Message: message})
		}
	}
	for k, n := range reasons {
		r.PendingReasons = append(r.PendingReasons, reasonCount{Reason: k[0], Message: k[1], Claims: n})
	}
	slices.SortFunc(r.PendingReasons, func(a, b reasonCount) int {
		if a.Claims != b.Claims {
			return b.Claims - a.Claims
		}
		return strings.Compare(a.Reason+a.Message, b.Reason+b.Message)
	})
	if len(r.PendingReasons) > maxPendingReasons {
		r.PendingReasons = r.PendingReasons[:maxPendingReasons]
	}
}

// timing fills the rates, the API counters and the latency percentiles of
// r from the run's wall time, the creation-to-Bound times of the claims
// bound during the run and the API server's counters.
func (r *report) timing(wall time.Duration, latencies []time.Duration, st bindertest.Stats) {
	r.WallSeconds = wall.Seconds()
	r.Bindings = len(latencies)
	r.APIWrites, r.Conflicts, r.InjectedFaults = st.TotalWrites(), st.Conflicts, st.Faults
	r.WritesByResource = map[string]int64{}
	for kind, byVerb := range st.Writes {
		for verb, n := range byVerb {
			r.WritesByResource[kind.Resource()+" "+string(verb)] += n
		}
	}
	r.APIReads = 0
	for _, n := range st.Reads {
		r.APIReads += n
	}
	if wall > 0 {
		r.BindingsPerSecond = float64(r.Bindings) / wall.Seconds()
	}
	if r.Bindings > 0 {
		r.WritesPerBinding = float64(r.APIWrites) / float64(r.Bindings)
		sorted := slices.Clone(latencies)
		slices.Sort(sorted)
		r.BindP50Millis = millis(percentile(sorted, 0.50))
		r.BindP99Millis = millis(percentile(sorted, 0.99))
	}
}

// memory fills the heap peaks of r, in bytes, measured over the run.
func (r *report) memory(heap, live uint64) {
	const mib = 1 << 20
	r.PeakHeapMiB, r.PeakLiveHeapMiB = float64(heap)/mib, float64(live)/mib
	if r.Claims > 0 {
		r.LiveHeapPerClaim = float64(live) / float64(r.Claims)
	}
}

// percentile returns the nearest-rank percentile p (in (0, 1]) of sorted,
// which must not be empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *report) writeYAML(w io.Writer) error {
	data, err := yaml.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (r *report) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "claims:            %d bound, %d pending, %d lost (of %d)\n", r.ClaimsBound, r.ClaimsPending, r.ClaimsLost, r.Claims)
	fmt.Fprintf(&b, "volumes:           %d bound, %d available, %d pending, %d released, %d failed (of %d)\n",
		r.VolumesBound, r.VolumesAvailable, r.VolumesPending, r.VolumesReleased, r.VolumesFailed, r.Volumes)
	if len(r.PendingReasons) > 0 {
		fmt.Fprintf(&b, "why claims are pending (last event):\n")
		for _, pr := range r.PendingReasons {
			fmt.Fprintf(&b, "  %6d  %s: %s\n", pr.Claims, pr.Reason, pr.Message)
		}
	}
	r.writeUnbound(&b)
	r.Pods.writeText(&b)
	if len(r.Events) > 0 {
		parts := make([]string, 0, len(r.Events))
		for _, reason := range slices.Sorted(maps.Keys(r.Events)) {
			parts = append(parts, fmt.Sprintf("%s %d", reason, r.Events[reason]))
		}
		fmt.Fprintf(&b, "events:            %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "wall time:         %.3fs\n", r.WallSeconds)
	fmt.Fprintf(&b, "bindings:          %d (%.0f/s)\n", r.Bindings, r.BindingsPerSecond)
	fmt.Fprintf(&b, "API writes:        %d (%.2f per binding)", r.APIWrites, r.WritesPerBinding)
	if len(r.WritesByResource) > 0 {
		keys := slices.Sorted(maps.Keys(r.WritesByResource))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, r.WritesByResource[k])
		}
		fmt.Fprintf(&b, ": %s", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "\n")
	if r.SetupWrites > 0 {
		fmt.Fprintf(&b, "setup writes:      %d (volumes made Available before the claims were created)\n", r.SetupWrites)
	}
	fmt.Fprintf(&b, "API reads:         %d\n", r.APIReads)
	fmt.Fprintf(&b, "conflicts:         %d\n", r.Conflicts)
	if r.InjectedFaults > 0 {
		fmt.Fprintf(&b, "injected faults:   %d\n", r.InjectedFaults)
	}
	fmt.Fprintf(&b, "created → Bound:   p50 %.1f ms, p99 %.1f ms\n", r.BindP50Millis, r.BindP99Millis)
	fmt.Fprintf(&b, "peak heap:         %.1f MiB (live after GC %.1f MiB", r.PeakHeapMiB, r.PeakLiveHeapMiB)
	if r.LiveHeapPerClaim > 0 {
		fmt.Fprintf(&b, ", %.0f bytes per claim", r.LiveHeapPerClaim)
	}
	fmt.Fprintf(&b, ")\n")
	if r.ResyncPasses > 0 {
		fmt.Fprintf(&b, "resync passes:     %d bound claims left Pending (their volumes were not Available when first synced)\n", r.ResyncPasses)
	}
	switch {
	case r.Interrupted:
		fmt.Fprintf(&b, "interrupted before the Binder had nothing left to do\n")
	case !r.Completed:
		fmt.Fprintf(&b, "deadline passed with work left (the Binder still had work to do)\n")
	}
	if len(r.Violations) > 0 {
		fmt.Fprintf(&b, "INVARIANTS BROKEN (%d):\n", len(r.Violations))
		for _, v := range r.Violations {
			fmt.Fprintf(&b, "  %s\n", v)
		}
	} else {
		fmt.Fprintf(&b, "invariants:        ok (no volume bound to two claims, no claim bound to a missing volume)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
