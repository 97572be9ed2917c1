package provisioner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	csitrans "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// NodeGetter reads the node the scheduler selected for a claim
// (cs.CoreV1().Nodes() of a clientset is one).
type NodeGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Node, error)
}

// Config configures a Provisioner.
type Config struct {
	// Driver is the CSI driver name of the volumes. Required.
	Driver string
	// MigratedFrom is the in-tree plugin that Kubernetes' CSI migration
	// hands to Driver (kubernetes.io/gce-pd for pd.csi.storage.gke.io).
	// The volume of a claim whose class names it is returned in the
	// in-tree form, translated by csi-translation-lib, as the CSI
	// external-provisioner does. Empty: none.
	MigratedFrom string
	// Nodes reads the selected node of a WaitForFirstConsumer claim.
	// Nil: the volumes of such claims get no node affinity.
	Nodes NodeGetter
	// Labels are set on every volume made. Nil: none.
	Labels map[string]string
}

// ErrInjected is the error of a Provision call failed by FailProvision.
var ErrInjected = errors.New("provisioner: injected failure")

// Provisioner is a controller.Provisioner that makes CSI volumes without
// storage. Tests steer it per claim (namespace/name) with FailProvision and
// HoldProvision, per volume with HoldDelete, and read what it was asked
// with Provisions and Deletes. All methods are safe for concurrent use.
type Provisioner struct {
	cfg        Config
	translator csitrans.CSITranslator

	// mu guards the fields below.
	mu         sync.Mutex
	failures   map[string]int
	holds      map[string]*Gate
	deleteHold map[string]*Gate
	provisions map[string][]Provision
	deletes    []string
}

var _ controller.Provisioner = (*Provisioner)(nil)

// Provision is one Provision call the Provisioner answered.
type Provision struct {
	// Volume is the name of the volume asked for.
	Volume string
	// SelectedNode is the selected node the library passed ("" none).
	SelectedNode string
	// ClaimUID is the UID of the claim the call was for.
	ClaimUID string
	// Err is the error returned (nil on success).
	Err error
}

// Gate holds one call until Release.
type Gate struct {
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGate() *Gate { return &Gate{reached: make(chan struct{}), release: make(chan struct{})} }

// Reached is closed once the held call has started and waits.
func (g *Gate) Reached() <-chan struct{} { return g.reached }

// Release lets the held call go on. It may be called more than once.
func (g *Gate) Release() { g.once.Do(func() { close(g.release) }) }

// wait blocks until Release or ctx is done.
func (g *Gate) wait(ctx context.Context) error {
	close(g.reached)
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// New returns a Provisioner; it fails when cfg has no driver name.
func New(cfg Config) (*Provisioner, error) {
	if cfg.Driver == "" {
		return nil, errors.New("provisioner: Config.Driver is empty")
	}
	return &Provisioner{
		cfg: cfg, translator: csitrans.New(),
		failures: map[string]int{}, holds: map[string]*Gate{}, deleteHold: map[string]*Gate{},
		provisions: map[string][]Provision{},
	}, nil
}

// Driver returns the CSI driver name of the volumes.
func (p *Provisioner) Driver() string { return p.cfg.Driver }

// FailProvision makes the next n Provision calls for claim key
// (namespace/name) fail with ErrInjected.
func (p *Provisioner) FailProvision(key string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures[key] = n
}

// HoldProvision makes the next Provision call for claim key (namespace/name)
// wait for the returned Gate's Release before it answers.
func (p *Provisioner) HoldProvision(key string) *Gate {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := newGate()
	p.holds[key] = g
	return g
}

// HoldDelete makes the next Delete call for the volume of claim key
// (namespace/name, the volume's claimRef) wait for the returned Gate's
// Release before it deletes.
func (p *Provisioner) HoldDelete(key string) *Gate {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := newGate()
	p.deleteHold[key] = g
	return g
}

// Provisions returns the Provision calls for claim key (namespace/name), in
// order; the slice is the caller's.
func (p *Provisioner) Provisions(key string) []Provision {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.provisions[key])
}

// Deletes returns the names of the volumes deleted, in order; the slice is
// the caller's.
func (p *Provisioner) Deletes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.deletes)
}

// Provision returns the volume of opts: a CSI volume of the driver with the
// claim's size, access modes and volume mode, the class's reclaim policy and
// mount options, and the selected node's topology; or an injected failure.
func (p *Provisioner) Provision(ctx context.Context, opts controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	claim := opts.PVC
	key := claim.Namespace + "/" + claim.Name
	p.mu.Lock()
	gate := p.holds[key]
	delete(p.holds, key)
	var err error
	if n := p.failures[key]; n > 0 {
		p.failures[key] = n - 1
		err = fmt.Errorf("%w %d of claim %s", ErrInjected, len(p.provisions[key])+1, key)
	}
	p.mu.Unlock()
	if gate != nil {
		if werr := gate.wait(ctx); werr != nil {
			err = werr
		}
	}
	var pv *v1.PersistentVolume
	if err == nil {
		pv, err = p.volume(ctx, opts)
	}
	p.mu.Lock()
	p.provisions[key] = append(p.provisions[key], Provision{Volume: opts.PVName, SelectedNode: opts.SelectedNodeName, ClaimUID: string(claim.UID), Err: err})
	p.mu.Unlock()
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Provision failed", "claim", klog.KObj(claim), "err", err)
		return nil, controller.ProvisioningFinished, err
	}
	return pv, controller.ProvisioningFinished, nil
}

// volume makes the volume object of opts.
func (p *Provisioner) volume(ctx context.Context, opts controller.ProvisionOptions) (*v1.PersistentVolume, error) {
	claim, class := opts.PVC, opts.StorageClass
	policy := v1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		policy = *class.ReclaimPolicy
	}
	handle := opts.PVName
	migrated := p.cfg.MigratedFrom != "" && class.Provisioner == p.cfg.MigratedFrom
	if migrated {
		// The handle format of the GCE PD CSI driver, which
		// csi-translation-lib parses.
		handle = "projects/volbind-e2e/zones/zone-a/disks/" + opts.PVName
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName, Labels: maps.Clone(p.cfg.Labels)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: claim.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeReclaimPolicy: policy,
			MountOptions:                  class.MountOptions,
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
				Driver: p.cfg.Driver, VolumeHandle: handle,
			}},
		},
	}
	if opts.SelectedNodeName != "" && p.cfg.Nodes != nil {
		node, err := p.cfg.Nodes.Get(ctx, opts.SelectedNodeName, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("selected node %q of claim %s: %w", opts.SelectedNodeName, klog.KObj(claim), err)
		}
		pv.Spec.NodeAffinity = nodeAffinity(node)
	}
	if migrated {
		inTree, err := p.translator.TranslateCSIPVToInTree(pv)
		if err != nil {
			return nil, fmt.Errorf("translate volume %s to %s: %w", pv.Name, p.cfg.MigratedFrom, err)
		}
		pv = inTree
	}
	return pv, nil
}

// nodeAffinity admits the node's zone (topology.kubernetes.io/zone) or,
// for a node without one, the node's host (kubernetes.io/hostname, or its
// name when it has no such label).
func nodeAffinity(node *v1.Node) *v1.VolumeNodeAffinity {
	key, value := v1.LabelHostname, node.Name
	if zone, ok := node.Labels[v1.LabelTopologyZone]; ok {
		key, value = v1.LabelTopologyZone, zone
	} else if host, ok := node.Labels[v1.LabelHostname]; ok {
		value = host
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}},
	}}}}
}

// Delete "deletes" the storage of pv: it records the call, after a held
// call's Release. A volume of another driver is ignored (IgnoredError), as
// the CSI external-provisioner ignores it.
func (p *Provisioner) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	ours := (pv.Spec.CSI != nil && pv.Spec.CSI.Driver == p.cfg.Driver) || (p.cfg.MigratedFrom != "" && pv.Spec.GCEPersistentDisk != nil)
	if !ours {
		return &controller.IgnoredError{Reason: fmt.Sprintf("volume %s is not of driver %s", pv.Name, p.cfg.Driver)}
	}
	key := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		key = ref.Namespace + "/" + ref.Name
	}
	p.mu.Lock()
	gate := p.deleteHold[key]
	delete(p.deleteHold, key)
	p.mu.Unlock()
	if gate != nil {
		if err := gate.wait(ctx); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.deletes = append(p.deletes, pv.Name)
	p.mu.Unlock()
	return nil
}
