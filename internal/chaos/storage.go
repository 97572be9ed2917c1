package chaos

import (
	"context"
	"errors"
	"runtime"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

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

	// mu guards assets.
	mu     sync.Mutex
	assets map[string]*asset
}

func newStorage(srv *bindertest.Server, vs *violations) *storage {
	return &storage{srv: srv, vs: vs, assets: make(map[string]*asset)}
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
	pvc, err := st.srv.GetClaim(context.Background(), ref.Namespace, ref.Name)
	return err == nil && pvc.UID == ref.UID && (pvc.Spec.VolumeName == "" || pvc.Spec.VolumeName == pvName)
}

// liveVolumeUses reports whether a volume object named name refers to
// handle and is bound to a claim that exists and is bound to it.
func (st *storage) liveVolumeUses(name, handle string) bool {
	pv, err := st.srv.GetVolume(context.Background(), name)
	if err != nil || handleOf(pv) != handle || pv.Spec.ClaimRef == nil {
		return false
	}
	pvc, err := st.srv.GetClaim(context.Background(), pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
	return err == nil && pvc.UID == pv.Spec.ClaimRef.UID && pvc.Spec.VolumeName == pv.Name
}

// volumeExists reports whether the Server holds a volume named name with
// uid (any uid when uid is empty).
func (st *storage) volumeExists(name string, uid types.UID) bool {
	pv, err := st.srv.GetVolume(context.Background(), name)
	return err == nil && (uid == "" || pv.UID == uid)
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
	if op == "delete" && a.policy == v1.PersistentVolumeReclaimRetain {
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

// remove deletes the storage of pv.
func (st *storage) remove(pv *v1.PersistentVolume) {
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
	return pv, err
}

func (p plugins) Delete(_ context.Context, pv *v1.PersistentVolume) error {
	return p.inst.call(func() error { p.st.remove(pv); return nil })
}

func (p plugins) Recycle(_ context.Context, pv *v1.PersistentVolume) error {
	return p.inst.call(func() error { p.st.recycle(p.inst, pv); return nil })
}
