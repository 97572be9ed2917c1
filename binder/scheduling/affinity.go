package scheduling

import (
	"errors"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// errNoMatchingTerms is component-helpers' CheckNodeAffinity text for a
// node that no term selects.
var errNoMatchingTerms = errors.New("no matching NodeSelectorTerms")

// affinityCache checks volumes' required node affinity against nodes as
// component-helpers' CheckNodeAffinity does (terms evaluated on the node's
// labels only), parsing each volume version once: Find checks a pod's
// bound volumes on every node. Entries are keyed by volume name and valid
// for one UID and resourceVersion; a newer version replaces the entry.
// Volumes without a resourceVersion are parsed every time. The zero value
// is ready; safe for concurrent use.
type affinityCache struct {
	// entries maps a volume name to its *affinityEntry, never modified
	// once stored.
	entries sync.Map
}

// affinityEntry is the parsed required node affinity of one volume
// version; sel is nil when the volume has none.
type affinityEntry struct {
	uid       types.UID
	rv        string
	sel       *nodeaffinity.LazyErrorNodeSelector
	hasFields bool
}

func parseAffinity(pv *v1.PersistentVolume) *affinityEntry {
	e := &affinityEntry{uid: pv.UID, rv: pv.ResourceVersion}
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil {
		return e
	}
	e.sel = nodeaffinity.NewLazyErrorNodeSelector(na.Required)
	for i := range na.Required.NodeSelectorTerms {
		if len(na.Required.NodeSelectorTerms[i].MatchFields) > 0 {
			e.hasFields = true
		}
	}
	return e
}

// check returns nil when pv's required node affinity selects node, else
// why not (the selector's parse error, or errNoMatchingTerms).
func (c *affinityCache) check(pv *v1.PersistentVolume, node *v1.Node) error {
	e := c.entry(pv)
	if e.sel == nil {
		return nil
	}
	n := node
	if e.hasFields {
		// As CheckNodeAffinity: only labels count, so matchFields on the
		// node's name never select it.
		n = &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: node.Labels}}
	}
	ok, err := e.sel.Match(n)
	switch {
	case err != nil:
		return err
	case !ok:
		return errNoMatchingTerms
	}
	return nil
}

func (c *affinityCache) entry(pv *v1.PersistentVolume) *affinityEntry {
	if pv.ResourceVersion == "" {
		return parseAffinity(pv)
	}
	if v, ok := c.entries.Load(pv.Name); ok {
		if e := v.(*affinityEntry); e.rv == pv.ResourceVersion && e.uid == pv.UID {
			return e
		}
	}
	e := parseAffinity(pv)
	c.entries.Store(pv.Name, e)
	return e
}

// forget drops the entry of a deleted volume.
func (c *affinityCache) forget(name string) { c.entries.Delete(name) }
