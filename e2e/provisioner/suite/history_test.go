//go:build e2e && linux

package suite

import (
	"fmt"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// history is every version of a case's claims and volumes that its watches
// delivered, in order. All methods are safe for concurrent use.
type history struct {
	// mu guards the fields below.
	mu      sync.Mutex
	claims  map[string][]*v1.PersistentVolumeClaim
	volumes map[string][]*v1.PersistentVolume
	// uids are the claims' UIDs in the order they appeared, each with its
	// claim's name and incarnation ("data", "data#2" for a re-created one).
	uids  []types.UID
	names map[types.UID]string
	// seen counts the incarnations of each claim name.
	seen map[string]int
}

func newHistory() *history {
	return &history{claims: map[string][]*v1.PersistentVolumeClaim{}, volumes: map[string][]*v1.PersistentVolume{}, names: map[types.UID]string{}, seen: map[string]int{}}
}

// add records the object of a watch event.
func (h *history) add(ev watch.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch o := ev.Object.(type) {
	case *v1.PersistentVolumeClaim:
		if _, ok := h.names[o.UID]; !ok {
			h.seen[o.Name]++
			h.names[o.UID] = o.Name
			if n := h.seen[o.Name]; n > 1 {
				h.names[o.UID] = fmt.Sprintf("%s#%d", o.Name, n)
			}
			h.uids = append(h.uids, o.UID)
		}
		h.claims[o.Name] = append(h.claims[o.Name], o)
	case *v1.PersistentVolume:
		h.volumes[o.Name] = append(h.volumes[o.Name], o)
	}
}

// volumeVersions returns every version of volume name seen, in order.
func (h *history) volumeVersions(name string) []*v1.PersistentVolume {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.volumes[name])
}

// claimVersions returns every version of the claims named name seen, in
// order (all incarnations).
func (h *history) claimVersions(name string) []*v1.PersistentVolumeClaim {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.claims[name])
}

// volumeNames returns the names of every volume seen.
func (h *history) volumeNames() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for name := range h.volumes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// claimNames returns the UID of every claim seen with its incarnation name.
func (h *history) claimNames() map[types.UID]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[types.UID]string, len(h.names))
	for uid, name := range h.names {
		out[uid] = name
	}
	return out
}
