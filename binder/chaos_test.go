package binder

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/internal/pvindex"
)

// randomCluster returns volumes and claims of mixed classes, access modes,
// volume modes and sizes, some volumes pre-bound to claims and some claims
// asking for a volume by name or with a selector.
func randomCluster(rng *rand.Rand, n int) []runtime.Object {
	classes := []string{"", "gold", "silver"}
	modes := [][]v1.PersistentVolumeAccessMode{{v1.ReadWriteOnce}, {v1.ReadOnlyMany}, {v1.ReadWriteOnce, v1.ReadWriteMany}}
	var out []runtime.Object
	for i := range n {
		opts := []pvOpt{pvClass(classes[rng.IntN(3)]), pvModes(modes[rng.IntN(3)]...)}
		if rng.IntN(8) == 0 {
			opts = append(opts, pvBlock)
		}
		if rng.IntN(4) == 0 {
			opts = append(opts, pvLabels("tier", "fast"))
		}
		if rng.IntN(10) == 0 {
			opts = append(opts, boundTo(fmt.Sprintf("claim%d", rng.IntN(n)), ""))
		}
		out = append(out, newPV(fmt.Sprintf("pv%d", i), fmt.Sprintf("%dGi", 1+rng.IntN(20)), opts...))
	}
	for i := range n {
		opts := []pvcOpt{pvcClass(ptr.To(classes[rng.IntN(3)])), pvcModes(modes[rng.IntN(2)]...)}
		if rng.IntN(8) == 0 {
			opts = append(opts, pvcBlock)
		}
		if rng.IntN(6) == 0 {
			opts = append(opts, pvcSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}))
		}
		if rng.IntN(10) == 0 {
			opts = append(opts, pvcVolume(fmt.Sprintf("pv%d", rng.IntN(n))))
		}
		out = append(out, newPVC(fmt.Sprintf("claim%d", i), fmt.Sprintf("%dGi", 1+rng.IntN(20)), opts...))
	}
	return out
}

// TestRandomClustersWithConflicts runs the Binder on random clusters while
// a fraction of all updates fail with conflicts, and checks that the
// result is consistent (every binding is complete and one-to-one) and
// maximal (no Pending claim without a requested volume has a match left).
func TestRandomClustersWithConflicts(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 42))
			const n = 60
			e := newEnv(t, randomCluster(rng, n)...)
			for _, verb := range []bindertest.Verb{bindertest.VerbUpdate, bindertest.VerbUpdateStatus} {
				e.srv.InjectFault(bindertest.Fault{Verb: verb, Conflict: true, Fraction: 0.3, Seed: int64(seed)})
			}
			// Worker counts from 1 to 32: the program runs 32 claim workers by default.
			workers := []int{1, 2, 3, 4, 8, 16, 32, 16}[seed]
			b := e.newBinder(Config{ClaimWorkers: workers, VolumeWorkers: 1 + int(seed%2)*(workers-1)})
			e.run(b)
			e.settle(b)
			checkConsistent(t, e)
			if st := e.srv.Stats(); st.Conflicts == 0 {
				t.Errorf("no conflict was injected")
			} else {
				t.Logf("%d writes, %d conflicts", st.TotalWrites(), st.Conflicts)
			}
		})
	}
}

func checkConsistent(t *testing.T, e *env) {
	t.Helper()
	volumes := map[string]*v1.PersistentVolume{}
	ix := pvindex.New()
	for _, pv := range e.srv.Volumes() {
		volumes[pv.Name] = pv
		ix.Upsert(pv)
	}
	claimsByUID := map[types.UID]*v1.PersistentVolumeClaim{}
	for _, pvc := range e.srv.Claims() {
		claimsByUID[pvc.UID] = pvc
		switch pvc.Status.Phase {
		case v1.ClaimBound:
			pv := volumes[pvc.Spec.VolumeName]
			if pv == nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID || pv.Status.Phase != v1.VolumeBound {
				t.Errorf("claim %s Bound to %s, which is not bound to it", pvc.Name, pvc.Spec.VolumeName)
			}
		case v1.ClaimPending:
			if pvc.Spec.VolumeName != "" {
				continue
			}
			if pv, err := ix.FindBestMatch(pvc, pvindex.FindOptions{}); err != nil || pv != nil {
				t.Errorf("claim %s Pending although %v matches (err %v)", pvc.Name, pv, err)
			}
		default:
			t.Errorf("claim %s in phase %q", pvc.Name, pvc.Status.Phase)
		}
	}
	for _, pv := range volumes {
		ref := pv.Spec.ClaimRef
		switch {
		case ref == nil || ref.UID == "":
			if pv.Status.Phase != v1.VolumeAvailable {
				t.Errorf("unbound volume %s in phase %s", pv.Name, pv.Status.Phase)
			}
		default:
			pvc := claimsByUID[ref.UID]
			if pvc == nil || pvc.Spec.VolumeName != pv.Name || pvc.Status.Phase != v1.ClaimBound || pv.Status.Phase != v1.VolumeBound {
				t.Errorf("volume %s (%s, annotations %v) bound to %s/%s, which is not bound to it: %s", pv.Name, pv.Status.Phase, pv.Annotations, ref.Name, ref.UID, describeClaim(pvc))
			}
		}
	}
}

// describeClaim says what checkConsistent found of a claim.
func describeClaim(pvc *v1.PersistentVolumeClaim) string {
	if pvc == nil {
		return "no such claim"
	}
	return fmt.Sprintf("claim phase %s, volumeName %q, annotations %v", pvc.Status.Phase, pvc.Spec.VolumeName, pvc.Annotations)
}
