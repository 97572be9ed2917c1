//go:build e2e && linux

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/volbind/volbind/binder"
)

// startBinder runs a Binder in-process, wired through client-go to the
// test cluster (binder.NewForClientset and a shared informer factory), with
// its events recorded to the API server. It returns once the informers have
// synced and every known object has been synced once; the cleanup stops the
// Binder and waits for it.
func startBinder(t *testing.T, cfg binder.Config) *binder.Binder {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(1)))
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logger))
	cs := newClientAs(t, 1000, 2000, "volbind-e2e-binder")
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	cfg.Recorder = broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "volbind-e2e"})
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(binder.TrimManagedFields))
	b, err := binder.NewForClientset(ctx, cs, factory, cfg)
	if err != nil {
		cancel()
		broadcaster.Shutdown()
		t.Fatalf("NewForClientset: %v", err)
	}
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Binder.Run: %v", err)
		}
		factory.Shutdown()
		broadcaster.Shutdown()
	})
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := b.WaitForQuiescence(wctx); err != nil {
		t.Fatalf("Binder did not start: %v", err)
	}
	return b
}
