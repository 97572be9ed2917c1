package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestFloorBind: the floor binder binds every pair, including the pairs
// created after it started, with exactly the four writes of a binding
// each, in Kubernetes' order, and leaves volume and claim Bound to each
// other.
func TestFloorBind(t *testing.T) {
	const n = 5
	ctx, cancel := context.WithTimeout(context.Background(), wait.ForeverTestTimeout)
	defer cancel()
	cs := fake.NewClientset()
	// The fake clientset's watches do not replay what was created between
	// an informer's list and its watch: the pairs created after floorBind
	// started are created once both informers watch.
	watching := make(chan struct{}, 2)
	cs.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := cs.Tracker().Watch(a.GetResource(), a.GetNamespace())
		select {
		case watching <- struct{}{}:
		default: // a later watch of an informer
		}
		return true, w, err
	})
	create := func(i int) {
		pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: volumeName(i)}, Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		}}
		pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: claimName(i), UID: types.UID(fmt.Sprint("uid-", i))}}
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().PersistentVolumeClaims("bench").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		create(i)
	}
	var log bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- floorBind(ctx, cs, floorOptions{n: n, workers: 3, namespace: "bench"}, &log) }()
	<-watching
	<-watching
	for i := 2; i < n; i++ {
		create(i)
	}
	if err := <-done; err != nil {
		t.Fatalf("floorBind = %v", err)
	}
	if !strings.Contains(log.String(), "5 pairs written") {
		t.Errorf("log %q does not say the pairs were written", log.String())
	}

	writes := map[string][]string{} // object -> its writes, in order
	for _, a := range cs.Actions() {
		u, ok := a.(k8stesting.UpdateAction)
		if !ok || a.GetVerb() != "update" {
			continue
		}
		obj := u.GetObject().(metav1.Object)
		writes[obj.GetName()] = append(writes[obj.GetName()], a.GetVerb()+" "+a.GetSubresource())
	}
	for i := range n {
		want := []string{"update ", "update status"}
		if diff := cmp.Diff(want, writes[volumeName(i)]); diff != "" {
			t.Errorf("writes of %s (-want +got):\n%s", volumeName(i), diff)
		}
		if diff := cmp.Diff(want, writes[claimName(i)]); diff != "" {
			t.Errorf("writes of %s (-want +got):\n%s", claimName(i), diff)
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, volumeName(i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pvc, err := cs.CoreV1().PersistentVolumeClaims("bench").Get(ctx, claimName(i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pv.Status.Phase != v1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID ||
			pv.Annotations[annBoundByController] != "yes" {
			t.Errorf("volume %s: phase %s, claimRef %v, annotations %v; want Bound to %s", pv.Name, pv.Status.Phase, pv.Spec.ClaimRef, pv.Annotations, pvc.Name)
		}
		q := pvc.Status.Capacity[v1.ResourceStorage]
		if pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName != pv.Name || pvc.Annotations[annBindCompleted] != "yes" ||
			pvc.Annotations[annBoundByController] != "yes" || q.String() != "1Gi" || len(pvc.Status.AccessModes) != 1 {
			t.Errorf("claim %s: phase %s, volumeName %q, annotations %v, status %+v; want Bound to %s", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName, pvc.Annotations, pvc.Status, pv.Name)
		}
	}
}

// TestFloorBindStopsOnError: a write that fails ends the floor binder with
// an error naming the object.
func TestFloorBindStopsOnError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.ForeverTestTimeout)
	defer cancel()
	cs := fake.NewClientset(
		&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: volumeName(0)}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: claimName(0)}},
	)
	cs.PrependReactor("update", "persistentvolumes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, fmt.Errorf("injected")
	})
	err := floorBind(ctx, cs, floorOptions{n: 2, workers: 2, namespace: "bench"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), volumeName(0)) || !strings.Contains(err.Error(), "injected") {
		t.Errorf("floorBind with failing volume updates = %v, want an error naming %s", err, volumeName(0))
	}
}

// TestPairsClose: the last written pair closes ready, which stops the
// workers, and so does abort; the last pair written after floorBind gave up
// (an error, or the context's end) closes nothing twice.
func TestPairsClose(t *testing.T) {
	closed := func(p *pairs) bool {
		select {
		case _, open := <-p.ready:
			return !open
		default:
			return false
		}
	}
	p := newPairs(2, "bench")
	p.done()
	if closed(p) {
		t.Error("ready is closed with one pair left")
	}
	p.done()
	if !closed(p) {
		t.Error("ready is open after the last pair")
	}
	p = newPairs(1, "bench")
	p.abort()
	p.done()
	p.abort()
	if !closed(p) {
		t.Error("ready is open after abort")
	}
}

func TestParseLimits(t *testing.T) {
	for _, tc := range []struct {
		in    string
		qps   float32
		burst int
		err   bool
	}{
		{in: "20/30", qps: 20, burst: 30},
		{in: "1000/2000", qps: 1000, burst: 2000},
		{in: "20", err: true},
		{in: "x/30", err: true},
		{in: "20/0", err: true},
		{in: "-1/30", err: true},
	} {
		qps, burst, err := parseLimits(tc.in)
		if (err != nil) != tc.err || !tc.err && (qps != tc.qps || burst != tc.burst) {
			t.Errorf("parseLimits(%q) = %v, %v, %v; want %v, %v, error %v", tc.in, qps, burst, err, tc.qps, tc.burst, tc.err)
		}
	}
}
