package explain

import (
	"cmp"
	"slices"
	"strings"
)

// DefaultMax is how many candidate volumes an explanation lists when
// ClaimOptions.Max is zero.
const DefaultMax = 10

// ranked is one volume of a scan with its place in the order.
type ranked struct {
	v    *volumeInfo
	rule Rule
	// key orders volumes, smallest first: tier (0 chosen, 1 fits, then
	// the later the failed rule the lower), then two tie-breaks.
	key [3]int64
}

func compareRanked(a, b *ranked) int {
	for i := range a.key {
		if c := cmp.Compare(a.key[i], b.key[i]); c != 0 {
			return c
		}
	}
	return strings.Compare(a.v.pv.Name, b.v.pv.Name)
}

// scan passes over every volume once for a claim: it checks each against
// the matcher, keeps the max closest (all when max < 0) and counts the
// rest by rule. It allocates only for the volumes it keeps.
type scan struct {
	m      *matcher
	chosen string // the chosen volume's name, "" for none
	max    int
	top    []ranked
	// counts counts every volume added, kept or not, by rule.
	counts [numRules]int
	// exclude names volumes chosen for other claims of the same pod:
	// they fit, but are taken.
	exclude map[string]string
	// watch, when set, sees every volume with the rule it fails (to find
	// volumes that may become candidates).
	watch func(v *volumeInfo, rule Rule)
}

func (s *scan) run(volumes []volumeInfo) {
	for i := range volumes {
		s.add(&volumes[i])
	}
	s.finish()
}

// add checks one volume, counts it and keeps it if it is among the max
// closest so far.
func (s *scan) add(v *volumeInfo) { s.addChecked(v, s.m.check(v)) }

// addChecked is add for a volume whose first failing rule is known.
func (s *scan) addChecked(v *volumeInfo, rule Rule) {
	s.counts[rule]++
	if s.watch != nil {
		s.watch(v, rule)
	}
	if rule == StorageClass && !s.m.preboundTo(v) {
		return // the candidates are the claim's class; others are only counted
	}
	r := ranked{v: v, rule: rule}
	r.key[0] = s.tier(v, rule)
	if s.max >= 0 && len(s.top) == s.max && (s.max == 0 || r.key[0] > s.top[s.max-1].key[0]) {
		return // cannot make the list: skip the tie-breaks
	}
	r.key[1], r.key[2] = s.tieBreaks(v, rule)
	s.keep(r)
}

// finish orders what was kept; only needed when max < 0.
func (s *scan) finish() {
	if s.max < 0 {
		slices.SortFunc(s.top, func(a, b ranked) int { return compareRanked(&a, &b) })
	}
}

// tier is the first part of a volume's key.
func (s *scan) tier(v *volumeInfo, rule Rule) int64 {
	switch {
	case rule == Fits && v.pv.Name == s.chosen:
		return 0
	case rule == Fits:
		return 1
	}
	return 2 + int64(NodeAffinity-rule)
}

// tieBreaks order volumes of one tier: volumes that fit in the order the
// search prefers them (the PV controller: access-mode set, then a volume
// pre-bound to the claim, then size; kube-scheduler: pre-bound, then
// size), others by their distance from the request.
func (s *scan) tieBreaks(v *volumeInfo, rule Rule) (int64, int64) {
	if rule != Fits {
		return s.m.distance(v), 0
	}
	pre := int64(1)
	if s.m.preboundTo(v) {
		pre = 0
	}
	if s.m.scheduler {
		return pre, v.bytes
	}
	return int64(v.modes.Rank())*2 + pre, v.bytes
}

// keep inserts r into top, in order, dropping the last beyond max.
func (s *scan) keep(r ranked) {
	if s.max < 0 {
		s.top = append(s.top, r)
		return
	}
	i, _ := slices.BinarySearchFunc(s.top, r, func(e, t ranked) int { return compareRanked(&e, &t) })
	if i >= s.max {
		return
	}
	if len(s.top) == s.max {
		s.top = s.top[:s.max-1]
	}
	s.top = slices.Insert(s.top, i, r)
}

// more returns the counts of the volumes not kept, by rule, in rule order.
func (s *scan) more() []RuleCount {
	counts := s.counts
	for i := range s.top {
		counts[s.top[i].rule]--
	}
	var out []RuleCount
	for r, n := range counts {
		if n > 0 {
			out = append(out, RuleCount{Rule: Rule(r), Count: n})
		}
	}
	return out
}

// candidates turns the kept volumes into Candidates with their details.
func (s *scan) candidates(d *detailer) []Candidate {
	out := make([]Candidate, 0, len(s.top))
	for i := range s.top {
		r := &s.top[i]
		c := Candidate{
			Volume:       r.v.pv.Name,
			Capacity:     r.v.capacityText(),
			AccessModes:  modeNames(r.v.pv.Spec.AccessModes),
			StorageClass: r.v.class,
			Chosen:       r.v.pv.Name == s.chosen && r.rule == Fits,
			Rule:         r.rule,
		}
		if r.rule == Fits {
			c.Detail = d.fitDetail(r.v, s)
		} else {
			c.Detail = d.ruleDetail(r.v, r.rule)
		}
		out = append(out, c)
	}
	return out
}
