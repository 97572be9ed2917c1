package pvindex

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// ErrInvalidClaim is wrapped by the error FindBestMatch returns for a claim it
// cannot match: a nil claim, or a label selector that does not parse.
var ErrInvalidClaim = errors.New("pvindex: invalid claim")

// Index is the best-fit volume index. The zero value is not usable; call New.
// All methods are safe for concurrent use.
type Index struct {
	// mu guards every field below. FindBestMatch holds it for reading.
	mu sync.RWMutex
	// byName holds every volume by name.
	byName map[string]*record
	// trees holds the candidates (unbound, Available, not being deleted;
	// see Options for volumes not marked yet) by group and access-mode set,
	// ordered by capacity then name.
	trees map[Group]*modeTrees
	// byClaim holds every volume with a claimRef under the hash of the
	// claim it names (claimHash); when several volumes share a hash, it
	// holds one of them and claimedMore holds them all (claimedLocked
	// reads both). One record per hash instead of a slice saves the
	// slice's allocation: 28 bytes less per bound volume
	// (BenchmarkMemoryPerPair).
	byClaim map[claimHash]*record
	// claimedMore holds, for each hash that more than one volume's claim
	// has, those volumes sorted by name. It is empty but for pre-binding
	// mistakes, races and hash collisions.
	claimedMore map[claimHash][]*record
	// seed seeds the claims' hashes; hash, set by tests only, replaces
	// them (to make claims collide).
	seed maphash.Seed
	hash func(claimKey) uint64
	// sets counts the volumes of each access-mode set, to know, like
	// Kubernetes, which sets exist.
	sets [numModeSets]int
	// unmarked: unbound volumes not marked Available yet are candidates.
	unmarked bool
	// groups interns the records' groups.
	groups groupCache
}

// Options tune an Index. The zero value is Kubernetes' rule.
type Options struct {
	// UnmarkedCandidates makes unbound volumes whose phase is still empty or
	// Pending (new volumes that no controller has marked Available yet)
	// candidates as if they were Available. Kubernetes' FindMatchingVolume
	// skips them, because the PV controller is about to write their phase
	// and a bind would race with that write; a controller that holds that
	// write back for a while (binder.Config.AvailableDelay) can bind such a
	// volume directly and save the write.
	UnmarkedCandidates bool
}

// New returns an empty Index with Kubernetes' candidate rule: only
// Available volumes are bound to claims that do not name them.
func New() *Index { return NewWithOptions(Options{}) }

// NewWithOptions returns an empty Index tuned by o.
func NewWithOptions(o Options) *Index {
	return &Index{
		byName:      make(map[string]*record),
		trees:       make(map[Group]*modeTrees),
		byClaim:     make(map[claimHash]*record),
		claimedMore: make(map[claimHash][]*record),
		seed:        maphash.MakeSeed(),
		unmarked:    o.UnmarkedCandidates,
	}
}

// FindOptions tunes FindBestMatch. The zero value is the PV controller's
// immediate-binding search.
type FindOptions struct {
	// DelayBinding is FindMatchingVolume's delayBinding: with no Node, only
	// volumes pre-bound to the claim are returned (the PV controller leaves
	// WaitForFirstConsumer claims to the scheduler).
	DelayBinding bool
	// Node, when set, is FindMatchingVolume's node argument: unbound volumes
	// whose required node affinity does not fit the node's labels are
	// skipped, and a volume pre-bound to the claim that does not fit ends the
	// search of its access-mode set with no match. Nil means no node-affinity
	// check (the PV controller). The access-mode grouping applies either way;
	// note that Kubernetes' scheduler instead runs FindMatchingVolume once over
	// all volumes of the claim's class, so when several access-mode sets hold
	// candidates it may take a smaller volume from a set with more modes.
	Node *v1.Node
	// NodeMatches, when set together with Node, decides whether a volume fits
	// the node; an error counts as "does not fit". Nil means component-helpers'
	// CheckNodeAffinity on the node's labels. It is called while the Index is
	// read-locked, so it must not call Upsert or Delete on the same Index.
	NodeMatches func(pv *v1.PersistentVolume, node *v1.Node) (bool, error)
	// SchedulerSearch selects kube-scheduler's search (the VolumeBinding
	// plugin) instead of the PV controller's: one FindMatchingVolume over
	// every volume of the claim's storage class, with no access-mode sets.
	// A volume pre-bound to the claim must then have the claim's class but
	// may have any access modes; otherwise the smallest fitting volume over
	// all sets wins, and when Node is set its access modes must contain the
	// claim's (when Node is nil FindMatchingVolume checks no access modes).
	// An unparsable selector is an error even when the Index is empty.
	SchedulerSearch bool
	// Exclude lists volume names that must not be returned (set to true), such
	// as volumes already chosen for other claims of the same pod.
	Exclude map[string]bool
}

// Upsert adds the volume, or replaces the volume of the same name. The Index
// keeps the pointer: the object is shared and must not be mutated afterwards.
// A nil volume is ignored.
//
// A new version that the Index places exactly as the indexed one (same
// capacity, class, modes, candidacy and claim, as after a phase change of
// a bound volume) replaces it in its record, which allocates nothing and
// touches neither the maps nor the trees: half of the upserts of a
// binding.
func (ix *Index) Upsert(pv *v1.PersistentVolume) {
	if pv == nil {
		return
	}
	d, g := derive(pv, ix.unmarked)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old := ix.byName[pv.Name]
	d.group = ix.groups.handleLocked(g, old)
	if old != nil && old.same(&d) && sameClaimKey(old.pv, pv) {
		if old.pv.Spec.NodeAffinity != pv.Spec.NodeAffinity {
			old.affinity.Store(nil)
		}
		old.pv = pv
		return
	}
	r := &record{pv: pv, derived: d}
	if old != nil {
		ix.replaceLocked(old, r)
		return
	}
	ix.addLocked(r)
}

// Share makes the Index hold pv instead of the indexed volume of the same
// name when both have the same resourceVersion (two copies of one version,
// e.g. a write's answer and the informer's copy), and reports whether it
// did. Nothing is derived again: the record of a version does not change.
// The object is shared and must not be mutated afterwards.
func (ix *Index) Share(pv *v1.PersistentVolume) bool {
	if pv == nil {
		return false
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	r := ix.byName[pv.Name]
	if r == nil || r.pv.ResourceVersion != pv.ResourceVersion {
		return false
	}
	r.pv = pv
	return true
}

// Delete removes the volume with the given name; unknown names are ignored.
func (ix *Index) Delete(name string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old := ix.byName[name]; old != nil {
		ix.removeLocked(old)
	}
}

// Len returns the number of volumes in the Index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byName)
}

// Get returns the volume with the given name, shared with the Index (do not
// mutate), and whether it is there.
func (ix *Index) Get(name string) (*v1.PersistentVolume, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	r, ok := ix.byName[name]
	if !ok {
		return nil, false
	}
	return r.pv, true
}

// ClaimedBy returns the names of the volumes other than except whose
// claimRef names the claim namespace/name (with any UID or none), sorted. It
// does not allocate when there are none.
func (ix *Index) ClaimedBy(namespace, name, except string) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var names []string
	var one [1]*record
	for _, r := range ix.claimedLocked(claimKey{namespace: namespace, name: name}, &one) {
		if r.key.name != except {
			names = append(names, r.key.name)
		}
	}
	return names
}

func (ix *Index) addLocked(r *record) {
	ix.byName[r.key.name] = r
	if r.hasClaim() {
		ix.linkClaimLocked(r)
	}
	ix.placeLocked(r)
}

// placeLocked counts r's access-mode set and files a candidate in its tree.
func (ix *Index) placeLocked(r *record) {
	ix.sets[r.modes]++
	if r.candidate {
		ts := ix.trees[r.group.Value()]
		if ts == nil {
			ts = new(modeTrees)
			ix.trees[r.group.Value()] = ts
		}
		ts[r.modes].insert(r)
	}
}

// replaceLocked puts r, a new version's record, in the place of old, the
// record of the same name, which leaves the Index. A claim both name keeps
// its map entry, which now holds r, where unlinking old and linking r took
// two lookups of a map of every bound volume: a bound volume resized (its
// expansion) in BenchmarkUpsert change=bound-size at 100,000 volumes, 5
// alternating rounds, 2,156 → 1,990 ns median. (A binding's own versions
// either keep their record or gain the claimRef, so they do not take
// this path.)
func (ix *Index) replaceLocked(old, r *record) {
	ix.byName[r.key.name] = r
	if old.hasClaim() && r.hasClaim() && old.claim() == r.claim() {
		ix.relinkClaimLocked(old, r)
		ix.unlinkPlacesLocked(old)
	} else {
		ix.unlinkLocked(old)
		if r.hasClaim() {
			ix.linkClaimLocked(r)
		}
	}
	old.pv = nil
	ix.placeLocked(r)
}

func (ix *Index) removeLocked(r *record) {
	delete(ix.byName, r.key.name)
	ix.retireLocked(r)
}

// retireLocked unlinks r, which leaves the Index, and clears its volume,
// so that a Match on it is no longer current.
func (ix *Index) retireLocked(r *record) {
	ix.unlinkLocked(r)
	r.pv = nil
}

// unlinkLocked removes r from everything but byName.
func (ix *Index) unlinkLocked(r *record) {
	if r.hasClaim() {
		ix.unlinkClaimLocked(r)
	}
	ix.unlinkPlacesLocked(r)
}

// unlinkPlacesLocked undoes placeLocked.
func (ix *Index) unlinkPlacesLocked(r *record) {
	ix.sets[r.modes]--
	if r.candidate {
		ts := ix.trees[r.group.Value()]
		ts[r.modes].remove(r)
		if ts.empty() {
			delete(ix.trees, r.group.Value())
		}
	}
}

// modeTrees holds one tree per access-mode set.
type modeTrees [numModeSets]tree

func (ts *modeTrees) empty() bool {
	for i := range ts {
		if ts[i].len > 0 {
			return false
		}
	}
	return true
}

// finder carries what one FindBestMatch computed from the claim and options.
type finder struct {
	claim    *v1.PersistentVolumeClaim
	opts     FindOptions
	request  capacity
	group    Group
	selector labels.Selector // nil: the claim has no selector
	// labelsNode is opts.Node's labels only, as CheckNodeAffinity sees it. It
	// is a value, not a pointer, so that it stays on the caller's stack.
	labelsNode v1.Node
}

// FindBestMatch returns the volume Kubernetes' findBestMatchForClaim would
// bind the claim to, extended with the scheduler's node and exclusion
// arguments of FindMatchingVolume; see the package comment for the rules and
// the tie-breaks. It returns nil, nil when no volume matches. The volume is
// shared with the Index; do not mutate it. A claim whose label selector does
// not parse gets an error wrapping ErrInvalidClaim, as in Kubernetes, once
// some volume has access modes that contain the claim's (with
// SchedulerSearch, always). FindBestMatch holds the Index's read lock. For
// whole-byte sizes and no node it does not allocate.
func (ix *Index) FindBestMatch(claim *v1.PersistentVolumeClaim, opts FindOptions) (*v1.PersistentVolume, error) {
	m, err := ix.Find(claim, opts)
	return m.pv, err
}

// Match is a volume Find chose, with what lets Current tell, without a
// lookup, whether the Index still holds that version. The zero Match is no
// volume.
type Match struct {
	rec *record
	pv  *v1.PersistentVolume
}

// matchOf returns the Match of r (nil: none); the Index's lock is held.
func matchOf(r *record) Match {
	if r == nil {
		return Match{}
	}
	return Match{rec: r, pv: r.pv}
}

// Volume returns the chosen volume, shared with the Index (do not mutate),
// or nil when nothing matched.
func (m Match) Volume() *v1.PersistentVolume { return m.pv }

// Current returns the volume the Index holds under m's name when it is
// still m's version (the same resourceVersion; the object may be another
// copy of it, see Share), and whether it is. A caller that chose a volume
// with Find and then waited for a lock learns whether it changed meanwhile
// without the lookup of its name that Get costs: in the Binder's claim
// sync at 100,000 pairs, findAndLock took 2.13 s of CPU per 600,000
// bindings with Current against 2.93 s with that lookup (2 cores). The
// zero Match is never current.
func (ix *Index) Current(m Match) (*v1.PersistentVolume, bool) {
	if m.rec == nil {
		return nil, false
	}
	ix.mu.RLock()
	pv := m.rec.pv
	ix.mu.RUnlock()
	if pv == nil || pv != m.pv && pv.ResourceVersion != m.pv.ResourceVersion {
		return nil, false
	}
	return pv, true
}

// Find is FindBestMatch, returning the volume as a Match.
func (ix *Index) Find(claim *v1.PersistentVolumeClaim, opts FindOptions) (Match, error) {
	if claim == nil {
		return Match{}, fmt.Errorf("find volume for nil claim: %w", ErrInvalidClaim)
	}
	want, unknown := claimModes(claim.Spec.AccessModes)
	if unknown && !opts.SchedulerSearch {
		// A mode no volume is indexed under: Kubernetes finds no access-mode
		// set to search and returns no match.
		return Match{}, nil
	}
	f := finder{
		claim:   claim,
		opts:    opts,
		request: storageOf(claim.Spec.Resources.Requests),
		group:   ClaimGroup(claim),
	}
	var selErr error
	if claim.Spec.Selector != nil {
		f.selector, selErr = metav1.LabelSelectorAsSelector(claim.Spec.Selector)
	}
	if opts.Node != nil {
		f.labelsNode.Labels = opts.Node.Labels
	}

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var one [1]*record
	prebound := ix.claimedLocked(claimKey{namespace: claim.Namespace, name: claim.Name}, &one)
	trees := ix.trees[f.group]
	if opts.SchedulerSearch {
		if selErr != nil {
			return Match{}, fmt.Errorf("find volume for claim %s: label selector: %w: %w", klog.KObj(claim), ErrInvalidClaim, selErr)
		}
		return matchOf(f.classWide(prebound, trees, want, unknown)), nil
	}
	for _, set := range searchOrder[want] {
		if ix.sets[set] == 0 {
			continue
		}
		if selErr != nil {
			return Match{}, fmt.Errorf("find volume for claim %s: label selector: %w: %w", klog.KObj(claim), ErrInvalidClaim, selErr)
		}
		if r, decided := f.prebound(prebound, set); decided {
			if r != nil {
				return matchOf(r), nil
			}
			continue
		}
		if opts.Node == nil && opts.DelayBinding {
			continue
		}
		if trees == nil {
			continue
		}
		if r := f.smallestRecord(&trees[set], false, nil); r != nil {
			return matchOf(r), nil
		}
	}
	return Match{}, nil
}

// prebound looks at the volumes whose claimRef names the claim and whose
// access-mode set is set. The first (by name) that FindMatchingVolume would
// accept as pre-bound decides the set: decided is true and found is its
// record, or nil when its node affinity does not fit the node.
func (f *finder) prebound(list []*record, set modeSet) (found *record, decided bool) {
	for _, r := range list {
		if r.modes != set || !f.preboundFits(r) {
			continue
		}
		if f.opts.Node != nil && !r.fitsNode(f) {
			return nil, true
		}
		return r, true
	}
	return nil, false
}

// preboundFits reports whether r, listed under the claim's key, is a volume
// FindMatchingVolume returns as pre-bound to the claim (before it checks node
// affinity): bound to the claim's UID or to none, not excluded, large
// enough, of the same volume mode and VolumeAttributesClass, not being
// deleted. Phase, class and selector are not checked.
func (f *finder) preboundFits(r *record) bool {
	return r.boundTo(f.claim) && !f.opts.Exclude[r.key.name] &&
		r.key.cap.compare(f.request) >= 0 && r.group.Value().mode == f.group.mode &&
		r.group.Value().vac == f.group.vac && !r.deleting
}

// smallestRecord returns the first candidate of t, from the requested
// capacity up, that passes the checks the tree does not encode; checkModes
// adds FindMatchingVolume's CheckAccessModes, needed only for claims with
// unknown modes. When below is set, only records ordered before it are
// considered.
func (f *finder) smallestRecord(t *tree, checkModes bool, below *record) *record {
	c := t.atLeast(f.request)
	for r := c.next(); r != nil; r = c.next() {
		if below != nil && r.key.compare(below.key) >= 0 {
			return nil
		}
		if f.opts.Exclude[r.key.name] {
			continue
		}
		if f.selector != nil && !f.selector.Matches(labels.Set(r.pv.Labels)) {
			continue
		}
		if f.opts.Node != nil && !r.fitsNode(f) {
			continue
		}
		if checkModes && !f.modesFit(r) {
			continue
		}
		return r
	}
	return nil
}
