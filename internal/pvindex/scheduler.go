package pvindex

import (
	"k8s.io/component-helpers/storage/volume"
)

// classWide is FindMatchingVolume over every volume of the claim's class, the
// search kube-scheduler's VolumeBinding plugin runs (FindOptions.SchedulerSearch).
// want holds the claim's known access modes; unknown is true when it also
// asks for modes the Index does not key on, which then are checked on each
// candidate as FindMatchingVolume does.
func (f *finder) classWide(prebound []*record, trees *modeTrees, want modeSet, unknown bool) *record {
	// The first volume (by name) pre-bound to the claim and of its class
	// decides, whatever its access modes.
	for _, r := range prebound {
		if r.group.Value().class != f.group.class || !f.preboundFits(r) {
			continue
		}
		if f.opts.Node != nil && !r.fitsNode(f) {
			return nil
		}
		return r
	}
	if f.opts.Node == nil && f.opts.DelayBinding || trees == nil {
		return nil
	}
	// Without a node FindMatchingVolume checks no access modes at all.
	sets := searchOrder[0]
	checkModes := false
	if f.opts.Node != nil {
		sets = searchOrder[want]
		checkModes = unknown
	}
	var best *record
	for _, set := range sets {
		if r := f.smallestRecord(&trees[set], checkModes, best); r != nil {
			best = r
		}
	}
	return best
}

// modesFit reports whether the volume offers every mode the claim asks for,
// unknown ones included, as FindMatchingVolume's CheckAccessModes does.
func (f *finder) modesFit(r *record) bool {
	return volume.CheckAccessModes(f.claim, r.pv)
}
