package simulate

import (
	"fmt"
	"math/rand/v2"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/internal/manifest"
)

// scenario describes the generated cluster of "volbind simulate".
type scenario struct {
	Volumes    int     // PersistentVolumes
	Claims     int     // PersistentVolumeClaims
	Zones      int     // zones (zone-a, zone-b, …), one node each
	Classes    int     // storage classes
	Namespaces int     // namespaces the claims are spread over
	PreBound   float64 // fraction of claims pre-bound to their volume (volume side, or both sides)
	Unbindable float64 // fraction of claims no volume can satisfy
	Pods       int     // StatefulSet-shaped pods, one WaitForFirstConsumer claim each (scenario_pods.go)
	Nodes      int     // nodes with hostname-local volumes for the pods
	Seed       uint64
}

// defaultScenario is the cluster a newcomer's first command binds.
func defaultScenario() scenario {
	return scenario{
		Volumes:    10_000,
		Claims:     10_000,
		Zones:      3,
		Classes:    3,
		Namespaces: 20,
		PreBound:   0.05,
		Unbindable: 0.02,
		Nodes:      10,
		Seed:       1,
	}
}

func (s scenario) validate() error {
	switch {
	case s.Volumes < 0 || s.Claims < 0:
		return fmt.Errorf("scenario: -volumes (%d) and -claims (%d) must not be negative", s.Volumes, s.Claims)
	case s.Zones < 1 || s.Zones > 26:
		return fmt.Errorf("scenario: -zones must be within [1, 26], got %d", s.Zones)
	case s.Classes < 1:
		return fmt.Errorf("scenario: -classes must be at least 1, got %d", s.Classes)
	case s.Namespaces < 1:
		return fmt.Errorf("scenario: -namespaces must be at least 1, got %d", s.Namespaces)
	case !(s.PreBound >= 0 && s.PreBound <= 1) || !(s.Unbindable >= 0 && s.Unbindable <= 1):
		return fmt.Errorf("scenario: -prebound and -unbindable must be within [0, 1], got %v and %v", s.PreBound, s.Unbindable)
	case s.Pods < 0:
		return fmt.Errorf("scenario: -pods must not be negative, got %d", s.Pods)
	case s.Nodes < 1:
		return fmt.Errorf("scenario: -nodes must be at least 1, got %d", s.Nodes)
	}
	return nil
}

// Why a generated claim cannot be bound; each one leaves a different
// trace in the report.
const (
	// unbindableNoClass: storageClassName "" and no volume without class:
	// the Binder emits FailedBinding.
	unbindableNoClass = "no-class"
	// unbindableTooLarge: larger than any volume of its class: the Binder
	// leaves the claim to dynamic provisioning, without an event.
	unbindableTooLarge = "too-large"
	// unbindableTaken: asks by name for a volume pre-bound to another
	// claim: the Binder emits FailedBinding.
	unbindableTaken = "taken"
)

// expectation is what a generated scenario must end in.
type expectation struct {
	// Bindable is the number of claims that can be bound, pre-bound ones
	// included; every one of them has a volume of its own.
	Bindable int
	// Unbindable counts the other claims by the unbindable* reasons.
	Unbindable map[string]int
	// Pods is the number of generated pods; every one can be scheduled
	// and its claim bound.
	Pods int
}

// Realistic mixes: most volumes are small, ReadWriteOnce and of the first
// ("standard") class.
var (
	sizesGi = []int64{1, 2, 5, 8, 10, 20, 50, 100, 200, 500, 1024}
	// sizeWeights sums to 100.
	sizeWeights = []int{10, 10, 15, 10, 20, 12, 10, 6, 4, 2, 1}
	// classNames and classWeights (sum 100) for the first three classes;
	// further classes are as likely as "archive".
	classNames   = []string{"standard", "fast", "archive"}
	classWeights = []int{60, 30, 10}
)

func pickWeighted(r *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

func accessModes(r *rand.Rand) []v1.PersistentVolumeAccessMode {
	switch n := r.IntN(100); {
	case n < 80:
		return []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	case n < 92:
		return []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany}
	case n < 98:
		return []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
	default:
		return []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	}
}

func zoneName(i int) string { return fmt.Sprintf("zone-%c", 'a'+rune(i)) }

func className(i int) string {
	if i < len(classNames) {
		return classNames[i]
	}
	return fmt.Sprintf("class-%d", i)
}

func pickClass(r *rand.Rand, classes int) string {
	weights := make([]int, classes)
	for i := range weights {
		weights[i] = classWeights[min(i, len(classWeights)-1)]
	}
	return className(pickWeighted(r, weights))
}

func storage(bytes int64) v1.ResourceList {
	return v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(bytes, resource.BinarySI)}
}

// generatedParts hands out the maps and selectors that many generated
// objects have in common, one shared value per distinct content, so that a
// generated cluster of a million volumes does not hold a million equal
// maps. The in-memory API stores the generated objects themselves
// (bindertest.Config.AdoptSeeds) and sets only their own fields, never
// what they share.
type generatedParts struct {
	sizes    map[int64]v1.ResourceList
	labels   map[string]map[string]string
	affinity map[string]*v1.VolumeNodeAffinity
}

func newGeneratedParts() *generatedParts {
	return &generatedParts{sizes: map[int64]v1.ResourceList{}, labels: map[string]map[string]string{}, affinity: map[string]*v1.VolumeNodeAffinity{}}
}

// storage returns the shared ResourceList of bytes of storage.
func (p *generatedParts) storage(bytes int64) v1.ResourceList {
	l, ok := p.sizes[bytes]
	if !ok {
		l = storage(bytes)
		p.sizes[bytes] = l
	}
	return l
}

// zoneLabels returns the shared topology labels of zone.
func (p *generatedParts) zoneLabels(zone string) map[string]string {
	l, ok := p.labels[zone]
	if !ok {
		l = map[string]string{v1.LabelTopologyZone: zone, v1.LabelTopologyRegion: "region-1"}
		p.labels[zone] = l
	}
	return l
}

// zoneAffinity returns the shared node affinity that requires zone.
func (p *generatedParts) zoneAffinity(zone string) *v1.VolumeNodeAffinity {
	a, ok := p.affinity[zone]
	if !ok {
		a = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}}},
		}}}}
		p.affinity[zone] = a
	}
	return a
}

// generate builds the scenario's objects, the same for the same scenario.
// Every bindable claim is derived from a distinct volume (same class, same
// access modes, a request no larger than it), so a complete binding exists
// and Kubernetes' matching finds one whatever the order of the claims: it
// looks at the volumes with the fewest access modes first and takes the
// smallest that fits, and only claims with exactly those modes compete for
// them. Volumes left over stay Available.
func (s scenario) generate() (*manifest.Objects, expectation) {
	r := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	out := &manifest.Objects{}
	parts := newGeneratedParts()
	exp := expectation{Unbindable: map[string]int{}}
	immediate := storagev1.VolumeBindingImmediate
	for i := range s.Classes {
		out.Classes = append(out.Classes, &storagev1.StorageClass{
			ObjectMeta:        metav1.ObjectMeta{Name: className(i)},
			Provisioner:       "disk.csi.example.com",
			VolumeBindingMode: &immediate,
		})
	}
	for z := range s.Zones {
		out.Nodes = append(out.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   "node-" + zoneName(z),
			Labels: map[string]string{v1.LabelTopologyZone: zoneName(z), v1.LabelTopologyRegion: "region-1"},
		}})
	}
	for i := range s.Volumes {
		zone := zoneName(r.IntN(s.Zones))
		policy := v1.PersistentVolumeReclaimDelete
		if r.IntN(4) == 0 {
			policy = v1.PersistentVolumeReclaimRetain
		}
		out.Volumes = append(out.Volumes, &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{
				Name:   fmt.Sprintf("pv-%05d", i),
				Labels: parts.zoneLabels(zone),
			},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      parts.storage(sizesGi[pickWeighted(r, sizeWeights)] << 30),
				AccessModes:                   accessModes(r),
				StorageClassName:              pickClass(r, s.Classes),
				PersistentVolumeReclaimPolicy: policy,
				PersistentVolumeSource: v1.PersistentVolumeSource{
					CSI: &v1.CSIPersistentVolumeSource{Driver: "disk.csi.example.com", VolumeHandle: fmt.Sprintf("vol-%05d", i)},
				},
				NodeAffinity: parts.zoneAffinity(zone),
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		})
	}
	var preBoundVolumes []*v1.PersistentVolume // volumes whose claimRef names a claim
	namespaces := make([]string, s.Namespaces) // one string per namespace, shared by its claims
	for n := range namespaces {
		namespaces[n] = fmt.Sprintf("ns-%02d", n)
	}
	for i := range s.Claims {
		claim := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:      fmt.Sprintf("claim-%05d", i),
				Namespace: namespaces[i%s.Namespaces],
			},
			Spec:   v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
		}
		out.Claims = append(out.Claims, claim)
		if i >= len(out.Volumes) || r.Float64() < s.Unbindable {
			why := unbindableTooLarge
			switch n := r.IntN(3); {
			case n == 0:
				why = unbindableNoClass
			case n == 1 && len(preBoundVolumes) > 0:
				why = unbindableTaken
			}
			exp.Unbindable[why]++
			class := pickClass(r, s.Classes)
			claim.Spec.StorageClassName = &class
			claim.Spec.Resources.Requests = parts.storage(1 << 30)
			switch why {
			case unbindableNoClass:
				claim.Spec.StorageClassName = new(string)
			case unbindableTooLarge:
				claim.Spec.Resources.Requests = parts.storage(4 << 40) // the largest volume has 1 TiB
			case unbindableTaken:
				pv := preBoundVolumes[r.IntN(len(preBoundVolumes))]
				class = pv.Spec.StorageClassName
				claim.Spec.VolumeName = pv.Name
			}
			continue
		}
		exp.Bindable++
		pv := out.Volumes[i]
		class := pv.Spec.StorageClassName
		request := pv.Spec.Capacity.Storage().Value()
		if request > 1<<30 && r.IntN(2) == 0 {
			request -= request / 4 // asks for less than the volume holds
		}
		claim.Spec.StorageClassName = &class
		claim.Spec.AccessModes = slices.Clone(pv.Spec.AccessModes)
		claim.Spec.Resources.Requests = parts.storage(request)
		if r.Float64() < s.PreBound {
			// An administrator reserved the volume for the claim; half of
			// the users also named the volume in the claim.
			pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name}
			if r.IntN(2) == 0 {
				claim.Spec.VolumeName = pv.Name
			}
			preBoundVolumes = append(preBoundVolumes, pv)
		}
	}
	s.generatePods(out)
	exp.Pods = s.Pods
	return out, exp
}
