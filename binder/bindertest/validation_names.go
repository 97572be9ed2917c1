package bindertest

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The format checks of names, label keys and label values that every
// create makes, as loops over the bytes instead of apimachinery's regular
// expressions. Each accepts exactly what the apimachinery function it
// names accepts (the caseless ones: for ASCII strings, giving no verdict
// otherwise); validation_names_test.go compares them on every string of a
// biased alphabet up to a length and on random long ones. The caller runs
// the apimachinery function only when a loop rejects, for its messages.
//
// A million-pair simulate run spent 9.0 s of 139 s of CPU in those regular
// expressions and 5.2 s building the field paths of checks that passed (2
// cores). With the loops, plainMetaValid, nodeSelectorValid and the shared
// paths of validation_paths.go: BenchmarkFormatChecks 451 → 40 ns for a
// volume's name; BenchmarkValidate (copy, defaults and validation of a
// create) 10.4–14.4 → 4.7 µs and 39 → 13 allocations for a zonal CSI
// volume, 3.6–4.7 → 1.6–1.9 µs and 19 → 6 for a claim; a million-pair
// simulate run took 0.83 of the wall time and 0.79 of the CPU of the run
// before (medians of 2 pairs, A B A B).

// Length limits of apimachinery's content checks.
const (
	dnsLabelMaxLen     = 63  // content.DNS1123LabelMaxLength
	dnsSubdomainMaxLen = 253 // content.DNS1123SubdomainMaxLength
	labelMaxLen        = 63  // content.LabelValueMaxLength and the name part of a key
)

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

// dnsLabelBody reports whether s matches [a-z0-9]([-a-z0-9]*[a-z0-9])?,
// with ASCII letters lowered first when caseless.
func dnsLabelBody(s string, caseless bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if caseless && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if !isLowerAlnum(c) && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// isDNS1123Label reports whether validation.IsDNS1123Label(s) is empty.
func isDNS1123Label(s string) bool {
	return len(s) <= dnsLabelMaxLen && dnsLabelBody(s, false)
}

// isDNS1123Subdomain reports whether validation.IsDNS1123Subdomain(s) is
// empty: at most 253 bytes, dot-separated DNS-1123 label bodies (of any
// length). With caseless, ASCII upper case counts as lower case, as a
// check of strings.ToLower(s) does for ASCII.
func isDNS1123Subdomain(s string, caseless bool) bool {
	if len(s) > dnsSubdomainMaxLen {
		return false
	}
	for {
		label, rest, more := strings.Cut(s, ".")
		if !dnsLabelBody(label, caseless) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// labelBody reports whether s matches
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]: a label value or a label
// key's name part, non-empty.
func labelBody(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && ((c != '-' && c != '_' && c != '.') || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// isLabelValue reports whether validation.IsValidLabelValue(s) is empty.
func isLabelValue(s string) bool {
	return s == "" || len(s) <= labelMaxLen && labelBody(s)
}

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isQualifiedName reports whether validation.IsQualifiedName(s) is empty
// (a label key: an optional DNS-1123 subdomain prefix and '/', and a name
// part). With caseless, it reports that for strings.ToLower(s) when s is
// ASCII, as annotation keys are checked; a key with other bytes gets no
// verdict (false), since ToLower may map them to ASCII.
func isQualifiedName(s string, caseless bool) bool {
	if caseless && !isASCII(s) {
		return false
	}
	prefix, name, hasPrefix := strings.Cut(s, "/")
	if !hasPrefix {
		name = prefix
	} else if !isDNS1123Subdomain(prefix, caseless) {
		return false
	}
	return len(name) <= labelMaxLen && labelBody(name)
}

// plainMetaValid reports whether the metadata checks of a create
// (validateMeta) would find nothing, for the metadata most objects have:
// a name and no generateName, no owner references, finalizers or managed
// fields, labels and annotations of keys and values the loops above
// accept. A false result is no verdict: validateMeta then runs
// apimachinery's ValidateObjectMeta, which builds a field path per check
// whether or not it fails. validation_names_test.go checks that it never
// accepts what ValidateObjectMeta rejects.
func plainMetaValid(m *metav1.ObjectMeta, namespaced bool) bool {
	if m.GenerateName != "" || m.Generation < 0 || len(m.OwnerReferences) > 0 ||
		len(m.Finalizers) > 0 || len(m.ManagedFields) > 0 || !isDNS1123Subdomain(m.Name, false) {
		return false
	}
	if namespaced != (m.Namespace != "") || namespaced && !isDNS1123Label(m.Namespace) {
		return false
	}
	for k, v := range m.Labels {
		if !isQualifiedName(k, false) || !isLabelValue(v) {
			return false
		}
	}
	for k := range m.Annotations {
		if !isQualifiedName(k, true) {
			return false
		}
	}
	return len(m.Annotations) == 0 || apivalidation.ValidateAnnotationsSize(m.Annotations) == nil
}

// isCSIDriverName reports whether validateCSIDriverName accepts name
// (false for names of non-ASCII bytes: no verdict).
func isCSIDriverName(name string) bool {
	return name != "" && len(name) <= dnsLabelMaxLen && isDNS1123Subdomain(name, true)
}

// nodeSelectorValid reports whether validateNodeSelector finds nothing in
// s, without building the field paths of its checks (11 of the
// allocations of a zonal volume's validation).
func nodeSelectorValid(s *v1.NodeSelector) bool {
	if len(s.NodeSelectorTerms) == 0 {
		return false
	}
	for _, t := range s.NodeSelectorTerms {
		for _, r := range t.MatchExpressions {
			if !requirementValid(r) {
				return false
			}
		}
		for _, r := range t.MatchFields {
			if (r.Operator != v1.NodeSelectorOpIn && r.Operator != v1.NodeSelectorOpNotIn) || len(r.Values) != 1 ||
				r.Key != "metadata.name" || !isDNS1123Subdomain(r.Values[0], false) {
				return false
			}
		}
	}
	return true
}

// requirementValid reports whether validateNodeSelectorRequirement finds
// nothing in r.
func requirementValid(r v1.NodeSelectorRequirement) bool {
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return false
		}
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			return false
		}
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return false
		}
	default:
		return false
	}
	if !isQualifiedName(r.Key, false) {
		return false
	}
	for _, v := range r.Values {
		if !isLabelValue(v) {
			return false
		}
	}
	return true
}
