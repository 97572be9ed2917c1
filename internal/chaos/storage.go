package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
)

// driver is the CSI driver and provisioner name of every volume of a run.
const driver = "disk.chaos.volbind.io"

// errCrashed is what every call of a crashed instance returns.
var errCrashed = errors.New("chaos: this Binder instance has crashed")

// asset is one piece of storage.
type asset struct {
	policy v1.PersistentVolumeReclaimPolicy
	// provisionedBy is the instance that provisioned it last; nil for
	// the storage of a static volume.
	provisionedBy *instance
	deleted       bool
	// busy counts Delete and Recycle calls running on it.
	busy int
	// recycledBy records, per volume lifetime (volume UID and claim UID),
	// the instance that recycled it.
	recycledBy map[string]*instance
}

// storage is the storage system behind the volumes of a run: it checks
// every deletion and recycling against the Server's objects.
type storage struct {
	srv *bindertest.Server
	vs  *violations
	// lease is the lease of a fenced run; nil otherwise.
	lease *lease
	// reads fails reads after storage calls (FailedReads); nil otherwise.
	reads *readFaults

	// mu guards assets, deletedBy and chosen.
	mu     sync.Mutex
	assets map[string]*asset
	// deletedBy maps the UID of a volume whose storage a Deleter deleted
	// to the instance that deleted it.
	deletedBy map[types.UID]*instance
	// chosen holds the bindings a Binder chose: a volume it bound
	// (claimRef with UID, bound-by-controller) to a claim that named no
	// volume, or that it provisioned for the claim.
	chosen map[binding]bool
}

// binding is a volume UID and a claim UID.
type binding struct{ volume, claim types.UID }

func newStorage(srv *bindertest.Server, vs *violations, l *lease) *storage {
	return &storage{srv: srv, vs: vs, lease: l, assets: make(map[string]*asset), deletedBy: make(map[types.UID]*instance),
		chosen: make(map[binding]bool)}
}

// choosing returns the UID of the claim a write of pv binds it to, when
// the Binder chose pv for that claim: the write gives pv a claimRef with
// the claim's UID and bound-by-controller, and the claim names no volume
// (a claim that names its volume takes it by Kubernetes' rule, as a claim
// does a volume a user pre-bound). "" otherwise.
func (st *storage) choosing(pv *v1.PersistentVolume) types.UID {
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" || !metav1.HasAnnotation(pv.ObjectMeta, volume.AnnBoundByController) {
		return ""
	}
	if cur, ok := st.peekVolume(pv.Name); ok && cur.Spec.ClaimRef != nil && cur.Spec.ClaimRef.UID == ref.UID {
		return "" // bound already
	}
	if pvc, ok := st.peekClaim(ref.Namespace, ref.Name); !ok || pvc.UID != ref.UID || pvc.Spec.VolumeName != "" {
		return ""
	}
	return ref.UID
}

// chose records that a Binder chose the volume named name for the claim
// with UID claim, if the Server's volume is bound to it now (the write
// was carried out).
func (st *storage) chose(name string, claim types.UID) {
	pv, ok := st.peekVolume(name)
	if !ok || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.chosen[binding{volume: pv.UID, claim: claim}] = true
}

// wasChosen reports whether a Binder chose pv for the claim with UID
// claim (see choosing).
func (st *storage) wasChosen(pv *v1.PersistentVolume, claim types.UID) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.chosen[binding{volume: pv.UID, claim: claim}]
}

// peekVolume returns the Server's volume named name as the checks see it:
// without the faults, latency and counts of a request (shared with the
// Server: do not modify).
func (st *storage) peekVolume(name string) (*v1.PersistentVolume, bool) {
	for _, pv := range st.srv.SharedVolumes() {
		if pv.Name == name {
			return pv, true
		}
	}
	return nil, false
}

// peekClaim is peekVolume for claims.
func (st *storage) peekClaim(namespace, name string) (*v1.PersistentVolumeClaim, bool) {
	for _, pvc := range st.srv.SharedClaims() {
		if pvc.Namespace == namespace && pvc.Name == name {
			return pvc, true
		}
	}
	return nil, false
}

// addStatic records the storage of a statically provisioned volume.
func (st *storage) addStatic(handle string, policy v1.PersistentVolumeReclaimPolicy) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.assets[handle] = &asset{policy: policy}
}

// handleOf returns the storage a volume refers to.
func handleOf(pv *v1.PersistentVolume) string {
	if s := pv.Spec.CSI; s != nil && s.Driver == driver {
		return s.VolumeHandle
	}
	if s := pv.Spec.NFS; s != nil && len(s.Path) > 1 {
		return s.Path[1:]
	}
	return ""
}

// claimUses reports whether the claim ref names (by UID) exists and may
// use the volume named pvName: it is bound to it or to no volume. A claim
// bound to another volume does not need this one (Kubernetes then reclaims
// a volume provisioned for it).
func (st *storage) claimUses(ref *v1.ObjectReference, pvName string) bool {
	if ref == nil || ref.UID == "" {
		return false
	}
	pvc, ok := st.peekClaim(ref.Namespace, ref.Name)
	return ok && pvc.UID == ref.UID && (pvc.Spec.VolumeName == "" || pvc.Spec.VolumeName == pvName)
}

// liveVolumeUses reports whether a volume object named name refers to
// handle and is bound to a claim that exists and is bound to it.
func (st *storage) liveVolumeUses(name, handle string) bool {
	pv, ok := st.peekVolume(name)
	if !ok || handleOf(pv) != handle || pv.Spec.ClaimRef == nil {
		return false
	}
	pvc, ok := st.peekClaim(pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
	return ok && pvc.UID == pv.Spec.ClaimRef.UID && pvc.Spec.VolumeName == pv.Name
}

// volumeExists reports whether the Server holds a volume named name with
// uid (any uid when uid is empty).
func (st *storage) volumeExists(name string, uid types.UID) bool {
	pv, ok := st.peekVolume(name)
	return ok && (uid == "" || pv.UID == uid)
}

// provision creates (or returns again) the storage of a volume.
func (st *storage) provision(inst *instance, req *binder.ProvisionRequest) *v1.PersistentVolume {
	st.mu.Lock()
	a := st.assets[req.VolumeName]
	if a == nil || a.deleted {
		a = &asset{policy: req.ReclaimPolicy}
		st.assets[req.VolumeName] = a
	}
	a.provisionedBy = inst
	st.mu.Unlock()
	return &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{
		Capacity: v1.ResourceList{v1.ResourceStorage: req.Size.Quantity()},
		PersistentVolumeSource: v1.PersistentVolumeSource{
			CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: req.VolumeName},
		},
	}}
}

// begin checks a Delete or Recycle of pv and marks its storage busy; end
// must follow.
func (st *storage) begin(op string, pv *v1.PersistentVolume) *asset {
	handle := handleOf(pv)
	// Storage whose volume object does not exist (a provisioned volume
	// whose create failed) is no volume's yet: deleting it is a cleanup.
	if st.volumeExists(pv.Name, pv.UID) && st.claimUses(pv.Spec.ClaimRef, pv.Name) {
		st.vs.add(ReclaimWhileClaimed, "%s of volume %s while its claim %s/%s (%s) exists", op, pv.Name,
			pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name, pv.Spec.ClaimRef.UID)
	}
	// The Binder's own object of a provisioned volume (no UID: the API
	// server never stored it) whose create failed: its storage is deleted
	// whatever the class's reclaim policy, as Kubernetes'
	// provisionClaimOperation deletes it after its last failed save (seed
	// 920694: the class "keep" is Retain).
	neverCreated := pv.UID == "" && !st.volumeExists(pv.Name, "")
	if op == "delete" && st.liveVolumeUses(pv.Name, handle) {
		st.vs.add(StorageLost, "storage %s deleted while volume %s is bound to a live claim", handle, pv.Name)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	a := st.assets[handle]
	if a == nil {
		a = &asset{}
		st.assets[handle] = a
	}
	if op == "delete" && a.policy == v1.PersistentVolumeReclaimRetain && !neverCreated {
		st.vs.add(RetainDeleted, "storage %s of Retain volume %s deleted", handle, pv.Name)
	}
	if a.busy > 0 {
		st.vs.add(ReclaimedTwice, "%s of volume %s while another delete or recycle of it runs", op, pv.Name)
	}
	a.busy++
	return a
}

func (st *storage) end(a *asset) {
	st.mu.Lock()
	a.busy--
	st.mu.Unlock()
}

// remove deletes the storage of pv for inst.
func (st *storage) remove(inst *instance, pv *v1.PersistentVolume) {
	st.checkDeletedOnce(inst, pv)
	a := st.begin("delete", pv)
	runtime.Gosched() // give a concurrent call the chance to overlap
	st.mu.Lock()
	a.deleted = true
	st.mu.Unlock()
	st.end(a)
}

// recycle scrubs pv for inst.
func (st *storage) recycle(inst *instance, pv *v1.PersistentVolume) {
	a := st.begin("recycle", pv)
	runtime.Gosched()
	var claim types.UID
	if pv.Spec.ClaimRef != nil {
		claim = pv.Spec.ClaimRef.UID
	}
	life := string(pv.UID) + "/" + string(claim)
	st.mu.Lock()
	if a.recycledBy == nil {
		a.recycledBy = make(map[string]*instance)
	}
	// An instance that crashed or was retired between its scrub and its
	// write that makes the volume Available leaves nothing that says the
	// scrub is done: the next one scrubs again, as Kubernetes does.
	if prev := a.recycledBy[life]; prev != nil && !prev.gone() {
		st.vs.add(ReclaimedTwice, "volume %s recycled twice after the release from claim %s, no crash or handover between", pv.Name, claim)
	}
	a.recycledBy[life] = inst
	st.mu.Unlock()
	st.end(a)
}

// checkDeletedOnce records the Delete of pv's storage by inst and checks
// that no Deleter ran for pv's UID before: once one did, the Binder never
// calls one again for that volume, unless the instance that called it
// first stopped before it could record it (it crashed, was retired or
// lost the lease) and the volume does not say the storage is deleted.
func (st *storage) checkDeletedOnce(inst *instance, pv *v1.PersistentVolume) {
	if pv.UID == "" {
		return // the storage of a volume object never created: a cleanup
	}
	cur, ok := st.peekVolume(pv.Name)
	marked := ok && cur.UID == pv.UID && doneMark(cur)
	st.mu.Lock()
	defer st.mu.Unlock()
	prev := st.deletedBy[pv.UID]
	st.deletedBy[pv.UID] = inst
	switch {
	case prev == nil:
	case marked:
		st.vs.add(DeletedTwice, "Deleter ran again for volume %s (UID %s), whose operation mark says its storage is deleted", pv.Name, pv.UID)
	case prev == inst:
		st.vs.add(DeletedTwice, "Deleter ran twice for volume %s (UID %s) in one Binder", pv.Name, pv.UID)
	case !prev.gone() && (st.lease == nil || st.lease.holds(prev)):
		st.vs.add(DeletedTwice, "Deleter ran for volume %s (UID %s) while the Binder that ran it first still leads", pv.Name, pv.UID)
	}
}

// doneMark reports whether pv's operation mark says its storage is
// deleted.
func doneMark(pv *v1.PersistentVolume) bool {
	var m struct {
		Op   string `json:"op"`
		Done bool   `json:"done"`
	}
	raw, ok := pv.Annotations[binder.AnnOperation]
	return ok && json.Unmarshal([]byte(raw), &m) == nil && m.Op == "delete" && m.Done
}

// snapshot returns a copy of the assets by handle.
func (st *storage) snapshot() map[string]asset {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make(map[string]asset, len(st.assets))
	for h, a := range st.assets {
		out[h] = *a
	}
	return out
}

// plugins are one instance's Provisioner, Deleter and Recycler: they fail
// once the instance has crashed, and count as its write points.
type plugins struct {
	inst *instance
	st   *storage
}

var (
	_ binder.Provisioner    = plugins{}
	_ binder.Deleter        = plugins{}
	_ binder.VolumeRecycler = plugins{}
)

func (p plugins) Provision(_ context.Context, req *binder.ProvisionRequest) (*v1.PersistentVolume, error) {
	var pv *v1.PersistentVolume
	err := p.inst.call(func() error { pv = p.st.provision(p.inst, req); return nil })
	if err == nil {
		p.st.reads.after(req.VolumeName, req.Claim.Namespace, req.Claim.Name)
	}
	return pv, err
}

func (p plugins) Delete(_ context.Context, pv *v1.PersistentVolume) error {
	err := p.inst.call(func() error { p.st.remove(p.inst, pv); return nil })
	if err == nil {
		p.st.reads.afterReclaim(pv)
	}
	return err
}

func (p plugins) Recycle(_ context.Context, pv *v1.PersistentVolume) error {
	err := p.inst.call(func() error { p.st.recycle(p.inst, pv); return nil })
	if err == nil {
		p.st.reads.afterReclaim(pv)
	}
	return err
}
