package pvindex

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// refModeNames are the short names Kubernetes uses in its access-mode index
// keys, in the order it writes them.
var refModeNames = []struct {
	mode  v1.PersistentVolumeAccessMode
	short string
}{
	{v1.ReadWriteOnce, "RWO"},
	{v1.ReadOnlyMany, "ROX"},
	{v1.ReadWriteMany, "RWX"},
	{v1.ReadWriteOncePod, "RWOP"},
}

// refModesKey is the key of the PV controller's access-mode index: the
// volume's known modes as "RWO,ROX,...", unknown modes dropped.
func refModesKey(modes []v1.PersistentVolumeAccessMode) string {
	var parts []string
	for _, m := range refModeNames {
		if slices.Contains(modes, m.mode) {
			parts = append(parts, m.short)
		}
	}
	return strings.Join(parts, ",")
}

// refModesFromKey parses an index key back into modes.
func refModesFromKey(key string) []v1.PersistentVolumeAccessMode {
	var modes []v1.PersistentVolumeAccessMode
	for _, s := range strings.Split(key, ",") {
		for _, m := range refModeNames {
			if s == m.short {
				modes = append(modes, m.mode)
			}
		}
	}
	return modes
}

// refWeight orders access-mode sets of equal size as the Index documents
// (Kubernetes leaves that order to a sort over a map's keys).
func refWeight(modes []v1.PersistentVolumeAccessMode) int {
	w := 0
	for i, m := range refModeNames {
		if slices.Contains(modes, m.mode) {
			w |= 1 << i
		}
	}
	return w
}

// refSets is the PV controller's access-mode grouping of volumes: the sets
// that contain every requested mode, fewest modes first, each with its
// volumes in the order of vols.
func refSets(claim *v1.PersistentVolumeClaim, vols []*v1.PersistentVolume) [][]*v1.PersistentVolume {
	byKey := map[string][]*v1.PersistentVolume{}
	for _, pv := range vols {
		k := refModesKey(pv.Spec.AccessModes)
		byKey[k] = append(byKey[k], pv)
	}
	var keys []string
	for k := range byKey {
		indexed := refModesFromKey(k)
		all := true
		for _, m := range claim.Spec.AccessModes {
			if !slices.Contains(indexed, m) {
				all = false
			}
		}
		if all {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		ma, mb := refModesFromKey(a), refModesFromKey(b)
		if d := len(ma) - len(mb); d != 0 {
			return d
		}
		return refWeight(ma) - refWeight(mb)
	})
	sets := make([][]*v1.PersistentVolume, len(keys))
	for i, k := range keys {
		sets[i] = byKey[k]
	}
	return sets
}

// refLists is what FindMatchingVolume is called on: the PV controller's
// access-mode sets, or, for SchedulerSearch, once on the volumes of the
// claim's class (kube-scheduler's PV cache index).
func refLists(claim *v1.PersistentVolumeClaim, vols []*v1.PersistentVolume, opts FindOptions) [][]*v1.PersistentVolume {
	if !opts.SchedulerSearch {
		return refSets(claim, vols)
	}
	class := volume.GetPersistentVolumeClaimClass(claim)
	var list []*v1.PersistentVolume
	for _, pv := range vols {
		if volume.GetPersistentVolumeClass(pv) == class {
			list = append(list, pv)
		}
	}
	return [][]*v1.PersistentVolume{list}
}

// reference is findBestMatchForClaim (or the scheduler's search) built from component-helpers'
// FindMatchingVolume: search the sets in order, the first with a match wins.
// It also returns the set that answered, for checking ties.
func reference(claim *v1.PersistentVolumeClaim, vols []*v1.PersistentVolume, opts FindOptions) (*v1.PersistentVolume, []*v1.PersistentVolume, error) {
	var excluded map[string]*v1.PersistentVolume
	for name, ex := range opts.Exclude {
		if ex {
			if excluded == nil {
				excluded = map[string]*v1.PersistentVolume{}
			}
			excluded[name] = nil
		}
	}
	for _, set := range refLists(claim, vols, opts) {
		pv, err := volume.FindMatchingVolume(claim, set, opts.Node, excluded, opts.DelayBinding, true)
		if err != nil {
			return nil, nil, err
		}
		if pv != nil {
			return pv, set, nil
		}
	}
	return nil, nil, nil
}

// gen builds random clusters and claims from one seeded source.
type gen struct {
	rng *rand.Rand
}

func (g *gen) pick(n int) int { return g.rng.IntN(n) }

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

var (
	genClasses = []string{"", "gold", "silver"}
	genSizes   = []string{"1Gi", "1073741824", "1024Mi", "2Gi", "3Gi", "5Gi", "5G", "10Gi", "1500m", "100Gi", "0"}
	genModes   = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany, v1.ReadWriteOncePod}
)

func (g *gen) modes() []v1.PersistentVolumeAccessMode {
	var out []v1.PersistentVolumeAccessMode
	for _, m := range genModes {
		if g.chance(0.35) {
			out = append(out, m)
		}
	}
	if len(out) == 0 && g.chance(0.8) {
		out = append(out, genModes[g.pick(len(genModes))])
	}
	if len(out) > 0 && g.chance(0.05) {
		out = append(out, out[0]) // a duplicate
	}
	if g.chance(0.02) {
		out = append(out, "Bogus")
	}
	g.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func (g *gen) volumeMode() *v1.PersistentVolumeMode {
	switch g.pick(6) {
	case 0:
		return ptr.To(v1.PersistentVolumeBlock)
	case 1:
		return ptr.To(v1.PersistentVolumeFilesystem)
	case 2:
		if g.chance(0.1) {
			return ptr.To(v1.PersistentVolumeMode("Odd"))
		}
	}
	return nil
}

func (g *gen) vac() *string {
	switch g.pick(10) {
	case 0:
		return ptr.To("vac-a")
	case 1:
		return ptr.To("")
	}
	return nil
}

func (g *gen) size() v1.ResourceList {
	if g.chance(0.02) {
		return nil
	}
	return v1.ResourceList{v1.ResourceStorage: resource.MustParse(genSizes[g.pick(len(genSizes))])}
}

func (g *gen) affinity() *v1.VolumeNodeAffinity {
	switch g.pick(8) {
	case 0, 1, 2:
		return nil
	case 3:
		switch g.pick(3) {
		case 0:
			return &v1.VolumeNodeAffinity{}
		case 1:
			return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{}} // no term: fits no node
		}
		return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{}}}}
	}
	var terms []v1.NodeSelectorTerm
	for range 1 + g.pick(2) {
		var term v1.NodeSelectorTerm
		switch g.pick(10) {
		case 0:
			term.MatchExpressions = []v1.NodeSelectorRequirement{{Key: "zone", Operator: "Bogus", Values: []string{"z1"}}}
		case 1:
			term.MatchFields = []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"node-1"}}}
		case 2:
			term.MatchExpressions = []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpNotIn, Values: []string{"z1"}}}
		default:
			zones := []string{fmt.Sprintf("z%d", g.pick(3))}
			if g.chance(0.3) {
				zones = append(zones, fmt.Sprintf("z%d", g.pick(3)))
			}
			term.MatchExpressions = []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: zones}}
		}
		terms = append(terms, term)
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: terms}}
}

// claimNames are few, so that volumes are often pre-bound or bound to a
// claim under test.
var claimNames = []claimKey{{"ns", "c0"}, {"ns", "c1"}, {"ns", "c2"}, {"other", "c0"}}

func claimUID(k claimKey) types.UID { return types.UID("uid-" + k.namespace + "-" + k.name) }

func (g *gen) volume(i int) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("pv-%03d", i),
			Labels: map[string]string{"tier": []string{"a", "b", "c"}[g.pick(3)]},
		},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                  g.size(),
			AccessModes:               g.modes(),
			StorageClassName:          genClasses[g.pick(len(genClasses))],
			VolumeMode:                g.volumeMode(),
			VolumeAttributesClassName: g.vac(),
			NodeAffinity:              g.affinity(),
		},
		Status: g.status(),
	}
	if g.chance(0.05) {
		pv.Annotations = map[string]string{v1.BetaStorageClassAnnotation: genClasses[g.pick(len(genClasses))]}
	}
	if g.chance(0.05) {
		pv.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	}
	switch g.pick(10) {
	case 0: // pre-bound by the user: no UID
		k := claimNames[g.pick(len(claimNames))]
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: k.namespace, Name: k.name}
	case 1: // bound to this claim
		k := claimNames[g.pick(len(claimNames))]
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: k.namespace, Name: k.name, UID: claimUID(k)}
	case 2: // bound to an earlier claim of the same name
		k := claimNames[g.pick(len(claimNames))]
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: k.namespace, Name: k.name, UID: "uid-old"}
	case 3: // bound elsewhere
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "elsewhere", UID: "uid-x"}
	}
	return pv
}

// status draws a phase, mostly Available.
func (g *gen) status() v1.PersistentVolumeStatus {
	phases := []v1.PersistentVolumePhase{v1.VolumePending, v1.VolumeBound, v1.VolumeReleased, v1.VolumeFailed, ""}
	if g.chance(0.75) {
		return v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable}
	}
	return v1.PersistentVolumeStatus{Phase: phases[g.pick(len(phases))]}
}

func (g *gen) claim() *v1.PersistentVolumeClaim {
	k := claimNames[g.pick(len(claimNames))]
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.namespace, Name: k.name, UID: claimUID(k)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:               g.modes(),
			VolumeMode:                g.volumeMode(),
			VolumeAttributesClassName: g.vac(),
			Resources:                 v1.VolumeResourceRequirements{Requests: g.size()},
		},
	}
	if g.chance(0.3) {
		c.UID = "uid-new" // a re-created claim: volumes bound to the old UID are not its
	}
	switch g.pick(4) {
	case 0:
	case 1:
		c.Spec.StorageClassName = ptr.To("")
	default:
		c.Spec.StorageClassName = ptr.To(genClasses[g.pick(len(genClasses))])
	}
	if g.chance(0.05) {
		c.Annotations = map[string]string{v1.BetaStorageClassAnnotation: genClasses[g.pick(len(genClasses))]}
	}
	switch g.pick(8) {
	case 0:
		c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "a"}}
	case 1:
		c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"c"}},
		}}
	case 2:
		if g.chance(0.1) {
			c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: "Bogus"},
			}}
		} else {
			c.Spec.Selector = &metav1.LabelSelector{}
		}
	}
	return c
}

func (g *gen) options(vols []*v1.PersistentVolume) FindOptions {
	var o FindOptions
	o.DelayBinding = g.chance(0.3)
	o.SchedulerSearch = g.chance(0.3)
	if g.chance(0.4) {
		o.Node = &v1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   "node-1",
			Labels: map[string]string{"zone": fmt.Sprintf("z%d", g.pick(3))},
		}}
	}
	if len(vols) > 0 && g.chance(0.2) {
		o.Exclude = map[string]bool{}
		for range 1 + g.pick(4) {
			o.Exclude[vols[g.pick(len(vols))].Name] = g.chance(0.9)
		}
	}
	return o
}

// TestFindBestMatchDifferential compares FindBestMatch with the reference on
// thousands of random clusters. The reference lists volumes by name, the
// order the Index documents for ties, so answers must agree exactly; in a
// second pass the reference sees the volumes in random order (as Kubernetes'
// informer cache may list them) and the answers may differ only among
// equal-capacity candidates of the same access-mode set.
//
// With Options.UnmarkedCandidates the reference sees every volume whose
// phase is empty or Pending as Available: the Index must then answer as
// Kubernetes would once the PV controller had marked those volumes.
//
// With colliding claim hashes (collide=true) every claim has the same one,
// so the Index must tell pre-bound and bound volumes apart by their
// claimRefs alone.
func TestFindBestMatchDifferential(t *testing.T) {
	for _, unmarked := range []bool{false, true} {
		for _, collide := range []bool{false, true} {
			t.Run(fmt.Sprintf("unmarked=%t/collide=%t", unmarked, collide), func(t *testing.T) { testDifferential(t, unmarked, collide) })
		}
	}
}

// markedAvailable returns vols with every volume whose phase is empty or
// Pending replaced by a copy marked Available.
func markedAvailable(vols []*v1.PersistentVolume) []*v1.PersistentVolume {
	out := make([]*v1.PersistentVolume, len(vols))
	for i, pv := range vols {
		out[i] = pv
		if pv.Status.Phase == "" || pv.Status.Phase == v1.VolumePending {
			c := pv.DeepCopy()
			c.Status.Phase = v1.VolumeAvailable
			out[i] = c
		}
	}
	return out
}

func testDifferential(t *testing.T, unmarked, collide bool) {
	seed := testSeed(t)
	g := &gen{rng: rand.New(rand.NewPCG(seed, 5))}
	clusters, claimsPer := 3000, 8
	if raceEnabled {
		clusters = 500
	}
	var finds, matched, errs, shuffledTies, unmarkedWins int
	for cl := range clusters {
		ix := NewWithOptions(Options{UnmarkedCandidates: unmarked})
		if collide {
			colliding(ix)
		}
		n := g.pick(60)
		vols := make([]*v1.PersistentVolume, 0, n)
		for i := range n {
			if g.chance(0.2) {
				ix.Upsert(g.volume(i)) // an earlier version, replaced below
			}
			vols = append(vols, g.volume(i))
		}
		for _, i := range g.rng.Perm(n) {
			ix.Upsert(vols[i])
		}
		for i := range 1 + g.pick(3) { // volumes that come and go
			extra := g.volume(n + i)
			ix.Upsert(extra)
			ix.Delete(extra.Name)
		}
		if ix.Len() != n {
			t.Fatalf("cluster %d: Len() = %d, want %d", cl, ix.Len(), n)
		}
		refVols := vols
		if unmarked {
			refVols = markedAvailable(vols)
		}
		shuffled := slices.Clone(refVols)
		g.rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for range claimsPer {
			claim := g.claim()
			opts := g.options(vols)
			finds++
			got, err := ix.FindBestMatch(claim, opts)
			want, _, wantErr := reference(claim, refVols, opts)
			if (err != nil) != (wantErr != nil) || err != nil && !errors.Is(err, ErrInvalidClaim) {
				t.Fatalf("cluster %d: FindBestMatch(%s) error = %v, reference error = %v\n%s", cl, describeClaim(claim), err, wantErr, describe(vols, opts))
			}
			if err != nil {
				errs++
				continue
			}
			if name(got) != name(want) {
				t.Fatalf("cluster %d: FindBestMatch(%s) = %s, reference = %s\n%s", cl, describeClaim(claim), name(got), name(want), describe(vols, opts))
			}
			if got != nil {
				matched++
				if p := got.Status.Phase; p == "" || p == v1.VolumePending {
					unmarkedWins++
				}
			}
			// Kubernetes' own order: ties may differ. Several volumes
			// pre-bound to the claim in one set are a tie of another kind
			// (the first listed decides); those are skipped here.
			if preboundTwice(claim, vols, opts) {
				continue
			}
			other, set, _ := reference(claim, shuffled, opts)
			if name(other) == name(got) {
				continue
			}
			if !equalCapacityCandidate(claim, want, other, set, opts) {
				t.Fatalf("cluster %d: FindBestMatch(%s) = %s, reference on shuffled volumes = %s, not an equal-capacity tie\n%s",
					cl, describeClaim(claim), name(got), name(other), describe(vols, opts))
			}
			shuffledTies++
		}
	}
	t.Logf("%d clusters, %d finds: %d matched (%d to volumes not marked Available), %d invalid claims; %d ties broken differently by the shuffled reference",
		clusters, finds, matched, unmarkedWins, errs, shuffledTies)
	if matched < finds/10 || errs == 0 || shuffledTies == 0 {
		t.Errorf("generator too weak: %d of %d finds matched, %d errors, %d ties", matched, finds, errs, shuffledTies)
	}
	// Only pre-bound volumes may be returned unmarked by Kubernetes' rule;
	// with UnmarkedCandidates, unbound unmarked volumes must win too.
	if unmarked && unmarkedWins < matched/20 {
		t.Errorf("generator too weak: %d of %d matches are volumes not marked Available", unmarkedWins, matched)
	}
}

// equalCapacityCandidate reports whether got and other are both volumes of
// the same capacity that FindMatchingVolume accepts on their own from the
// access-mode set that answered for other, and neither is pre-bound to the
// claim (a pre-bound volume is never a tie).
func equalCapacityCandidate(claim *v1.PersistentVolumeClaim, got, other *v1.PersistentVolume, set []*v1.PersistentVolume, opts FindOptions) bool {
	if got == nil || other == nil || !slices.Contains(set, got) {
		return false
	}
	if volume.IsVolumeBoundToClaim(got, claim) || volume.IsVolumeBoundToClaim(other, claim) {
		return false
	}
	a, b := got.Spec.Capacity[v1.ResourceStorage], other.Spec.Capacity[v1.ResourceStorage]
	if a.Cmp(b) != 0 {
		return false
	}
	alone, _, err := reference(claim, []*v1.PersistentVolume{got}, opts)
	return err == nil && alone == got
}

// preboundTwice reports whether an access-mode set holds more than one
// volume pre-bound or bound to the claim.
func preboundTwice(claim *v1.PersistentVolumeClaim, vols []*v1.PersistentVolume, opts FindOptions) bool {
	for _, set := range refLists(claim, vols, opts) {
		n := 0
		for _, pv := range set {
			if volume.IsVolumeBoundToClaim(pv, claim) {
				n++
			}
		}
		if n > 1 {
			return true
		}
	}
	return false
}

func name(pv *v1.PersistentVolume) string {
	if pv == nil {
		return "<none>"
	}
	return pv.Name
}

func describeClaim(c *v1.PersistentVolumeClaim) string {
	return fmt.Sprintf("%s/%s uid=%s class=%q beta=%v modes=%v vmode=%v vac=%v request=%v selector=%v",
		c.Namespace, c.Name, c.UID, ptr.Deref(c.Spec.StorageClassName, "<nil>"), c.Annotations, c.Spec.AccessModes,
		ptr.Deref(c.Spec.VolumeMode, "<nil>"), ptr.Deref(c.Spec.VolumeAttributesClassName, "<nil>"),
		c.Spec.Resources.Requests.Storage(), metav1.FormatLabelSelector(c.Spec.Selector))
}

func describe(vols []*v1.PersistentVolume, opts FindOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "options: delay=%v node=%v scheduler=%v exclude=%v\n", opts.DelayBinding, opts.Node != nil, opts.SchedulerSearch, opts.Exclude)
	if opts.Node != nil {
		fmt.Fprintf(&b, "node labels: %v\n", opts.Node.Labels)
	}
	for _, pv := range vols {
		ref := "-"
		if r := pv.Spec.ClaimRef; r != nil {
			ref = fmt.Sprintf("%s/%s[%s]", r.Namespace, r.Name, r.UID)
		}
		fmt.Fprintf(&b, "  %s cap=%v modes=%s(%d) class=%q beta=%v vmode=%v vac=%v phase=%s deleting=%v claim=%s labels=%v affinity=%v\n",
			pv.Name, pv.Spec.Capacity.Storage(), refModesKey(pv.Spec.AccessModes), bits.OnesCount(uint(refWeight(pv.Spec.AccessModes))),
			pv.Spec.StorageClassName, pv.Annotations, ptr.Deref(pv.Spec.VolumeMode, "<nil>"),
			ptr.Deref(pv.Spec.VolumeAttributesClassName, "<nil>"), pv.Status.Phase, pv.DeletionTimestamp != nil, ref,
			pv.Labels, pv.Spec.NodeAffinity)
	}
	return b.String()
}
