package explain

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/pvindex"
)

// Errors, matched with errors.Is.
var (
	// ErrNotFound reports a claim, pod or node that is not among the
	// Objects.
	ErrNotFound = errors.New("explain: not found")
	// ErrInvalidInput reports Objects that cannot be explained: a nil
	// object, an object without a name, or two objects of one kind with
	// the same name.
	ErrInvalidInput = errors.New("explain: invalid input")
)

// Objects are what an explanation reads: the cluster's objects as the API
// server returns them (defaults applied). They are shared with the
// Explainer: do not mutate them afterwards. Nodes, Pods, CSIDrivers and
// Capacities are needed only for pod explanations and a claim's consumers.
type Objects struct {
	Volumes    []*v1.PersistentVolume
	Claims     []*v1.PersistentVolumeClaim
	Classes    []*storagev1.StorageClass
	Nodes      []*v1.Node
	Pods       []*v1.Pod
	CSIDrivers []*storagev1.CSIDriver
	Capacities []*storagev1.CSIStorageCapacity
	// CSINodes say which in-tree plugins each node has migrated to CSI
	// (storage.alpha.kubernetes.io/migrated-plugins): kube-scheduler
	// checks a bound in-tree volume's node affinity translated to its CSI
	// driver on such a node.
	CSINodes []*storagev1.CSINode
}

// Config describes the controller whose decisions are explained. The zero
// value is kube-controller-manager's PV controller of Kubernetes v1.37:
// only Available volumes are bound to claims that do not name them,
// dynamic provisioning is on and released Recycle volumes are scrubbed.
// `volbind controller` is UnmarkedCandidates (its --available-delay),
// NoProvisioning and ClaimedFirst.
type Config struct {
	// ClaimedFirst is a binder.Binder: a volume whose claimRef names the
	// claim by UID is the claim's before any search (the first by name, if
	// it still fits the claim), so that a binding it began is completed.
	// kube-controller-manager searches the access-mode sets, fewest modes
	// first, and finds such a volume only when it gets to its set.
	ClaimedFirst bool
	// UnmarkedCandidates is binder.Config.AvailableDelay > 0: unbound
	// volumes whose phase is still empty or Pending are bound like
	// Available ones.
	UnmarkedCandidates bool
	// NoProvisioning is binder.Config.Provisioning == nil: claims that no
	// volume fits stay Pending, untouched.
	NoProvisioning bool
	// NoRecycling says that released volumes with reclaim policy Recycle
	// are not scrubbed (binder.ReclaimConfig.Recycler is nil, `volbind
	// controller --recycler=false`), so they never become Available again.
	NoRecycling bool
	// InTreeProvisioners are the provisioner names the controller
	// provisions with itself (binder.ProvisioningConfig.Provisioners).
	// Other names are external, except "kubernetes.io/" names, which no
	// plugin serves unless listed here or migrated. Not modified.
	InTreeProvisioners []string
	// CSIMigration says which in-tree plugins are migrated to CSI. Nil
	// means binder.TranslationLibMigration{}, as in binder.Config.
	CSIMigration binder.CSIMigration
}

// Explainer answers why claims and pods wait. Build it once with New; its
// methods are safe for concurrent use and never modify the Objects.
type Explainer struct {
	cfg Config

	// volumes are sorted by name; volumeByName indexes them.
	volumes      []volumeInfo
	volumeByName map[string]*volumeInfo
	// index holds the valid volumes, as the Binder's store does.
	index *pvindex.Index
	// claimedBy lists, by claim, the valid volumes whose claimRef names
	// it, in name order.
	claimedBy map[claimName][]*volumeInfo
	// rolledFor lists, by claim key, the volumes whose binding to the
	// claim its next sync rolls back (volumeInfo.rolledBack).
	rolledFor map[string]map[string]bool

	claims map[claimName]*v1.PersistentVolumeClaim
	// pending are the claims that have not completed binding and name no
	// volume, sorted by key: the claims that may take any volume.
	pending []*v1.PersistentVolumeClaim
	// naming lists, by volume name, the claims whose spec.volumeName names
	// the volume, sorted by key.
	naming map[string][]*v1.PersistentVolumeClaim

	classes      map[string]*storagev1.StorageClass
	defaultClass *storagev1.StorageClass

	// nodes are sorted by name.
	nodes      []*v1.Node
	nodeByName map[string]*v1.Node
	pods       map[string]*v1.Pod
	// podsByClaim lists, by claim key, the pods that use the claim.
	podsByClaim map[string][]*v1.Pod
	drivers     []*storagev1.CSIDriver
	capacities  []*storagev1.CSIStorageCapacity
	csiNodes    []*storagev1.CSINode

	// sched is the scheduler side, built on first use by a pod
	// explanation (schedOnce guards it).
	schedOnce sync.Once
	sched     *schedSide
	schedErr  error
}

// New indexes objs for explanations. It fails with ErrInvalidInput for a
// nil or unnamed object or a name used twice within a kind. It starts
// nothing; the volume index costs about as much as the Binder's own.
func New(objs Objects, cfg Config) (*Explainer, error) {
	if cfg.CSIMigration == nil {
		cfg.CSIMigration = binder.TranslationLibMigration{}
	}
	cfg.InTreeProvisioners = slices.Clone(cfg.InTreeProvisioners)
	e := &Explainer{
		cfg:          cfg,
		volumes:      make([]volumeInfo, 0, len(objs.Volumes)),
		volumeByName: make(map[string]*volumeInfo, len(objs.Volumes)),
		index:        pvindex.NewWithOptions(pvindex.Options{UnmarkedCandidates: cfg.UnmarkedCandidates}),
		claims:       make(map[claimName]*v1.PersistentVolumeClaim, len(objs.Claims)),
		naming:       make(map[string][]*v1.PersistentVolumeClaim),
		rolledFor:    make(map[string]map[string]bool),
		claimedBy:    make(map[claimName][]*volumeInfo),
		classes:      make(map[string]*storagev1.StorageClass, len(objs.Classes)),
		nodes:        slices.Clone(objs.Nodes),
		nodeByName:   make(map[string]*v1.Node, len(objs.Nodes)),
		pods:         make(map[string]*v1.Pod, len(objs.Pods)),
		podsByClaim:  make(map[string][]*v1.Pod),
		drivers:      slices.Clone(objs.CSIDrivers),
		capacities:   slices.Clone(objs.Capacities),
		csiNodes:     slices.Clone(objs.CSINodes),
	}
	if err := e.addVolumes(objs.Volumes); err != nil {
		return nil, err
	}
	if err := e.addClaims(objs.Claims); err != nil {
		return nil, err
	}
	e.rollBackSearched()
	if err := e.addClasses(objs.Classes); err != nil {
		return nil, err
	}
	if err := e.addNodes(); err != nil {
		return nil, err
	}
	if err := e.addPods(objs.Pods); err != nil {
		return nil, err
	}
	if err := e.checkStorage(); err != nil {
		return nil, err
	}
	return e, nil
}

// rollBackSearched marks each volume that a search bound to a claim
// (bound-by-controller, the claim's UID) that it no longer satisfies and
// that has not completed the binding: the claim's next sync rolls that
// binding back and the volume becomes Available to every claim, which may
// sync before or after. That claim's search looks past it (as the Binder
// searches again after the rollback); other claims see it bound, and may
// get it once it is Available.
func (e *Explainer) rollBackSearched() {
	for i := range e.volumes {
		v := &e.volumes[i]
		if !v.hasRef || v.refUID == "" || v.invalid != "" {
			continue
		}
		claim := e.claims[v.ref]
		if claim == nil || claim.UID != v.refUID || claim.Spec.VolumeName != "" ||
			metav1.HasAnnotation(claim.ObjectMeta, volume.AnnBindCompleted) {
			continue
		}
		m := newMatcher(claim, false, nil, e.cfg.UnmarkedCandidates)
		if !m.chosenBySearch(v) || m.checkChosen(v) == Fits {
			continue
		}
		v.rolledBack = true
		key := cache.Key(claim)
		if e.rolledFor[key] == nil {
			e.rolledFor[key] = make(map[string]bool)
		}
		e.rolledFor[key][v.pv.Name] = true
	}
}

// claimName names a claim without building a "namespace/name" string.
type claimName struct{ namespace, name string }

// claimByKey returns the claim with key "namespace/name".
func (e *Explainer) claimByKey(key string) *v1.PersistentVolumeClaim {
	ns, name, _ := strings.Cut(key, "/")
	return e.claims[claimName{ns, name}]
}

// invalid returns the ErrInvalidInput error of the i-th object of kind.
func invalid(kind string, i int, name, problem string) error {
	if name != "" {
		return fmt.Errorf("%w: %s %s (item %d): %s", ErrInvalidInput, kind, name, i+1, problem)
	}
	return fmt.Errorf("%w: %s item %d: %s", ErrInvalidInput, kind, i+1, problem)
}

func (e *Explainer) addVolumes(volumes []*v1.PersistentVolume) error {
	seen := make(map[string]bool, len(volumes))
	for i, pv := range volumes {
		switch {
		case pv == nil:
			return invalid("PersistentVolume", i, "", "nil")
		case pv.Name == "":
			return invalid("PersistentVolume", i, "", "no name")
		case seen[pv.Name]:
			return invalid("PersistentVolume", i, pv.Name, "the name is used twice")
		}
		seen[pv.Name] = true
		v := infoOf(pv)
		e.volumes = append(e.volumes, v)
		if v.invalid == "" {
			e.index.Upsert(pv)
		}
	}
	slices.SortFunc(e.volumes, func(a, b volumeInfo) int { return strings.Compare(a.pv.Name, b.pv.Name) })
	for i := range e.volumes {
		v := &e.volumes[i]
		e.volumeByName[v.pv.Name] = v
		if v.hasRef && v.invalid == "" {
			e.claimedBy[v.ref] = append(e.claimedBy[v.ref], v)
		}
	}
	return nil
}

func (e *Explainer) addClaims(claims []*v1.PersistentVolumeClaim) error {
	for i, pvc := range claims {
		switch {
		case pvc == nil:
			return invalid("PersistentVolumeClaim", i, "", "nil")
		case pvc.Name == "" || pvc.Namespace == "":
			return invalid("PersistentVolumeClaim", i, pvc.Name, "no name or namespace")
		}
		key := claimName{pvc.Namespace, pvc.Name}
		if e.claims[key] != nil {
			return invalid("PersistentVolumeClaim", i, cache.Key(pvc), "the name is used twice")
		}
		e.claims[key] = pvc
		switch {
		case pvc.Spec.VolumeName != "":
			e.naming[pvc.Spec.VolumeName] = append(e.naming[pvc.Spec.VolumeName], pvc)
		case !metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted):
			e.pending = append(e.pending, pvc)
		}
	}
	byKey := func(a, b *v1.PersistentVolumeClaim) int { return strings.Compare(cache.Key(a), cache.Key(b)) }
	slices.SortFunc(e.pending, byKey)
	for _, list := range e.naming {
		slices.SortFunc(list, byKey)
	}
	return nil
}

func (e *Explainer) addClasses(classes []*storagev1.StorageClass) error {
	for i, sc := range classes {
		switch {
		case sc == nil:
			return invalid("StorageClass", i, "", "nil")
		case sc.Name == "":
			return invalid("StorageClass", i, "", "no name")
		case e.classes[sc.Name] != nil:
			return invalid("StorageClass", i, sc.Name, "the name is used twice")
		}
		e.classes[sc.Name] = sc
		if isDefaultClass(sc) && (e.defaultClass == nil || newerClass(sc, e.defaultClass)) {
			e.defaultClass = sc
		}
	}
	return nil
}

func (e *Explainer) addNodes() error {
	for i, n := range e.nodes {
		switch {
		case n == nil:
			return invalid("Node", i, "", "nil")
		case n.Name == "":
			return invalid("Node", i, "", "no name")
		case e.nodeByName[n.Name] != nil:
			return invalid("Node", i, n.Name, "the name is used twice")
		}
		e.nodeByName[n.Name] = n
	}
	slices.SortFunc(e.nodes, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

func (e *Explainer) addPods(pods []*v1.Pod) error {
	for i, pod := range pods {
		switch {
		case pod == nil:
			return invalid("Pod", i, "", "nil")
		case pod.Name == "" || pod.Namespace == "":
			return invalid("Pod", i, pod.Name, "no name or namespace")
		}
		key := cache.Key(pod)
		if e.pods[key] != nil {
			return invalid("Pod", i, key, "the name is used twice")
		}
		e.pods[key] = pod
		keys, err := binder.PodClaimKeys(pod)
		if err != nil {
			return invalid("Pod", i, key, err.Error())
		}
		for _, k := range keys {
			e.podsByClaim[k] = append(e.podsByClaim[k], pod)
		}
	}
	return nil
}

// checkStorage checks the CSIDrivers and CSIStorageCapacities.
func (e *Explainer) checkStorage() error {
	seen := make(map[string]bool, len(e.drivers))
	for i, d := range e.drivers {
		switch {
		case d == nil:
			return invalid("CSIDriver", i, "", "nil")
		case d.Name == "":
			return invalid("CSIDriver", i, "", "no name")
		case seen[d.Name]:
			return invalid("CSIDriver", i, d.Name, "the name is used twice")
		}
		seen[d.Name] = true
	}
	clear(seen)
	for i, c := range e.capacities {
		switch {
		case c == nil:
			return invalid("CSIStorageCapacity", i, "", "nil")
		case c.Name == "" || c.Namespace == "":
			return invalid("CSIStorageCapacity", i, c.Name, "no name or namespace")
		case seen[cache.Key(c)]:
			return invalid("CSIStorageCapacity", i, cache.Key(c), "the name is used twice")
		}
		seen[cache.Key(c)] = true
	}
	return nil
}

// Default-class annotations, as Kubernetes' storage util reads them.
const (
	annDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	annBetaDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

func isDefaultClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations[annDefaultClass] == "true" || sc.Annotations[annBetaDefaultClass] == "true"
}

// newerClass reports whether sc wins over best as the default class:
// Kubernetes takes the newest, then the name that sorts first.
func newerClass(sc, best *storagev1.StorageClass) bool {
	t, bt := sc.CreationTimestamp.UnixNano(), best.CreationTimestamp.UnixNano()
	return t > bt || (t == bt && sc.Name < best.Name)
}

// invalidVolume says why the Binder keeps pv out of its index, or "".
func invalidVolume(pv *v1.PersistentVolume) string {
	q, ok := pv.Spec.Capacity[v1.ResourceStorage]
	switch {
	case !ok:
		return "no storage capacity"
	case q.Sign() < 0:
		return "negative storage capacity " + q.String()
	}
	for _, m := range pv.Spec.AccessModes {
		if !pvindex.KnownMode(m) {
			return fmt.Sprintf("unknown access mode %q", m)
		}
	}
	return ""
}

// invalidClaim says why the Binder refuses to sync pvc, or "".
func invalidClaim(pvc *v1.PersistentVolumeClaim) string {
	if q, ok := pvc.Spec.Resources.Requests[v1.ResourceStorage]; ok && q.Sign() < 0 {
		return "negative storage request " + q.String()
	}
	for _, m := range pvc.Spec.AccessModes {
		if !pvindex.KnownMode(m) {
			return fmt.Sprintf("unknown access mode %q", m)
		}
	}
	if pvc.Spec.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector); err != nil {
			return "invalid label selector: " + err.Error()
		}
	}
	return ""
}
