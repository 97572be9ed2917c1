//go:build e2e && linux

package suite

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// knownDifference is a difference between volbind's and
// kube-controller-manager's final objects that is deliberate; the binder
// package documentation lists it with the reason.
type knownDifference struct {
	// tc, checkpoint and object are "" for any.
	tc, checkpoint, object string
	// field is the field path (exact).
	field string
	why   string
}

// knownDifferences are the deliberate differences; any other fails
// TestExternalProvisioner.
var knownDifferences = []knownDifference{}

func (k knownDifference) matches(d difference) bool {
	return (k.tc == "" || k.tc == d.tc) && (k.checkpoint == "" || k.checkpoint == d.checkpoint) &&
		(k.object == "" || k.object == d.object) && k.field == d.field
}

// TestExternalProvisioner runs every case against each binder's cluster
// (the binders at once, the cases of one binder one after another), then
// compares the checkpoints of volbind with kube-controller-manager's field
// by field.
func TestExternalProvisioner(t *testing.T) {
	var bin string
	if clusters["volbind"] != nil {
		bin = buildVolbind(t)
	}
	setups := setUpCases(t, binders())
	t.Run("binders", func(t *testing.T) {
		for _, name := range binders() {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				b := newBinder(t, name, clusters[name], bin)
				for i, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						tc.run(newEnv(t, b, setups[name][i]))
					})
				}
			})
		}
	})
	if t.Failed() || clusters["volbind"] == nil || clusters["kcm"] == nil {
		return
	}
	diffs, compared := recorded.compare()
	var table strings.Builder
	fmt.Fprintf(&table, "Run of %s: fields compared per case (claims, volumes, events at each checkpoint) and how many differ.\n\n", timestamp())
	table.WriteString("| case | fields compared | differences |\n| --- | ---: | ---: |\n")
	for _, tc := range cases {
		n := 0
		for _, d := range diffs {
			if d.tc == tc.name {
				n++
			}
		}
		fmt.Fprintf(&table, "| %s | %d | %d |\n", tc.name, compared[tc.name], n)
		if compared[tc.name] == 0 {
			t.Errorf("case %s: no field compared", tc.name)
		}
	}
	table.WriteString("\n| case | checkpoint | object | field | volbind | kube-controller-manager | why |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, d := range diffs {
		why := ""
		for _, k := range knownDifferences {
			if k.matches(d) {
				why = k.why
				break
			}
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s | %s | %s | %s |\n", d.tc, d.checkpoint, cell(d.object), cell(d.field), cell(d.volbind), cell(d.kcm), why)
		if why == "" {
			t.Errorf("%s/%s: %s %s: volbind %s, kube-controller-manager %s", d.tc, d.checkpoint, d.object, d.field, d.volbind, d.kcm)
		}
	}
	t.Logf("comparison:\n%s", table.String())
	if out := os.Getenv("VOLBIND_E2E_COMPARISON"); out != "" {
		if err := os.WriteFile(out, []byte(table.String()), 0o644); err != nil {
			t.Errorf("write %s: %v", out, err)
		}
	}
}

// cell escapes a value for a Markdown table cell.
func cell(s string) string { return "`" + strings.ReplaceAll(s, "|", `\|`) + "`" }
