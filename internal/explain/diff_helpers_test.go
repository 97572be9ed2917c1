package explain_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/internal/chaos"
	"github.com/volbind/volbind/internal/explain"
	"github.com/volbind/volbind/internal/randcluster"
)

// diffCase is one cluster of the differential test and the controller
// that runs it.
type diffCase struct {
	gen  string
	seed uint64
	objs []runtime.Object
	// drivers and capacities are not held by a bindertest.Server.
	drivers    []*storagev1.CSIDriver
	capacities []*storagev1.CSIStorageCapacity

	availableDelay bool
	inTree         bool // randcluster.Disk provisions in the Binder
	noProvisioning bool
	noRecycling    bool
	workers        int
}

func (c *diffCase) String() string {
	return fmt.Sprintf("%s seed %d (available-delay=%t in-tree=%t no-provisioning=%t no-recycling=%t workers=%d)",
		c.gen, c.seed, c.availableDelay, c.inTree, c.noProvisioning, c.noRecycling, c.workers)
}

// generators are the two sources of clusters: this package's own
// (internal/randcluster, every rule, pods and nodes) and the chaos suite's.
var generators = []struct {
	name string
	make func(seed uint64) *diffCase
}{
	{"randcluster", func(seed uint64) *diffCase {
		c := randcluster.Generate(seed)
		return &diffCase{gen: "randcluster", seed: seed, objs: c.Objects(), drivers: c.CSIDrivers, capacities: c.Capacities}
	}},
	{"chaos", func(seed uint64) *diffCase {
		cc := chaos.CaseFor(int64(seed), chaos.DefaultClasses)
		return &diffCase{gen: "chaos", seed: seed, objs: chaos.Objects(cc)}
	}},
}

// drawController draws the controller's configuration from the seed.
func (c *diffCase) drawController() {
	r := rand.New(rand.NewPCG(c.seed, 0xc0)) // a stream of its own: the clusters do not change with it
	c.availableDelay = r.IntN(2) == 0
	c.inTree = r.IntN(2) == 0
	c.noProvisioning = r.IntN(10) == 0
	c.noRecycling = r.IntN(4) == 0
	c.workers = []int{1, 4}[r.IntN(2)]
}

// explainConfig is the explain.Config of the case's controller.
func (c *diffCase) explainConfig() explain.Config {
	cfg := explain.Config{UnmarkedCandidates: c.availableDelay, NoProvisioning: c.noProvisioning, NoRecycling: c.noRecycling,
		ClaimedFirst: true}
	if c.inTree {
		cfg.InTreeProvisioners = []string{randcluster.Disk, "disk.chaos.volbind.io"}
	}
	return cfg
}

// objectsOf reads the objects back from the server (defaults applied, as
// a LIST returns them).
func (c *diffCase) objectsOf(srv *bindertest.Server) explain.Objects {
	o := explain.Objects{Volumes: srv.Volumes(), Claims: srv.Claims(), Pods: srv.Pods(),
		CSIDrivers: c.drivers, Capacities: c.capacities}
	for _, obj := range srv.List(bindertest.KindStorageClass) {
		o.Classes = append(o.Classes, obj.(*storagev1.StorageClass))
	}
	for _, obj := range srv.List(bindertest.KindNode) {
		o.Nodes = append(o.Nodes, obj.(*v1.Node))
	}
	return o
}

// provisioner is the Binder's in-tree provisioner of the test: a CSI
// volume of the requested size.
type provisioner struct{}

var _ binder.Provisioner = provisioner{}

func (provisioner) Provision(_ context.Context, req *binder.ProvisionRequest) (*v1.PersistentVolume, error) {
	return &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{
		Capacity: v1.ResourceList{v1.ResourceStorage: req.Size.Quantity()},
		PersistentVolumeSource: v1.PersistentVolumeSource{
			CSI: &v1.CSIPersistentVolumeSource{Driver: randcluster.Disk, VolumeHandle: req.VolumeName}},
	}}, nil
}

// recycler scrubs volumes at once.
type recycler struct{}

var _ binder.VolumeRecycler = recycler{}

func (recycler) Recycle(context.Context, *v1.PersistentVolume) error { return nil }

// fails reports whether rule fails for pv and pvc, checked with
// component-helpers' functions where they exist, independently of the
// package's matcher. scheduler selects kube-scheduler's phase rule.
func fails(rule explain.Rule, pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim, scheduler bool, node *v1.Node, unmarked bool) bool {
	switch rule {
	case explain.Invalid:
		q, ok := pv.Spec.Capacity[v1.ResourceStorage]
		unknown := slices.ContainsFunc(pv.Spec.AccessModes, func(m v1.PersistentVolumeAccessMode) bool {
			return !slices.Contains([]v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany, v1.ReadWriteOncePod}, m)
		})
		return !ok || q.Sign() < 0 || unknown
	case explain.StorageClass:
		return volume.GetPersistentVolumeClass(pv) != volume.GetPersistentVolumeClaimClass(pvc)
	case explain.BoundElsewhere:
		return pv.Spec.ClaimRef != nil && !volume.IsVolumeBoundToClaim(pv, pvc)
	case explain.Deleting:
		return pv.DeletionTimestamp != nil
	case explain.NotAvailable:
		p := pv.Status.Phase
		held := unmarked && !scheduler && (p == "" || p == v1.VolumePending) // the Available write is held
		return p != v1.VolumeAvailable && !held
	case explain.AccessModes:
		return !volume.CheckAccessModes(pvc, pv)
	case explain.VolumeMode:
		return volume.CheckVolumeModeMismatches(&pvc.Spec, &pv.Spec)
	case explain.Capacity:
		have, want := pv.Spec.Capacity[v1.ResourceStorage], pvc.Spec.Resources.Requests[v1.ResourceStorage]
		return have.Cmp(want) < 0 || have.Value() < want.Value()
	case explain.Selector:
		if pvc.Spec.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector)
		return err == nil && !sel.Matches(labels.Set(pv.Labels))
	case explain.VolumeAttributesClass:
		return ptr.Deref(pv.Spec.VolumeAttributesClassName, "") != ptr.Deref(pvc.Spec.VolumeAttributesClassName, "")
	case explain.NodeAffinity:
		return node != nil && volume.CheckNodeAffinity(pv, node.Labels) != nil
	}
	return false
}

// fitsAlone reports whether FindMatchingVolume returns pv when it is the
// only volume: with node as kube-scheduler calls it, without as the PV
// controller does (which then leaves access modes to its per-set search,
// checked here with CheckAccessModes; an unmarked volume counts as
// Available when unmarked is set).
func fitsAlone(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim, scheduler bool, node *v1.Node, unmarked bool) bool {
	if unmarked && !scheduler && (pv.Status.Phase == "" || pv.Status.Phase == v1.VolumePending) {
		pv = pv.DeepCopy()
		pv.Status.Phase = v1.VolumeAvailable
	}
	got, err := volume.FindMatchingVolume(pvc, []*v1.PersistentVolume{pv}, node, nil, scheduler && node != nil, true)
	if err != nil || got != pv {
		return false
	}
	if scheduler && volume.IsVolumeBoundToClaim(pv, pvc) && volume.GetPersistentVolumeClass(pv) != volume.GetPersistentVolumeClaimClass(pvc) {
		return false // kube-scheduler searches the claim's class only
	}
	return node != nil || volume.CheckAccessModes(pvc, pv) || scheduler && volume.IsVolumeBoundToClaim(pv, pvc)
}

// requestedFits is Kubernetes' checkVolumeSatisfyClaim for the volume a
// claim asks for by name: bound or pre-bound to the claim, or unbound and
// passing its checks (not phase, selector or node affinity).
func requestedFits(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) bool {
	if pv.Spec.ClaimRef != nil {
		return volume.IsVolumeBoundToClaim(pv, pvc)
	}
	for _, r := range []explain.Rule{explain.Deleting, explain.Capacity, explain.StorageClass, explain.VolumeAttributesClass,
		explain.VolumeMode, explain.AccessModes} {
		if fails(r, pv, pvc, false, nil, false) {
			return false
		}
	}
	return true
}

// checkCandidates checks that every candidate of an explanation is what it
// says: a rejected volume fails its rule, a volume that fits fits (the
// volume a claim asks for by name as checkVolumeSatisfyClaim checks it).
func checkCandidates(cands []explain.Candidate, pvc *v1.PersistentVolumeClaim, volumes map[string]*v1.PersistentVolume,
	scheduler bool, node *v1.Node, unmarked bool) error {
	var errs []string
	chosen := 0
	for _, c := range cands {
		pv := volumes[c.Volume]
		if pv == nil {
			errs = append(errs, fmt.Sprintf("candidate %s does not exist", c.Volume))
			continue
		}
		if c.Chosen {
			chosen++
		}
		switch {
		case c.Rule != explain.Fits && !fails(c.Rule, pv, pvc, scheduler, node, unmarked):
			errs = append(errs, fmt.Sprintf("volume %s is rejected by rule %s (%s), which it passes", c.Volume, c.Rule, c.Detail))
		case c.Rule == explain.Fits && pvc.Spec.VolumeName == c.Volume:
			if !requestedFits(pv, pvc) {
				errs = append(errs, fmt.Sprintf("requested volume %s is said to fit (%s), but checkVolumeSatisfyClaim refuses it", c.Volume, c.Detail))
			}
		case c.Rule == explain.Fits && !fitsAlone(pv, pvc, scheduler, node, unmarked):
			errs = append(errs, fmt.Sprintf("volume %s is said to fit (%s), but FindMatchingVolume does not take it", c.Volume, c.Detail))
		}
	}
	if chosen > 1 {
		errs = append(errs, fmt.Sprintf("%d candidates are chosen", chosen))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
