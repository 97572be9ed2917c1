package nodepool

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/zones"
)

// DefaultUnavailableFor is how long a BootLimiter holds a shape unavailable
// when BootLimiterConfig.UnavailableFor is zero.
const DefaultUnavailableFor = 3 * time.Minute

// Shape is what the cloud boots: an instance type of a capacity type in a
// zone. An empty Zone means "any zone".
type Shape struct {
	InstanceType string
	CapacityType string
	Zone         string
}

// BootLimiterConfig configures a BootLimiter. The zero value is valid.
type BootLimiterConfig struct {
	// Clock reads the time; nil means the real clock.
	Clock clock.PassiveClock
	// UnavailableFor is how long a shape stays unavailable after
	// MarkUnavailable; zero means DefaultUnavailableFor.
	UnavailableFor time.Duration
}

// BootLimiter remembers shapes the cloud could not provide (a capacity
// error) and reports them unavailable for a while, so that rounds do not
// boot them again and again. It starts no goroutines; expired entries are
// dropped when seen. It is safe for concurrent use.
type BootLimiter struct {
	clk clock.PassiveClock
	ttl time.Duration

	// mu guards until.
	mu sync.Mutex
	// until maps a shape to the end of its unavailability.
	until map[Shape]time.Time
}

// NewBootLimiter returns an empty BootLimiter.
func NewBootLimiter(cfg BootLimiterConfig) *BootLimiter {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.UnavailableFor <= 0 {
		cfg.UnavailableFor = DefaultUnavailableFor
	}
	return &BootLimiter{clk: cfg.Clock, ttl: cfg.UnavailableFor, until: map[Shape]time.Time{}}
}

// MarkUnavailable records that the cloud could not provide shape; it stays
// unavailable for the configured time from now. Marking it again while it
// is unavailable does not extend the time, as kip's limiter does not.
func (l *BootLimiter) MarkUnavailable(shape Shape) {
	now := l.clk.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.until[shape]; ok && now.Before(t) {
		return
	}
	l.until[shape] = now.Add(l.ttl)
}

// MarkNodeUnavailable is MarkUnavailable for the shape of node (a boot spec
// from a Round, or a node that failed to boot), read from its instance type,
// capacity type (under capacityTypeKey; absent means on-demand) and zone
// labels.
func (l *BootLimiter) MarkNodeUnavailable(node *v1.Node, capacityTypeKey string) {
	l.MarkUnavailable(NodeShape(node, capacityTypeKey))
}

// NodeShape returns the shape of node from its labels; an absent capacity
// type label means on-demand.
func NodeShape(node *v1.Node, capacityTypeKey string) Shape {
	ct := node.Labels[capacityTypeKey]
	if ct == "" {
		ct = CapacityOnDemand
	}
	z, _ := zones.NodeZone(node)
	return Shape{InstanceType: node.Labels[InstanceTypeLabel], CapacityType: ct, Zone: z}
}

// Unavailable reports whether shape is unavailable now. A shape marked with
// an empty Zone makes the shape unavailable in every zone.
func (l *BootLimiter) Unavailable(shape Shape) bool {
	now := l.clk.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unavailableLocked(shape, now) {
		return true
	}
	if shape.Zone != "" {
		shape.Zone = ""
		return l.unavailableLocked(shape, now)
	}
	return false
}

func (l *BootLimiter) unavailableLocked(shape Shape, now time.Time) bool {
	t, ok := l.until[shape]
	if !ok {
		return false
	}
	if now.Before(t) {
		return true
	}
	delete(l.until, shape)
	return false
}

// Len returns the number of shapes currently unavailable.
func (l *BootLimiter) Len() int {
	now := l.clk.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for s, t := range l.until {
		if now.Before(t) {
			n++
		} else {
			delete(l.until, s)
		}
	}
	return n
}
