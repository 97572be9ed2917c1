package recycler_test

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/volbind/volbind/recycler"
)

// TestNewForClientset runs Recycle over client-go's fake clientset, playing
// the kubelet with status updates through the clientset.
func TestNewForClientset(t *testing.T) {
	tests := []struct {
		name string
		// existing is a pod present before Recycle, nil for none.
		existing func(r *recycler.Recycler, pv *v1.PersistentVolume) *v1.Pod
		phase    v1.PodPhase
		wantErr  error
	}{
		{name: "created, succeeds", phase: v1.PodSucceeded},
		{name: "created, fails", phase: v1.PodFailed, wantErr: recycler.ErrPodFailed},
		{
			name: "adopted, succeeds",
			existing: func(r *recycler.Recycler, pv *v1.PersistentVolume) *v1.Pod {
				pod, _ := r.PodFor(pv)
				pod.UID = "earlier-run"
				return pod
			},
			phase: v1.PodSucceeded,
		},
		{
			name: "foreign pod refused",
			existing: func(_ *recycler.Recycler, pv *v1.PersistentVolume) *v1.Pod {
				return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: recycler.PodName(pv.Name), UID: "user"}}
			},
			wantErr: recycler.ErrForeignPod,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cs := fake.NewClientset()
			r, err := recycler.NewForClientset(cs, recycler.Config{Clock: newTimerClock()})
			if err != nil {
				t.Fatal(err)
			}
			pv := nfsPV("pv1", "1Gi")
			key := podKey(pv)
			if tc.existing != nil {
				if _, err := cs.CoreV1().Pods(key.Namespace).Create(ctx, tc.existing(r, pv), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			ch := make(chan error, 1)
			go func() { ch <- r.Recycle(ctx, pv) }()

			if tc.phase != "" {
				// Any order works: the recycler watches before it creates or
				// reads the pod.
				var pod *v1.Pod
				waitFor(t, "the recycler pod", func() bool {
					var err error
					pod, err = cs.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
					return err == nil
				})
				pod.Status.Phase = tc.phase
				if _, err := cs.CoreV1().Pods(key.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			err = result(t, ch)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Recycle() = %v, want %v", err, tc.wantErr)
			}
			_, getErr := cs.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
			if wantGone := tc.wantErr != recycler.ErrForeignPod; apierrors.IsNotFound(getErr) != wantGone {
				t.Errorf("pod gone = %v, want %v", apierrors.IsNotFound(getErr), wantGone)
			}
		})
	}
	if _, err := recycler.NewForClientset(nil, recycler.Config{}); err == nil {
		t.Error("NewForClientset(nil) = nil error, want an error")
	}
}
