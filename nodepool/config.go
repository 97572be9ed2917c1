package nodepool

import (
	"fmt"
	"hash/maphash"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volbind/volbind/zones"
)

// DefaultMaxBootsPerRound is the per-round boot cap when
// Config.MaxBootsPerRound is zero.
const DefaultMaxBootsPerRound = 10

// DefaultGenerateName is the GenerateName of boot specs when
// Config.GenerateName is empty.
const DefaultGenerateName = "nodepool-"

// StandbySpec asks for Count unbound nodes of one shape to be kept warm.
// Duplicate specs add up.
type StandbySpec struct {
	// InstanceType is the node's instance type label value; required.
	InstanceType string
	// CapacityType is the capacity type label value; empty means
	// CapacityOnDemand.
	CapacityType string
	// Count is how many nodes to keep; zero keeps none.
	Count int
	// Labels are further label values the nodes must have (for example a
	// zone or an extra key). Extra keys not listed here must be absent.
	Labels map[string]string
}

// Config configures a Scaler. The zero value is valid.
type Config struct {
	// CapacityTypeKey is the node label holding CapacitySpot or
	// CapacityOnDemand; empty means DefaultCapacityTypeKey. A node without
	// it is on-demand, and so is a pod that does not name it.
	CapacityTypeKey string
	// ExtraKeys are further node label keys that split nodes into shapes
	// (GPU, dedicated, private-IP-only, ...). A pod that does not name such
	// a key only takes nodes without that label.
	ExtraKeys []string
	// Standby lists the standby pools.
	Standby []StandbySpec
	// DefaultInstanceType is booted for pods that name no instance type;
	// empty means such pods get no node booted (ErrUnsatisfiable).
	DefaultInstanceType string
	// DiskSizeKey is the node label holding the node's disk size as a
	// quantity; empty means DefaultDiskSizeKey.
	DiskSizeKey string
	// DefaultDiskSize is the disk size of booted nodes; zero means the disk
	// size label is neither written nor checked. A node without the label
	// has the default size.
	DefaultDiskSize resource.Quantity
	// FixedSizeDisk says disks cannot be resized at dispatch: a pod then
	// needs a node whose disk size equals its ephemeral-storage request
	// (the default size when it requests none), and a pod's boot spec gets
	// the requested size. Requires DefaultDiskSize.
	FixedSizeDisk bool
	// MaxBootsPerRound caps the boot specs of one round, picked
	// round-robin across shapes, pods before standby nodes; zero means
	// DefaultMaxBootsPerRound, negative means no cap.
	MaxBootsPerRound int
	// Limiter holds unavailable shapes; nil means a new BootLimiter with
	// the real clock and DefaultUnavailableFor.
	Limiter *BootLimiter
	// GenerateName is the GenerateName of boot specs; empty means
	// DefaultGenerateName.
	GenerateName string
	// IsWaiting reports whether a pod waits for a node; nil means the
	// package's IsWaiting.
	IsWaiting func(*v1.Pod) bool
}

// Scaler computes pool-loop rounds. It holds only its configuration and the
// BootLimiter; Compute is safe for concurrent use.
type Scaler struct {
	cfg      Config
	diskSize int64
	// baseKeys are the label keys that always split nodes into groups
	// (sorted): shape keys, extra keys and the keys standby specs name.
	baseKeys []string
	// seed hashes pod requirements and node labels into classes and groups.
	seed maphash.Seed
}

// New validates cfg and returns a Scaler. Errors wrap ErrInvalidConfig.
func New(cfg Config) (*Scaler, error) {
	if cfg.CapacityTypeKey == "" {
		cfg.CapacityTypeKey = DefaultCapacityTypeKey
	}
	if cfg.DiskSizeKey == "" {
		cfg.DiskSizeKey = DefaultDiskSizeKey
	}
	if cfg.MaxBootsPerRound == 0 {
		cfg.MaxBootsPerRound = DefaultMaxBootsPerRound
	}
	if cfg.Limiter == nil {
		cfg.Limiter = NewBootLimiter(BootLimiterConfig{})
	}
	if cfg.GenerateName == "" {
		cfg.GenerateName = DefaultGenerateName
	}
	if cfg.IsWaiting == nil {
		cfg.IsWaiting = IsWaiting
	}
	if cfg.FixedSizeDisk && cfg.DefaultDiskSize.IsZero() {
		return nil, fmt.Errorf("%w: FixedSizeDisk needs a DefaultDiskSize", ErrInvalidConfig)
	}
	if cfg.DefaultDiskSize.Sign() < 0 {
		return nil, fmt.Errorf("%w: DefaultDiskSize %s is negative", ErrInvalidConfig, cfg.DefaultDiskSize.String())
	}
	if err := checkLabels(&cfg); err != nil {
		return nil, err
	}
	s := &Scaler{cfg: cfg, diskSize: cfg.DefaultDiskSize.Value(), seed: maphash.MakeSeed()}
	keys := []string{InstanceTypeLabel, zones.ZoneLabel, zones.RegionLabel, zones.BetaZoneLabel, zones.BetaRegionLabel, cfg.CapacityTypeKey}
	if !cfg.DefaultDiskSize.IsZero() {
		keys = append(keys, cfg.DiskSizeKey)
	}
	for _, k := range cfg.ExtraKeys {
		if k == "" {
			return nil, fmt.Errorf("%w: empty extra key", ErrInvalidConfig)
		}
		if slices.Contains(keys, k) {
			return nil, fmt.Errorf("%w: extra key %q is already a shape key", ErrInvalidConfig, k)
		}
		keys = append(keys, k)
	}
	cfg.Standby = slices.Clone(cfg.Standby)
	for i := range cfg.Standby {
		sp := &cfg.Standby[i]
		if sp.InstanceType == "" {
			return nil, fmt.Errorf("%w: standby spec %d has no instance type", ErrInvalidConfig, i)
		}
		if sp.Count < 0 {
			return nil, fmt.Errorf("%w: standby spec %d (%s) has negative count %d", ErrInvalidConfig, i, sp.InstanceType, sp.Count)
		}
		if sp.CapacityType == "" {
			sp.CapacityType = CapacityOnDemand
		}
		sp.Labels = maps.Clone(sp.Labels)
		for k := range sp.Labels {
			if k == "" || k == InstanceTypeLabel || k == cfg.CapacityTypeKey {
				return nil, fmt.Errorf("%w: standby spec %d (%s) sets label %q in Labels", ErrInvalidConfig, i, sp.InstanceType, k)
			}
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	s.cfg = cfg
	s.cfg.ExtraKeys = slices.Clone(cfg.ExtraKeys)
	slices.Sort(keys)
	s.baseKeys = slices.Compact(keys)
	return s, nil
}

// Limiter returns the Scaler's BootLimiter, to record capacity errors.
func (s *Scaler) Limiter() *BootLimiter { return s.cfg.Limiter }

// CapacityTypeKey returns the capacity type label key in use.
func (s *Scaler) CapacityTypeKey() string { return s.cfg.CapacityTypeKey }

// checkLabels checks, with the API's label rules, the label keys and values
// cfg puts on booted nodes, so that a node spec from a Round is never one
// the API server refuses. The error names each bad field.
func checkLabels(cfg *Config) error {
	var errs field.ErrorList
	key := func(p *field.Path, k string) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p, k, msg))
		}
	}
	value := func(p *field.Path, v string) {
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(p, v, msg))
		}
	}
	key(field.NewPath("CapacityTypeKey"), cfg.CapacityTypeKey)
	key(field.NewPath("DiskSizeKey"), cfg.DiskSizeKey)
	value(field.NewPath("DefaultInstanceType"), cfg.DefaultInstanceType)
	for i, k := range cfg.ExtraKeys {
		key(field.NewPath("ExtraKeys").Index(i), k)
	}
	for i, sp := range cfg.Standby {
		p := field.NewPath("Standby").Index(i)
		value(p.Child("InstanceType"), sp.InstanceType)
		value(p.Child("CapacityType"), sp.CapacityType)
		for _, k := range slices.Sorted(maps.Keys(sp.Labels)) {
			key(p.Child("Labels"), k)
			value(p.Child("Labels").Key(k), sp.Labels[k])
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, errs.ToAggregate())
	}
	return nil
}
