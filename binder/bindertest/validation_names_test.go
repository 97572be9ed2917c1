package bindertest

import (
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// formatChecks pairs each loop of validation_names.go with the
// apimachinery check it stands for. exact: the two agree on every string;
// otherwise the loop may reject what apimachinery accepts (no verdict),
// never the reverse.
var formatChecks = []struct {
	name  string
	fast  func(string) bool
	full  func(string) bool
	exact func(string) bool
}{
	{"DNS-1123 label", isDNS1123Label, func(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }, nil},
	{"DNS-1123 subdomain", func(s string) bool { return isDNS1123Subdomain(s, false) },
		func(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }, nil},
	{"DNS-1123 subdomain, caseless", func(s string) bool { return isDNS1123Subdomain(s, true) },
		func(s string) bool { return len(validation.IsDNS1123Subdomain(strings.ToLower(s))) == 0 }, isASCII},
	{"label value", isLabelValue, func(s string) bool { return len(validation.IsValidLabelValue(s)) == 0 }, nil},
	{"label key", func(s string) bool { return isQualifiedName(s, false) },
		func(s string) bool { return len(validation.IsQualifiedName(s)) == 0 }, nil},
	{"annotation key", func(s string) bool { return isQualifiedName(s, true) },
		func(s string) bool { return len(validation.IsQualifiedName(strings.ToLower(s))) == 0 }, isASCII},
	{"CSI driver name", isCSIDriverName,
		func(s string) bool { return len(validateCSIDriverName(s, field.NewPath("driver"))) == 0 }, isASCII},
}

// checkFormat fails t when a loop and its apimachinery check disagree on s
// where they must agree, and counts in accepted the strings each loop
// accepts.
func checkFormat(t *testing.T, s string, accepted []int) {
	t.Helper()
	for i, c := range formatChecks {
		fast, full := c.fast(s), c.full(s)
		if fast {
			accepted[i]++
		}
		switch {
		case fast && !full:
			t.Fatalf("%s: %q accepted, apimachinery rejects it", c.name, s)
		case !fast && full && (c.exact == nil || c.exact(s)):
			t.Fatalf("%s: %q rejected, apimachinery accepts it", c.name, s)
		}
	}
}

// TestFormatChecksMatchApimachinery compares the loops with apimachinery's
// regular expressions on every string of up to 4 pieces of an alphabet
// holding each class of byte the rules tell apart (lower, upper, digit,
// '-', '.', '_', '/', a byte beyond ASCII, the Kelvin sign that
// strings.ToLower makes 'k'), and on random strings at the length limits.
func TestFormatChecksMatchApimachinery(t *testing.T) {
	t.Parallel()
	alphabet := []string{"a", "Z", "0", "-", ".", "_", "/", "é", "\u212a", "x."}
	var walk func(prefix string, depth int)
	n := 0
	accepted := make([]int, len(formatChecks))
	walk = func(prefix string, depth int) {
		checkFormat(t, prefix, accepted)
		n++
		if depth == 0 {
			return
		}
		for _, a := range alphabet {
			walk(prefix+a, depth-1)
		}
	}
	walk("", 4)

	rng := rand.New(rand.NewPCG(1, 2))
	valid := "abcdefghijklmnopqrstuvwxyz0123456789"
	for range 20000 {
		length := []int{62, 63, 64, 252, 253, 254, 300}[rng.IntN(7)]
		b := make([]byte, length)
		for i := range b {
			b[i] = valid[rng.IntN(len(valid))]
			if rng.IntN(20) == 0 {
				b[i] = "-._/A"[rng.IntN(5)]
			}
		}
		if rng.IntN(2) == 0 {
			b[rng.IntN(length)] = '/' // a label key's prefix of up to 300 bytes
		}
		checkFormat(t, string(b), accepted)
		n++
	}
	// Each loop accepted and rejected some of the strings, so that the
	// comparison cannot pass with a loop that answers always the same.
	for i, c := range formatChecks {
		if accepted[i] < 100 || n-accepted[i] < 100 {
			t.Errorf("%s: %d of %d strings accepted, too few on one side to compare", c.name, accepted[i], n)
		}
	}
	t.Logf("%d strings compared; accepted per check: %v", n, accepted)
}

// randomMeta returns metadata drawn from valid and invalid pieces of
// every field ValidateObjectMeta reads; each field is valid (or unset)
// three times in four.
func randomMeta(rng *rand.Rand, long string) *metav1.ObjectMeta {
	// pick returns good most of the time, else one of bad.
	pick := func(good string, bad ...string) string {
		if rng.IntN(4) > 0 {
			return good
		}
		return bad[rng.IntN(len(bad))]
	}
	m := &metav1.ObjectMeta{Name: pick("pv-1", "a.b", "", "Bad", "-x", strings.Repeat("a", 254))}
	if rng.IntN(2) == 0 {
		m.Namespace = pick("ns-1", "a.b", "Bad")
	}
	if rng.IntN(8) == 0 {
		m.Generation = -1
	}
	if rng.IntN(8) == 0 {
		m.GenerateName = pick("pv-", "Bad-")
	}
	for range rng.IntN(3) {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[pick("example.com/zone", "a/b/c", "-x", "Example.com/x", "zone")] = pick("a", "", "-a", strings.Repeat("v", 64))
	}
	for range rng.IntN(3) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[pick("pv.kubernetes.io/bound-by-controller", "Example.COM/x", "bad key", "\u212a/x")] = pick("yes", long)
	}
	if rng.IntN(10) == 0 {
		m.Finalizers = []string{pick("kubernetes.io/pv-protection", "bad")}
	}
	if rng.IntN(10) == 0 {
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u"}}
	}
	if rng.IntN(10) == 0 {
		m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply}}
	}
	return m
}

// TestPlainMetaValidNeverAcceptsInvalid checks plainMetaValid against the
// full metadata validation on random metadata of both scopes: whatever it
// accepts, ValidateObjectMeta accepts.
func TestPlainMetaValidNeverAcceptsInvalid(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	accepted, rejected := 0, 0
	long := strings.Repeat("x", apivalidation.TotalAnnotationSizeLimitB)
	for range 20000 {
		m := randomMeta(rng, long)
		namespaced := m.Namespace != ""
		if rng.IntN(8) == 0 {
			namespaced = !namespaced
		}
		errs := validateMetaFully(m, namespaced)
		if !plainMetaValid(m, namespaced) {
			rejected++
			continue
		}
		accepted++
		if len(errs) > 0 {
			t.Fatalf("plainMetaValid accepts %+v (namespaced %v); the full validation finds %v", m, namespaced, errs)
		}
	}
	if accepted < 500 || rejected < 500 {
		t.Fatalf("%d accepted, %d rejected: the draw does not test both sides", accepted, rejected)
	}
	t.Logf("%d accepted, %d rejected", accepted, rejected)
	typical := &metav1.ObjectMeta{Name: "claim-00042", Namespace: "ns-07",
		Labels:      map[string]string{v1.LabelTopologyZone: "zone-a"},
		Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}}
	if !plainMetaValid(typical, true) {
		t.Fatal("a generated claim's metadata gets no verdict")
	}
}

// TestNodeSelectorValidMatchesFull checks nodeSelectorValid against
// validateNodeSelector on random selectors: they agree on every one.
func TestNodeSelectorValidMatchesFull(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	ops := []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
		v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt, "Near"}
	values := func() []string {
		return [][]string{nil, {"zone-a"}, {"1", "2"}, {"-bad"}, {"Node.1"}}[rng.IntN(5)]
	}
	valid := 0
	for range 20000 {
		s := &v1.NodeSelector{}
		for range rng.IntN(3) {
			var term v1.NodeSelectorTerm
			for range rng.IntN(3) {
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: []string{v1.LabelTopologyZone, "bad/key/x", ""}[rng.IntN(3)], Operator: ops[rng.IntN(len(ops))], Values: values()})
			}
			for range rng.IntN(2) {
				term.MatchFields = append(term.MatchFields, v1.NodeSelectorRequirement{
					Key: []string{"metadata.name", "spec.x"}[rng.IntN(2)], Operator: ops[rng.IntN(len(ops))], Values: values()})
			}
			s.NodeSelectorTerms = append(s.NodeSelectorTerms, term)
		}
		errs := validateNodeSelector(s, field.NewPath("required"))
		if got := nodeSelectorValid(s); got != (len(errs) == 0) {
			t.Fatalf("nodeSelectorValid(%+v) = %v; validateNodeSelector finds %v", s, got, errs)
		}
		if len(errs) == 0 {
			valid++
		}
	}
	if valid < 500 {
		t.Fatalf("only %d valid selectors drawn", valid)
	}
}

// BenchmarkFormatChecks measures a loop against the regular expression it
// replaces, on a volume's name.
func BenchmarkFormatChecks(b *testing.B) {
	name := "pv-000042"
	b.Run("check=loop", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !isDNS1123Subdomain(name, false) {
				b.Fatal("rejected")
			}
		}
	})
	b.Run("check=apimachinery", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(apivalidation.NameIsDNSSubdomain(name, false)) > 0 {
				b.Fatal("rejected")
			}
		}
	})
}
