package scheduling

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/volbind/volbind/internal/pvindex"
)

// volumeIndex holds the volumes in pvindex Indexes, split so that a node's
// search does not wade through other nodes' local volumes: an available,
// unclaimed volume whose whole required node affinity is
// "kubernetes.io/hostname In [one host]" sits in the index of that host;
// every other volume (all volumes with a claimRef among them) sits in the
// general index. A search asks the general index and the node's host index
// and keeps the smaller answer, which is the answer one index over all
// volumes gives (see find). Writers hold VolumeBinder.pvMu; searches run in
// parallel with them and with each other. A writer passes the version the
// index holds (the volume cache's latest before the change): which index
// holds a volume follows from it, so no map of volume names to hosts is
// kept (about 45 bytes per volume).
type volumeIndex struct {
	general *pvindex.Index

	// mu guards byHost and claimed.
	mu sync.RWMutex
	// byHost holds the host indexes by hostname label value.
	byHost map[string]*pvindex.Index
	// claimed counts, per claim, the volumes whose claimRef names it.
	claimed map[claimName]int
}

type claimName struct{ namespace, name string }

func newVolumeIndex() *volumeIndex {
	return &volumeIndex{
		general: pvindex.New(),
		byHost:  make(map[string]*pvindex.Index),
		claimed: make(map[claimName]int),
	}
}

// hostOf returns the host of a volume that belongs in a host index, or "".
func hostOf(pv *v1.PersistentVolume) string {
	if pv.Spec.ClaimRef != nil || pv.DeletionTimestamp != nil || pv.Status.Phase != v1.VolumeAvailable {
		return ""
	}
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil || len(na.Required.NodeSelectorTerms) != 1 {
		return ""
	}
	term := &na.Required.NodeSelectorTerms[0]
	if len(term.MatchFields) != 0 || len(term.MatchExpressions) != 1 {
		return ""
	}
	e := &term.MatchExpressions[0]
	if e.Key != v1.LabelHostname || e.Operator != v1.NodeSelectorOpIn || len(e.Values) != 1 || e.Values[0] == "" {
		return ""
	}
	return e.Values[0]
}

// indexLocked returns the index of host. Called with mu held.
func (x *volumeIndex) indexLocked(host string) *pvindex.Index {
	if host == "" {
		return x.general
	}
	return x.byHost[host]
}

// set makes the index hold pv under name instead of old, the version it
// holds now (nil: none); a nil pv removes name. Called with
// VolumeBinder.pvMu held.
func (x *volumeIndex) set(name string, old, pv *v1.PersistentVolume) {
	if old == pv {
		return
	}
	oldHost, newHost := "", ""
	if old != nil {
		oldHost = hostOf(old)
	}
	if pv != nil {
		newHost = hostOf(pv)
	}
	x.mu.Lock()
	if old != nil && old.Spec.ClaimRef != nil {
		k := claimName{old.Spec.ClaimRef.Namespace, old.Spec.ClaimRef.Name}
		if x.claimed[k]--; x.claimed[k] <= 0 {
			delete(x.claimed, k)
		}
	}
	if pv != nil && pv.Spec.ClaimRef != nil {
		x.claimed[claimName{pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name}]++
	}
	if newHost != "" && x.byHost[newHost] == nil {
		x.byHost[newHost] = pvindex.New()
	}
	oldIx, newIx := x.indexLocked(oldHost), x.indexLocked(newHost)
	x.mu.Unlock()

	if pv == nil {
		oldIx.Delete(name)
		return
	}
	// Insert before deleting, so that a concurrent search never misses a
	// volume that stays available (it may see it twice, which is harmless).
	newIx.Upsert(pv)
	if old != nil && oldIx != newIx {
		oldIx.Delete(name)
	}
}

// find returns the volume kube-scheduler's FindMatchingVolume would choose
// for claim on node among every indexed volume (SchedulerSearch with the
// node and exclusions), or nil.
func (x *volumeIndex) find(claim *v1.PersistentVolumeClaim, node *v1.Node, exclude map[string]bool) (*v1.PersistentVolume, error) {
	opts := pvindex.FindOptions{SchedulerSearch: true, DelayBinding: true, Node: node, Exclude: exclude}
	x.mu.RLock()
	hostIx := x.byHost[node.Labels[v1.LabelHostname]]
	claimed := x.claimed[claimName{claim.Namespace, claim.Name}] > 0
	x.mu.RUnlock()

	best, err := x.general.FindBestMatch(claim, opts)
	if err != nil {
		return nil, err
	}
	if claimed {
		if best != nil && boundTo(best, claim) {
			return best, nil
		}
		// A volume pre-bound to the claim decides the search even when it
		// does not fit the node; with no node the index returns exactly
		// that deciding volume.
		decider, err := x.general.FindBestMatch(claim, pvindex.FindOptions{SchedulerSearch: true, DelayBinding: true, Exclude: exclude})
		if err != nil {
			return nil, err
		}
		if decider != nil {
			return nil, nil
		}
	}
	if hostIx == nil {
		return best, nil
	}
	local, err := hostIx.FindBestMatch(claim, opts)
	if err != nil || local == nil {
		return best, err
	}
	if best == nil || smaller(local, best) {
		return local, nil
	}
	return best, nil
}

// boundTo reports whether pv's claimRef names claim. Candidates have no
// claimRef, so such an answer is the pre-bound volume that decided.
func boundTo(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	return ref != nil && ref.Namespace == claim.Namespace && ref.Name == claim.Name
}

// smaller orders candidates as the index does: by capacity, then name.
func smaller(a, b *v1.PersistentVolume) bool {
	qa, qb := storage(a), storage(b)
	if c := qa.Cmp(qb); c != 0 {
		return c < 0
	}
	return a.Name < b.Name
}

func storage(pv *v1.PersistentVolume) resource.Quantity {
	return pv.Spec.Capacity[v1.ResourceStorage]
}
