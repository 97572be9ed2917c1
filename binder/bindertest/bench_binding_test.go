package bindertest_test

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// Annotations a binding writes (component-helpers' storage/volume names).
const (
	annBoundByController = "pv.kubernetes.io/bound-by-controller"
	annBindCompleted     = "pv.kubernetes.io/bind-completed"
)

// BenchmarkBindingWrites makes the four writes of one binding as a
// binder.Binder makes them (a shallow copy of the last answer with the
// fields it changes: the volume's claimRef and bound-by-controller, its
// Bound phase, the claim's volumeName and annotations, its Bound status
// with the volume's capacity and access modes) on pairs seeded beforehand,
// with a handler on volumes and claims as a Binder has. It measures the
// in-memory API server's share of a binding: validation, the no-op check,
// building and sharing the new versions, the events and, unless
// results=shared, the copies it returns.
func BenchmarkBindingWrites(b *testing.B) {
	for _, shared := range []bool{false, true} {
		name := "results=copies"
		if shared {
			name = "results=shared"
		}
		for _, n := range []int{1_000, storeSize, 100_000} {
			b.Run(fmt.Sprintf("%s/pairs=%d", name, n), func(b *testing.B) {
				benchmarkBindingWrites(b, bindertest.Config{SharedResults: shared}, n)
			})
		}
	}
}

// benchmarkBindingWrites binds pairs on servers of n seeded pairs, a new
// server every n bindings, so that the figure is the cost of a binding
// among n pairs (the root BenchmarkBinderBindAll's sizes): what grows
// with n here grows for any client of the API, a Binder included.
func benchmarkBindingWrites(b *testing.B, cfg bindertest.Config, n int) {
	ctx := context.Background()
	var s *bindertest.Server
	var pvs []*v1.PersistentVolume
	var pvcs []*v1.PersistentVolumeClaim
	ann := bindingAnnotations{
		volume: map[string]string{annBoundByController: "yes"},
		claim:  map[string]string{annBoundByController: "yes", annBindCompleted: "yes"},
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%n == 0 {
			b.StopTimer()
			s, pvs, pvcs = seededPairs(b, cfg, n)
			b.StartTimer()
		}
		bindPair(ctx, b, s, ann, pvs[i%n], pvcs[i%n])
		i++
	}
}

// seededPairs returns a Server seeded with n volumes and n claims (pair i
// is pvs[i] and pvcs[i], as stored) and counting handlers on both kinds.
func seededPairs(b *testing.B, cfg bindertest.Config, n int) (*bindertest.Server, []*v1.PersistentVolume, []*v1.PersistentVolumeClaim) {
	b.Helper()
	s, _ := newServerWith(b, cfg)
	objs := make([]runtime.Object, 0, 2*n)
	for i := range n {
		pv := newVolume("pv-"+strconv.Itoa(i), "1Gi")
		pv.Status.Phase = v1.VolumeAvailable
		pvc := newClaim("ns", "claim-"+strconv.Itoa(i), "1Gi")
		pvc.UID = types.UID("uid-" + strconv.Itoa(i))
		pvc.Status.Phase = v1.ClaimPending
		objs = append(objs, pv, pvc)
	}
	ctx := context.Background()
	if err := s.Seed(ctx, objs...); err != nil {
		b.Fatal(err)
	}
	events := 0
	count := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { events++ },
		UpdateFunc: func(_, _ any) { events++ },
	}
	s.AddEventHandler(bindertest.KindVolume, count)
	s.AddEventHandler(bindertest.KindClaim, count)
	pvs, pvcs := make([]*v1.PersistentVolume, n), make([]*v1.PersistentVolumeClaim, n)
	for i := range n {
		var err error
		if pvs[i], err = s.GetVolume(ctx, "pv-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		if pvcs[i], err = s.GetClaim(ctx, "ns", "claim-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	return s, pvs, pvcs
}

// bindingAnnotations are the annotation maps a binding writes to a volume
// and a claim that carry none: a Binder sends the same two maps in every
// such binding.
type bindingAnnotations struct {
	volume, claim map[string]string
}

// bindPair writes the binding of pv and pvc as a Binder does.
func bindPair(ctx context.Context, b *testing.B, s *bindertest.Server, ann bindingAnnotations, pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) {
	next := *pv
	next.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
		Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion}
	next.Annotations = withAnnotations(pv.Annotations, ann.volume)
	pv, err := s.UpdateVolume(ctx, &next)
	if err != nil {
		b.Fatal(err)
	}
	next = *pv
	next.Status.Phase = v1.VolumeBound
	if pv, err = s.UpdateVolumeStatus(ctx, &next); err != nil {
		b.Fatal(err)
	}
	claim := *pvc
	claim.Spec.VolumeName = pv.Name
	claim.Annotations = withAnnotations(pvc.Annotations, ann.claim)
	if pvc, err = s.UpdateClaim(ctx, &claim); err != nil {
		b.Fatal(err)
	}
	claim = *pvc
	claim.Status.Phase = v1.ClaimBound
	claim.Status.AccessModes = pv.Spec.AccessModes
	claim.Status.Capacity = pv.Spec.Capacity
	if _, err = s.UpdateClaimStatus(ctx, &claim); err != nil {
		b.Fatal(fmt.Errorf("claim status: %w", err))
	}
}

// withAnnotations returns add when m is empty (as a Binder shares its
// binding annotations), else a copy of m with add's entries.
func withAnnotations(m, add map[string]string) map[string]string {
	if len(m) == 0 {
		return add
	}
	out := make(map[string]string, len(m)+len(add))
	maps.Copy(out, m)
	maps.Copy(out, add)
	return out
}
