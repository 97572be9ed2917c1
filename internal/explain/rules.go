package explain

import (
	"fmt"
	"strconv"
)

// Rule is one check a volume must pass to be bound to a claim. Rules are
// numbered in the order explanations apply them: the first rule a volume
// fails is the one reported for it, and a volume that fails a later rule is
// closer to fitting than one that fails an earlier rule.
type Rule int

// The rules, in the order they are checked.
const (
	// Fits is no rule: the volume passes every check.
	Fits Rule = iota
	// Invalid: the volume cannot take part in binding at all (no storage
	// capacity, a negative one, an unknown access mode); the Binder keeps
	// it out of its index.
	Invalid
	// StorageClass: the volume's class is not the claim's.
	StorageClass
	// BoundElsewhere: the volume's claimRef names another claim (bound or
	// pre-bound to it).
	BoundElsewhere
	// Deleting: the volume has a deletionTimestamp.
	Deleting
	// NotAvailable: an unbound volume whose phase is not Available (with
	// Config.UnmarkedCandidates, not Available, Pending or empty).
	NotAvailable
	// AccessModes: the volume does not offer every access mode the claim
	// asks for.
	AccessModes
	// VolumeMode: Filesystem against Block.
	VolumeMode
	// Capacity: the volume is smaller than the claim's request.
	Capacity
	// Selector: the volume's labels do not match the claim's selector.
	Selector
	// VolumeAttributesClass: the volume's VolumeAttributesClass is not the
	// claim's.
	VolumeAttributesClass
	// NodeAffinity: the volume's required node affinity excludes the node
	// the claim is matched for.
	NodeAffinity

	numRules = iota
)

var ruleNames = [numRules]string{"Fits", "Invalid", "StorageClass", "BoundElsewhere", "Deleting", "NotAvailable",
	"AccessModes", "VolumeMode", "Capacity", "Selector", "VolumeAttributesClass", "NodeAffinity"}

// ruleTexts are the short texts of the text output ("capacity: 8Gi < ...").
var ruleTexts = [numRules]string{"fits", "invalid", "storage class", "bound elsewhere", "being deleted", "not available",
	"access modes", "volume mode", "capacity", "selector", "volume attributes class", "node affinity"}

// String returns the rule's name, e.g. "Capacity".
func (r Rule) String() string {
	if r >= 0 && r < numRules {
		return ruleNames[r]
	}
	return "Rule(" + strconv.Itoa(int(r)) + ")"
}

// Text returns the rule's short lower-case text, e.g. "storage class".
func (r Rule) Text() string {
	if r >= 0 && r < numRules {
		return ruleTexts[r]
	}
	return r.String()
}

// MarshalText writes the rule's name, so that JSON and YAML carry
// "Capacity" rather than a number.
func (r Rule) MarshalText() ([]byte, error) {
	if r < 0 || r >= numRules {
		return nil, fmt.Errorf("explain: unknown rule %d", int(r))
	}
	return []byte(ruleNames[r]), nil
}

// UnmarshalText reads a rule's name.
func (r *Rule) UnmarshalText(b []byte) error {
	for i, n := range ruleNames {
		if n == string(b) {
			*r = Rule(i)
			return nil
		}
	}
	return fmt.Errorf("explain: unknown rule %q", b)
}
