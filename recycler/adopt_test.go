package recycler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/recycler"
	"github.com/volbind/volbind/recycler/recyclertest"
)

// TestRecycleAdopts plays a controller restarted in the middle of a
// recycle: the pod of the earlier run exists and is adopted, never
// duplicated.
func TestRecycleAdopts(t *testing.T) {
	tests := []struct {
		name  string
		phase v1.PodPhase
		// finish ends the adopted pod while Recycle waits; nil when the pod
		// is already finished.
		finish      *v1.PodStatus
		deleting    bool
		wantErr     error
		wantPodLeft bool
	}{
		{name: "running pod, then succeeds", phase: v1.PodRunning, finish: &v1.PodStatus{Phase: v1.PodSucceeded}},
		{name: "pending pod, then fails", phase: v1.PodPending, finish: &v1.PodStatus{Phase: v1.PodFailed, Reason: "Error"}, wantErr: recycler.ErrPodFailed},
		{name: "already succeeded", phase: v1.PodSucceeded},
		{name: "already failed", phase: v1.PodFailed, wantErr: recycler.ErrPodFailed},
		{name: "being deleted", phase: v1.PodRunning, deleting: true, wantErr: recycler.ErrPodDeleted, wantPodLeft: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, recycler.Config{})
			pv := nfsPV("pv1", "5Gi")
			key := podKey(pv)
			// The earlier run, with its own Recycler, left its pod behind.
			earlier, err := recycler.New(h.pods, recycler.Config{})
			if err != nil {
				t.Fatal(err)
			}
			old := ownPod(t, earlier, pv, tc.phase)
			if tc.deleting {
				old.DeletionTimestamp = &metav1.Time{Time: h.clock.Now()}
			}
			if err := h.pods.Add(old); err != nil {
				t.Fatal(err)
			}
			stored, _ := h.pods.Pod(key.Namespace, key.Name)

			ch := h.start(context.Background(), pv)
			if tc.finish != nil {
				h.waitWatching(key, 1)
				if err := h.pods.SetStatus(key.Namespace, key.Name, *tc.finish); err != nil {
					t.Fatal(err)
				}
			}
			err = result(t, ch)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Recycle() = %v, want %v", err, tc.wantErr)
			}
			if got := h.pods.Calls(recyclertest.Create); got != 1 {
				t.Errorf("CreatePod calls = %d, want 1 (AlreadyExists)", got)
			}
			left, ok := h.pods.Pod(key.Namespace, key.Name)
			if ok != tc.wantPodLeft {
				t.Fatalf("pod left = %v, want %v", ok, tc.wantPodLeft)
			}
			if ok && left.UID != stored.UID {
				t.Errorf("pod UID = %s, want the adopted %s", left.UID, stored.UID)
			}
			wantDeletes := 1
			if tc.wantPodLeft {
				wantDeletes = 0
			}
			if got := h.pods.Calls(recyclertest.Delete); got != wantDeletes {
				t.Errorf("DeletePod calls = %d, want %d", got, wantDeletes)
			}
		})
	}
}

func TestRecycleRefusesForeignPod(t *testing.T) {
	pv := nfsPV("pv1", "1Gi")
	r, err := recycler.New(recyclertest.New(), recycler.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		pod        func() *v1.Pod
		wantReason string
	}{
		{
			name: "a user's pod",
			pod: func() *v1.Pod {
				return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: recycler.PodName(pv.Name)}}
			},
			wantReason: "annotation " + recycler.AnnVolume + " is missing",
		},
		{
			name: "recycler pod of another volume",
			pod: func() *v1.Pod {
				pod := ownPod(t, r, pv, v1.PodRunning)
				pod.Annotations[recycler.AnnVolume] = "pv2"
				return pod
			},
			wantReason: `annotation ` + recycler.AnnVolume + ` is "pv2"`,
		},
		{
			name: "recycler pod of an earlier volume of the same name",
			pod: func() *v1.Pod {
				pod := ownPod(t, r, pv, v1.PodRunning)
				pod.Annotations[recycler.AnnVolumeUID] = "old-uid"
				return pod
			},
			wantReason: `volume UID "old-uid"`,
		},
		{
			name: "forged annotations, mounting other storage",
			pod: func() *v1.Pod {
				pod := ownPod(t, r, pv, v1.PodRunning)
				pod.Spec.Volumes[0].NFS.Path = "/exports/other"
				return pod
			},
			wantReason: "does not mount the volume's source",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, recycler.Config{})
			key := podKey(pv)
			foreign := tc.pod()
			if err := h.pods.Add(foreign); err != nil {
				t.Fatal(err)
			}
			before, _ := h.pods.Pod(key.Namespace, key.Name)

			err := h.recycle(context.Background(), pv)
			var fe *recycler.ForeignPodError
			if !errors.As(err, &fe) {
				t.Fatalf("Recycle() = %v, want a *ForeignPodError", err)
			}
			if !errors.Is(err, recycler.ErrForeignPod) || !recycler.IsForeignPod(err) {
				t.Errorf("errors.Is(%v, ErrForeignPod) = false, want true", err)
			}
			if fe.Volume != pv.Name || fe.Pod != key || !strings.Contains(fe.Reason, tc.wantReason) {
				t.Errorf("ForeignPodError = %+v, want volume %s, pod %s, reason containing %q", fe, pv.Name, key, tc.wantReason)
			}
			after, ok := h.pods.Pod(key.Namespace, key.Name)
			if !ok {
				t.Fatal("the foreign pod was deleted")
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("foreign pod changed (-before +after):\n%s", diff)
			}
			if got := h.pods.Calls(recyclertest.Delete); got != 0 {
				t.Errorf("DeletePod calls = %d, want 0", got)
			}
			if got := h.pods.Watches(key.Namespace, key.Name); got != 0 {
				t.Errorf("%d watches left open, want 0", got)
			}
		})
	}
}
