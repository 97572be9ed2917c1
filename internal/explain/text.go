package explain

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteClaimText writes x for a terminal: the verdict and why, then the
// candidate volumes as a table and the count of the others by rule.
func WriteClaimText(w io.Writer, x *ClaimExplanation) error {
	tw := &errWriter{w: w}
	tw.printf("PersistentVolumeClaim %s (%s)\n", x.Claim, claimFacts(x))
	writeVerdict(tw, x, "")
	switch {
	case len(x.Candidates) > 0:
		tw.printf("\n")
		writeCandidates(tw, x.Candidates, x.More, candidatesTitle(x), "")
	case len(x.More) > 0:
		of := "without class"
		if x.StorageClass != "" {
			of = fmt.Sprintf("of class %q", x.StorageClass)
		}
		tw.printf("\nNo volume %s (%s).\n", of, strings.TrimPrefix(moreText(x.More), thousands(x.Volumes)+" more: "))
	}
	return tw.err
}

func claimFacts(x *ClaimExplanation) string {
	phase := x.Phase
	if phase == "" {
		phase = "no phase"
	}
	modes := strings.Join(x.AccessModes, ",")
	if modes == "" {
		modes = "no access modes"
	}
	facts := []string{phase, "request " + x.Request, modes, x.VolumeMode}
	class := "no storage class"
	if x.DefaultClass != "" {
		class = fmt.Sprintf("no storage class, default %q", x.DefaultClass)
	} else if x.StorageClass != "" {
		class = fmt.Sprintf("class %q", x.StorageClass)
	}
	facts = append(facts, class)
	if x.BindingMode != "" {
		facts = append(facts, x.BindingMode)
	}
	return strings.Join(facts, ", ")
}

// writeVerdict writes the verdict lines of a claim, each line prefixed
// with indent.
func writeVerdict(w *errWriter, x *ClaimExplanation, indent string) {
	w.printf("%sVerdict: %s\n", indent, x.Summary)
	if x.Reason != "" {
		w.printf("%s  Why: %s\n", indent, x.Reason)
	}
	if p := x.Provisioner; p != nil && x.Verdict != WillProvision {
		w.printf("%s  Provisioner: %s\n", indent, provisionerText(p))
	}
	if len(x.Contenders) > 0 {
		w.printf("%s  Contended: %s fits pending claim(s) %s too; whichever is bound first takes it\n",
			indent, x.Volume, strings.Join(x.Contenders, ", "))
	}
	for _, a := range x.Alternatives {
		w.printf("%s  May instead take %s: %s\n", indent, a.Volume, a.Reason)
	}
	for _, c := range x.Consumers {
		where := "not scheduled"
		if c.Node != "" {
			where = "on node " + c.Node
		}
		w.printf("%s  Used by: pod %s (%s)\n", indent, c.Pod, where)
	}
}

func provisionerText(p *Provisioner) string {
	if p.Kind == Migrated {
		return fmt.Sprintf("%s (in-tree %s, migrated to CSI)", p.CSIDriver, p.Name)
	}
	return fmt.Sprintf("%s (%s)", p.Name, p.Kind)
}

func candidatesTitle(x *ClaimExplanation) string {
	search := "as the PV controller matches them"
	if x.Search == SchedulerSearch {
		search = "as kube-scheduler matches them"
		if x.Node != "" {
			search += " on node " + x.Node
		} else {
			search += ", on any node"
		}
	}
	of := "without class"
	if x.StorageClass != "" {
		of = fmt.Sprintf("of class %q", x.StorageClass)
	}
	return fmt.Sprintf("Volumes %s, closest first (%s):", of, search)
}

// writeCandidates writes the candidates as a table and the others as
// counts by rule.
func writeCandidates(w *errWriter, cs []Candidate, more []RuleCount, title, indent string) {
	if title != "" {
		w.printf("%s%s\n", indent, title)
	}
	if len(cs) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "%s  VOLUME\tCAPACITY\tMODES\tCLASS\tRULE\tDETAIL\n", indent)
		for _, c := range cs {
			modes := strings.Join(c.AccessModes, ",")
			if modes == "" {
				modes = "-"
			}
			class := c.StorageClass
			if class == "" {
				class = "-"
			}
			fmt.Fprintf(tw, "%s  %s\t%s\t%s\t%s\t%s\t%s\n", indent, c.Volume, c.Capacity, modes, class, c.Rule.Text(), c.Detail)
		}
		if err := tw.Flush(); err != nil && w.err == nil {
			w.err = err
		}
	}
	if text := moreText(more); text != "" {
		w.printf("%s  %s\n", indent, text)
	}
}

// moreText writes "1,199 more: 3 fit, 1,100 storage class, ...".
func moreText(more []RuleCount) string {
	total := 0
	parts := make([]string, 0, len(more))
	for _, m := range more {
		total += m.Count
		text := m.Rule.Text()
		if m.Rule == StorageClass {
			text = "of another class"
		}
		parts = append(parts, thousands(m.Count)+" "+text)
	}
	if total == 0 {
		return ""
	}
	return thousands(total) + " more: " + strings.Join(parts, ", ")
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	w.err = err
	return n, err
}

func (w *errWriter) printf(format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}
