package zones

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Label keys this package reads and writes. The GA keys are written by
// default; the deprecated beta keys are read everywhere and written only
// when asked (Placement.WriteBeta).
const (
	ZoneLabel       = v1.LabelTopologyZone
	RegionLabel     = v1.LabelTopologyRegion
	BetaZoneLabel   = v1.LabelFailureDomainBetaZone
	BetaRegionLabel = v1.LabelFailureDomainBetaRegion
)

// MultiZoneDelimiter separates zones in a multi-zone label value, as in
// "us-east-1a__us-east-1b" (cloud-provider's LabelMultiZoneDelimiter).
const MultiZoneDelimiter = "__"

// maxZoneLength is the longest zone name: a zone is a node label value.
const maxZoneLength = 63

// IsZoneKey reports whether key is the GA or the beta zone label key.
func IsZoneKey(key string) bool { return key == ZoneLabel || key == BetaZoneLabel }

// IsRegionKey reports whether key is the GA or the beta region label key.
func IsRegionKey(key string) bool { return key == RegionLabel || key == BetaRegionLabel }

// otherKey returns the beta key for a GA topology key and the GA key for a
// beta one, or "" for any other key.
func otherKey(key string) string {
	switch key {
	case ZoneLabel:
		return BetaZoneLabel
	case BetaZoneLabel:
		return ZoneLabel
	case RegionLabel:
		return BetaRegionLabel
	case BetaRegionLabel:
		return RegionLabel
	}
	return ""
}

// ParseZones parses a zone label value. A multi-zone value lists zones
// separated by "__" ("zone-a__zone-b"); duplicates collapse. An empty value,
// an empty element, whitespace, or an element that is not a valid label value
// (zones are node label values) gives an error wrapping ErrInvalidZones that
// names the value. The returned set is new and owned by the caller.
func ParseZones(value string) (sets.Set[string], error) {
	if value == "" {
		return nil, fmt.Errorf("%w: zone label value is empty", ErrInvalidZones)
	}
	zs := make(sets.Set[string], 1+strings.Count(value, MultiZoneDelimiter))
	rest := value
	for i := 0; ; i++ {
		elem, after, more := strings.Cut(rest, MultiZoneDelimiter)
		if err := checkZone(elem); err != nil {
			return nil, fmt.Errorf("%w: zone label value %q: element %d %q %s", ErrInvalidZones, value, i, elem, err.Error())
		}
		zs.Insert(elem)
		if !more {
			return zs, nil
		}
		rest = after
	}
}

// zoneError is a reason a zone name is invalid; it is a plain string so that
// checkZone does not allocate.
type zoneError string

func (e zoneError) Error() string { return string(e) }

// checkZone reports why zone is not a usable zone name, or nil.
func checkZone(zone string) error {
	switch {
	case zone == "":
		return zoneError("is empty")
	case strings.IndexFunc(zone, unicode.IsSpace) >= 0:
		return zoneError("contains whitespace")
	case len(zone) > maxZoneLength:
		return zoneError("is longer than 63 characters")
	case !utf8.ValidString(zone):
		return zoneError("is not valid UTF-8")
	case strings.Contains(zone, MultiZoneDelimiter):
		return zoneError(`contains the multi-zone delimiter "__"`)
	}
	if !isAlnum(zone[0]) || !isAlnum(zone[len(zone)-1]) {
		return zoneError("must begin and end with a letter or digit")
	}
	for i := 1; i < len(zone)-1; i++ {
		if c := zone[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return zoneError("may contain only letters, digits, '-', '_' and '.'")
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// ValidateZones returns an error wrapping ErrInvalidZones when zs is empty or
// holds a zone that ParseZones would refuse.
func ValidateZones(zs sets.Set[string]) error {
	if zs.Len() == 0 {
		return fmt.Errorf("%w: empty zone set", ErrInvalidZones)
	}
	for _, z := range sets.List(zs) {
		if err := checkZone(z); err != nil {
			return fmt.Errorf("%w: zone %q %s", ErrInvalidZones, z, err.Error())
		}
	}
	return nil
}

// FormatZones formats zs as a zone label value: the zones sorted and joined
// with "__", so the same set always gives the same value. An empty set gives
// "". FormatZones does not validate; see ValidateZones.
func FormatZones(zs sets.Set[string]) string {
	switch zs.Len() {
	case 0:
		return ""
	case 1:
		for z := range zs {
			return z
		}
	}
	return strings.Join(sets.List(zs), MultiZoneDelimiter)
}

// NodeZone returns the node's zone from the GA zone label, or from the beta
// label when the GA one is absent. ok is false when neither label is set.
func NodeZone(node *v1.Node) (zone string, ok bool) {
	if node == nil {
		return "", false
	}
	if z, ok := node.Labels[ZoneLabel]; ok {
		return z, true
	}
	z, ok := node.Labels[BetaZoneLabel]
	return z, ok
}

// NodeRegion returns the node's region from the GA region label, or from the
// beta label when the GA one is absent. ok is false when neither is set.
func NodeRegion(node *v1.Node) (region string, ok bool) {
	if node == nil {
		return "", false
	}
	if r, ok := node.Labels[RegionLabel]; ok {
		return r, true
	}
	r, ok := node.Labels[BetaRegionLabel]
	return r, ok
}

// ZonesWithNodes returns the zones of the given nodes (NodeZone), skipping
// nil nodes, nodes without a zone label and empty zone values. This is the
// "zones with nodes" input of SelectZones.
func ZonesWithNodes(nodes []*v1.Node) sets.Set[string] {
	zs := sets.New[string]()
	for _, n := range nodes {
		if z, ok := NodeZone(n); ok && z != "" {
			zs.Insert(z)
		}
	}
	return zs
}
