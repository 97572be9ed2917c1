//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/volbind/volbind/binder"
)

// TestStaticBinding binds 1,000 claims to 1,000 volumes of sizes 1-4 GiB,
// all created while the Binder runs (the volumes first, and the claims once
// the Binder has made every volume Available, so that it knows a fitting
// volume for every claim), and checks every binding read back from
// the API server: with as many volumes as claims of each size, best-fit
// matching binds every claim to a volume of exactly its size.
func TestStaticBinding(t *testing.T) {
	const n = 1000
	f := newFixture(t)
	startBinder(t, binder.Config{})
	vols := make([]runtime.Object, 0, n)
	claims := make([]runtime.Object, 0, n)
	for i := range n {
		gib := int64(1 + i%4)
		vols = append(vols, f.volume(fmt.Sprintf("pv-%04d", i), gib))
		claims = append(claims, f.claim(fmt.Sprintf("pvc-%04d", i), gib))
	}
	f.create(vols...)
	// A claim synced before the Binder knows a fitting volume waits for
	// the next resync: let the Binder see every volume first.
	f.eventually(3*time.Minute, fmt.Sprintf("%d volumes Available", n), func(ctx context.Context) (bool, error) {
		list, err := f.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + f.ns, ResourceVersion: "0"})
		if err != nil {
			return false, err
		}
		available := 0
		for i := range list.Items {
			if list.Items[i].Status.Phase == v1.VolumeAvailable {
				available++
			}
		}
		return available == n, nil
	})
	start := time.Now()
	f.create(claims...)
	f.waitBound(n, 3*time.Minute)
	t.Logf("%d claims Bound %.1fs after their first create", n, time.Since(start).Seconds())
	bound := f.checkBindings()
	if len(bound) != n {
		t.Errorf("%d claims Bound, want %d", len(bound), n)
	}
	for i := range n {
		claim, want := fmt.Sprintf("pvc-%04d", i), int64(1+i%4)<<30
		pv, ok := bound[claim]
		if !ok {
			continue
		}
		var vi int
		if _, err := fmt.Sscanf(strings.TrimPrefix(pv, f.ns+"-"), "pv-%04d", &vi); err != nil {
			t.Errorf("claim %s Bound to unexpected volume %q", claim, pv)
			continue
		}
		if got := int64(1+vi%4) << 30; got != want {
			t.Errorf("claim %s of %d bytes Bound to %s of %d bytes, want the best fit", claim, want, pv, got)
		}
	}
}

// TestPreBound checks claims and volumes that name their partner: a claim
// with spec.volumeName (its volume existing, or created later) and a volume
// with a claimRef without UID (as an administrator pre-binds one). Decoy
// volumes of the same size and class are there to be picked by mistake.
func TestPreBound(t *testing.T) {
	f := newFixture(t)
	// A claim that names a volume the Binder does not know yet (created
	// with it, or later) waits for a resync: resync every second.
	startBinder(t, binder.Config{ResyncPeriod: time.Second})

	named := f.claim("names-volume", 1)
	named.Spec.VolumeName = f.ns + "-named"
	reserved := f.volume("reserved", 1)
	reserved.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: f.ns, Name: "reserved-for"}
	early := f.claim("names-later-volume", 2)
	early.Spec.VolumeName = f.ns + "-later"
	// A claim is given the volume pre-bound to it once the binder knows
	// that volume, as in Kubernetes: volumes and claims come through two
	// informers, so a claim created right after its volume may be synced
	// first, and would then take a decoy. Wait until the volumes are seen.
	f.createAvailable(f.volume("decoy-a", 1), f.volume("decoy-b", 1), f.volume("decoy-c", 2), reserved)
	f.create(f.volume("named", 1), named, f.claim("reserved-for", 1), early)
	f.waitBound(2, time.Minute)
	f.create(f.volume("later", 2))
	f.waitBound(3, time.Minute)

	got := f.checkBindings()
	for claim, want := range map[string]string{
		"names-volume":       f.ns + "-named",
		"reserved-for":       f.ns + "-reserved",
		"names-later-volume": f.ns + "-later",
	} {
		if got[claim] != want {
			t.Errorf("claim %s Bound to %q, want %q", claim, got[claim], want)
		}
	}
	for _, decoy := range []string{"decoy-a", "decoy-b", "decoy-c"} {
		if pv := f.getVolume(f.ns + "-" + decoy); pv.Status.Phase != v1.VolumeAvailable || pv.Spec.ClaimRef != nil {
			t.Errorf("decoy volume %s: phase %s, claimRef %+v; want Available, unclaimed", pv.Name, pv.Status.Phase, pv.Spec.ClaimRef)
		}
	}
}

// TestRetainReleased deletes the claim of a bound Retain volume: the
// volume becomes Released, keeps its claimRef (the deleted claim's UID)
// and is not given to a new claim, which gets a volume created after it.
func TestRetainReleased(t *testing.T) {
	f := newFixture(t)
	// The second claim below waits for a volume created after it: a
	// short resync period finds it sooner, and syncs the Released volume
	// more often meanwhile.
	startBinder(t, binder.Config{ResyncPeriod: time.Second})
	f.createAvailable(f.volume("kept", 1))
	f.create(f.claim("first", 1))
	f.waitBound(1, time.Minute)
	first := f.getClaim("first")
	if err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Delete(t.Context(), "first", deleteNow()); err != nil {
		t.Fatalf("delete claim first: %v", err)
	}
	f.eventually(time.Minute, "volume kept Released", func(ctx context.Context) (bool, error) {
		return f.getVolume(f.ns+"-kept").Status.Phase == v1.VolumeReleased, nil
	})

	// A new claim of the same size and class must not take the Released
	// volume; it waits for (and gets) a volume created after it.
	f.create(f.claim("second", 1))
	f.create(f.volume("fresh", 1))
	f.waitBound(1, time.Minute)
	if got := f.checkBindings()["second"]; got != f.ns+"-fresh" {
		t.Errorf("claim second Bound to %q, want %q", got, f.ns+"-fresh")
	}
	kept := f.getVolume(f.ns + "-kept")
	if kept.Status.Phase != v1.VolumeReleased {
		t.Errorf("Retain volume after its claim's deletion: phase %s, want Released", kept.Status.Phase)
	}
	if ref := kept.Spec.ClaimRef; ref == nil || ref.Name != "first" || ref.UID != first.UID {
		t.Errorf("Released volume claimRef = %+v, want the deleted claim first (uid %s)", ref, first.UID)
	}
}
