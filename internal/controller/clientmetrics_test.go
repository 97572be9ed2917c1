package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// gather returns the text exposition of reg.
func gather(t *testing.T, reg prometheus.Gatherer) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestMetricsGatherer checks that /metrics gets client-go's REST client
// and leader-election metrics with kube-controller-manager's names and
// labels, the Go and process metrics, and the metrics of the controller's
// own registry.
func TestMetricsGatherer(t *testing.T) {
	own := prometheus.NewRegistry()
	own.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "volbind_test_own_total", Help: "A metric of the controller's registry."}))
	reg := metricsGatherer(own)
	// One real request, to the reviewer's server (404 for a pod).
	cs, _ := reviewer(t)
	_, _ = cs.CoreV1().Pods("default").Get(t.Context(), "p", metav1.GetOptions{})

	// A leader election on the fake clientset that takes the Lease.
	fcs := fake.NewClientset()
	ctx, cancel := context.WithCancel(t.Context())
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "metrics-test"},
			Client: fcs.CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: "me"}},
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond,
		Name:      "metrics-test",
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); le.Run(ctx) }()
	poll(t, "the Lease taken", func(context.Context) bool { return le.IsLeader() })
	text := gather(t, reg)
	cancel()
	<-done

	wantContains(t, "metrics", text,
		`rest_client_requests_total{code="404",host="`+hostOf(t, cs)+`",method="GET"} 1`,
		`rest_client_request_duration_seconds_bucket{host=`,
		`rest_client_rate_limiter_duration_seconds_count{host=`,
		`rest_client_request_size_bytes_count{host=`,
		`leader_election_master_status{name="metrics-test"} 1`,
		"go_goroutines", "process_", "volbind_test_own_total 0",
	)
}

// hostOf returns the server URL of cs.
func hostOf(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	c, ok := cs.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok {
		t.Fatalf("REST client is a %T", cs.CoreV1().RESTClient())
	}
	return c.Get().URL().Host
}
