//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder"
)

// TestStopWritesRecordedEvents: "volbind controller" stopped with SIGTERM
// right after its last write still writes the events it recorded with its
// writes before it exits.
//
// The claims are of a class whose external provisioner nothing runs: the
// controller writes the provisioner annotations on each and records an
// ExternalProvisioning event after each write. Its client may send 5
// requests a second, so the events wait behind the writes; the test stops
// the process as soon as the last claim has its annotations, and every
// claim must have its event once the process has exited.
func TestStopWritesRecordedEvents(t *testing.T) {
	f := newFixture(t)
	bin := buildVolbind(t)
	f.createClassOf(f.class, "e2e.volbind.io/nobody")
	r := startReplicaWith(t, bin, "stop-events", "--kubeconfig", testCluster.kubeconfig, "--leader-elect=false",
		"--kube-api-qps", "5", "--kube-api-burst", "10", "--secure-port", "0")
	const n = 8
	claims := make([]runtime.Object, n)
	for i := range claims {
		claims[i] = f.claim(fmt.Sprintf("claim-%d", i), 1)
	}
	f.create(claims...)
	f.eventually(time.Minute, "the provisioner annotations on every claim", func(ctx context.Context) (bool, error) {
		list, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		annotated := 0
		for _, c := range list.Items {
			if metav1.HasAnnotation(c.ObjectMeta, volume.AnnStorageProvisioner) {
				annotated++
			}
		}
		return annotated == n, nil
	})
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-r.exited:
	case <-time.After(time.Minute):
		t.Fatal("volbind controller did not exit within a minute of SIGTERM")
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("volbind controller exited with %d after SIGTERM, want 0", code)
	}
	// Read once, after the exit: nothing writes events any more.
	for i := range n {
		name := fmt.Sprintf("claim-%d", i)
		evs, err := f.events(t.Context(), name, binder.ReasonExternalProvisioning)
		if err != nil {
			t.Fatalf("list events: %v", err)
		}
		if len(evs) == 0 || evs[0].Type != v1.EventTypeNormal {
			t.Errorf("claim %s has no Normal %s event after the stop: %v", name, binder.ReasonExternalProvisioning, evs)
		}
	}
}
