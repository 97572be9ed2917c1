package zones

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Matcher evaluates volumes against nodes like Matches, but parses each
// volume's placement once and reuses it for every node until the volume
// changes. Entries are keyed by volume name and are valid for one UID and
// resourceVersion: a changed resourceVersion or a volume re-created under
// the same name is parsed again and replaces the old entry, so the cache
// holds at most one entry per volume name. Call Forget when a volume is
// deleted to drop its entry. Volumes with an empty resourceVersion are
// never cached.
//
// The zero value is ready to use. All methods are safe for concurrent use;
// Matches never blocks on other callers.
type Matcher struct {
	// entries maps a volume name to its *matcherEntry. Entries are never
	// modified after they are stored, only replaced or deleted.
	entries sync.Map
}

// matcherEntry is the cached placement of one version of one volume.
type matcherEntry struct {
	uid types.UID
	rv  string
	p   *compiledPlacement
}

// NewMatcher returns an empty Matcher.
func NewMatcher() *Matcher { return &Matcher{} }

// Matches reports whether node satisfies the placement of pv, with the
// semantics of the package-level Matches. Parse errors are cached with the
// placement, so an invalid volume returns the same error until it changes.
// pv and node are only read; the cache keeps no reference to them.
func (m *Matcher) Matches(pv *v1.PersistentVolume, node *v1.Node) (bool, error) {
	if err := checkArgs(pv, node); err != nil {
		return false, err
	}
	return m.compiled(pv).matches(pv.Name, node)
}

// compiled returns the cached placement for this version of pv, parsing
// and storing it on a miss.
func (m *Matcher) compiled(pv *v1.PersistentVolume) *compiledPlacement {
	rv := pv.ResourceVersion
	if rv == "" {
		return parsePlacement(pv)
	}
	if v, ok := m.entries.Load(pv.Name); ok {
		if e := v.(*matcherEntry); e.rv == rv && e.uid == pv.UID {
			return e.p
		}
	}
	p := parsePlacement(pv)
	m.entries.Store(pv.Name, &matcherEntry{uid: pv.UID, rv: rv, p: p})
	return p
}

// Forget drops the cached placement of pv (by name). Call it when the volume
// is deleted. A later Matches for the same name parses the volume again.
func (m *Matcher) Forget(pv *v1.PersistentVolume) {
	if pv == nil {
		return
	}
	m.entries.Delete(pv.Name)
}

// Len returns the number of cached volumes.
func (m *Matcher) Len() int {
	n := 0
	m.entries.Range(func(any, any) bool {
		n++
		return true
	})
	return n
}
