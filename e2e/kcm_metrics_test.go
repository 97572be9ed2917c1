//go:build e2e && linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// kubePVFamilies are the metric families of kube-controller-manager's
// PersistentVolume controller that volbind exports under the same names.
var kubePVFamilies = []string{
	"pv_collector_total_pv_count", "pv_collector_bound_pv_count", "pv_collector_unbound_pv_count",
	"pv_collector_bound_pvc_count", "pv_collector_unbound_pvc_count",
	"volume_operation_errors_total", "volume_operation_total_errors", "volume_operation_total_seconds",
	"storage_operation_duration_seconds", "retroactive_storageclass_total", "retroactive_storageclass_errors_total",
}

// workloadSeries are the series of the operation metrics that the
// workload of TestKubeControllerManagerMetrics makes: the provisioning by
// and deletion of external.example.com, the host-path deletions (one
// succeeds, one fails).
var workloadSeries = func() map[string][]string {
	const (
		hostPathDelete = `{operation_name="delete",plugin_name="kubernetes.io/host-path"}`
		pluginCall     = `{migrated="false",operation_name="volume_delete",status=%q,volume_plugin="kubernetes.io/host-path"}`
	)
	return map[string][]string{
		"volume_operation_errors_total": {hostPathDelete},
		"volume_operation_total_errors": {hostPathDelete},
		"volume_operation_total_seconds": {hostPathDelete, `{operation_name="delete",plugin_name="external.example.com"}`,
			`{operation_name="provision",plugin_name="external.example.com"}`},
		"storage_operation_duration_seconds": {fmt.Sprintf(pluginCall, "fail-unknown"), fmt.Sprintf(pluginCall, "success")},
		"retroactive_storageclass_total":     {"{}"},
	}
}()

// kubeQueueFamilies are client-go's workqueue metrics, which both report
// for the queues "claims" and "volumes".
var kubeQueueFamilies = []string{
	"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds", "workqueue_work_duration_seconds",
	"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds", "workqueue_retries_total",
}

// ownCluster is a cluster that one test starts for itself with
// hack/cluster-up.sh, in a directory the image's user may read.
type ownCluster struct {
	dir string
	cs  kubernetes.Interface
	env map[string]string
}

// startOwnCluster starts a fresh cluster with the given cluster-up flags;
// the cleanup stops it (the watchdog does if this binary dies).
func startOwnCluster(ctx context.Context, t *testing.T, flags ...string) (*ownCluster, error) {
	dir, err := os.MkdirTemp("", "volbind-cluster.")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		down := exec.Command("../hack/cluster-down.sh", dir)
		down.Stdout, down.Stderr = os.Stderr, os.Stderr
		if err := down.Run(); err != nil {
			t.Errorf("hack/cluster-down.sh %s: %v", dir, err)
		}
	})
	args := append([]string{"--owner-pid", strconv.Itoa(os.Getpid())}, flags...)
	up := exec.CommandContext(ctx, "../hack/cluster-up.sh", append(args, dir)...)
	if out, err := up.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("hack/cluster-up.sh %s: %w\n%s", strings.Join(flags, " "), err, out)
	}
	c := &ownCluster{dir: dir, env: map[string]string{}}
	raw, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		c.env[k] = v
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	if c.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return c, nil
}

// families parses a Prometheus text scrape.
func families(t *testing.T, who, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the /metrics of %s: %v", who, err)
	}
	return mfs
}

// scrapeOK gets /metrics on the port with the token and fails the test
// unless it is answered.
func scrapeOK(t *testing.T, who string, port int, token string) string {
	t.Helper()
	code, body := scrape(t, port, "/metrics", token)
	if code != 200 {
		t.Fatalf("/metrics of %s = %d %.300s", who, code, body)
	}
	return body
}

// series renders every series of mf without its value, sorted: the label
// pairs, "le" left out.
func series(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.GetMetric() {
		var pairs []string
		for _, l := range m.GetLabel() {
			pairs = append(pairs, l.GetName()+"="+strconv.Quote(l.GetValue()))
		}
		slices.Sort(pairs)
		out = append(out, "{"+strings.Join(pairs, ",")+"}")
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// gauges renders the series of the pv_collector gauges with their values.
func gauges(mfs map[string]*dto.MetricFamily) string {
	var b strings.Builder
	for _, name := range kubePVFamilies[:5] {
		var lines []string
		for _, m := range mfs[name].GetMetric() {
			var pairs []string
			for _, l := range m.GetLabel() {
				pairs = append(pairs, l.GetName()+"="+strconv.Quote(l.GetValue()))
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %v", name, strings.Join(pairs, ","), m.GetGauge().GetValue()))
		}
		slices.Sort(lines)
		for _, l := range lines {
			fmt.Fprintln(&b, l)
		}
	}
	return b.String()
}

// labelNames returns the sorted label names of mf's series.
func labelNames(mf *dto.MetricFamily) []string {
	var names []string
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			names = append(names, l.GetName())
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// buckets returns the upper bounds of the first histogram of mf.
func buckets(mf *dto.MetricFamily) []float64 {
	ms := mf.GetMetric()
	if len(ms) == 0 {
		return nil
	}
	var out []float64
	for _, b := range ms[0].GetHistogram().GetBucket() {
		out = append(out, b.GetUpperBound())
	}
	return out
}

// compareFamily checks that volbind exports the family kcm exports, with
// its type, help text, label names and histogram buckets.
func compareFamily(t *testing.T, name string, kcm, volbind map[string]*dto.MetricFamily) bool {
	t.Helper()
	k, v := kcm[name], volbind[name]
	switch {
	case k == nil:
		t.Errorf("kube-controller-manager exports no %s: the workload does not exercise it", name)
		return false
	case v == nil:
		t.Errorf("volbind exports no %s (kube-controller-manager: %s)", name, series(k))
		return false
	}
	if k.GetType() != v.GetType() || k.GetHelp() != v.GetHelp() {
		t.Errorf("%s: volbind's is a %v %q, kube-controller-manager's a %v %q", name, v.GetType(), v.GetHelp(), k.GetType(), k.GetHelp())
	}
	if kl, vl := labelNames(k), labelNames(v); !slices.Equal(kl, vl) {
		t.Errorf("%s: volbind's labels are %v, kube-controller-manager's %v", name, vl, kl)
	}
	if kb, vb := buckets(k), buckets(v); !slices.Equal(kb, vb) {
		t.Errorf("%s: volbind's buckets are %v, kube-controller-manager's %v", name, vb, kb)
	}
	return true
}

// queueOnly keeps the series of mf for the PV controller's queues.
func queueOnly(mf *dto.MetricFamily) *dto.MetricFamily {
	if mf == nil {
		return nil
	}
	out := &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: mf.Type}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "name" && (l.GetValue() == "claims" || l.GetValue() == "volumes") {
				out.Metric = append(out.Metric, m)
			}
		}
	}
	if len(out.Metric) == 0 {
		return nil
	}
	return out
}

// TestKubeControllerManagerMetrics runs one workload against
// kube-controller-manager's PV binder and against "volbind controller" (as
// the image runs it: the binary hack/build-volbind.sh builds, as user
// 65532 on a read-only root filesystem), each on a fresh cluster, both with
// --show-hidden-metrics-for-version=1.36: static pairs (one of them CSI),
// a claim provisioned by an external provisioner (the test plays it), the
// deletion of two released Delete volumes (one by that provisioner, one by
// the in-tree host-path deleter), a failing deletion (a host path outside
// /tmp), a claim given a default class retroactively, and claims that stay
// Pending. Every metric family of the PV controller and of its queues that
// kube-controller-manager exports, volbind exports too, with the same
// type, help, labels and buckets; the operation series are the same, and
// the pv_collector gauges end with equal values. volbind's scrape is saved
// to $VOLBIND_E2E_SCRAPE_OUT for the examples/monitoring test.
func TestKubeControllerManagerMetrics(t *testing.T) {
	ctx := t.Context()
	const sync = "--pvclaimbinder-sync-period=5s"
	const hidden = "--show-hidden-metrics-for-version=1.36"
	var kcm, vb *ownCluster
	var bin string
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		kcm, err = startOwnCluster(gctx, t, "--with-kcm", "--kcm-qps", "100", "--kcm-burst", "200", "--kcm-arg", sync, "--kcm-arg", hidden)
		return err
	})
	g.Go(func() (err error) {
		vb, err = startOwnCluster(gctx, t)
		return err
	})
	bin = buildImageBinary(t, imageVersion)
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("two fresh clusters and the image's binary in %v", time.Since(start).Round(time.Second))

	port := freePort(t)
	kc := filepath.Join(vb.dir, "kubeconfig")
	r := startCommand(t, vb.dir, "metrics", restricted(bin, "controller", "--kubeconfig", kc,
		"--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port), sync, hidden,
		"--leader-elect-identity", "metrics", "--leader-elect-lease-duration", "4s",
		"--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "500ms"))
	vbToken := vb.env["VOLBIND_TOKEN"]
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		code, _ := scrape(t, port, "/metrics", vbToken)
		return code == 200, nil
	}); err != nil {
		t.Fatalf("volbind controller does not serve /metrics: %v", err)
	}
	checkRestricted(t, r.cmd.Process.Pid)

	start = time.Now()
	g, gctx = errgroup.WithContext(ctx)
	for _, c := range []*ownCluster{kcm, vb} {
		g.Go(func() error { return (&metricsWorkload{cs: c.cs}).run(gctx) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the workload on both clusters in %v", time.Since(start).Round(time.Second))

	kcmPort, err := strconv.Atoi(kcm.env["VOLBIND_KCM_PORT"])
	if err != nil {
		t.Fatalf("VOLBIND_KCM_PORT: %v", err)
	}
	// The gauges follow each controller's caches: wait until they agree.
	var kcmBody, vbBody string
	var kcmMF, vbMF map[string]*dto.MetricFamily
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(context.Context) (bool, error) {
		kcmBody, vbBody = scrapeOK(t, "kube-controller-manager", kcmPort, kcm.env["VOLBIND_TOKEN"]), scrapeOK(t, "volbind", port, vbToken)
		kcmMF, vbMF = families(t, "kube-controller-manager", kcmBody), families(t, "volbind", vbBody)
		return gauges(kcmMF) == gauges(vbMF), nil
	})
	if err != nil {
		t.Errorf("the pv_collector gauges differ:\nkube-controller-manager:\n%svolbind:\n%s", gauges(kcmMF), gauges(vbMF))
	}
	if out := os.Getenv("VOLBIND_E2E_SCRAPE_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(vbBody), 0o644); err != nil {
			t.Errorf("save the scrape for examples/monitoring: %v", err)
		}
	}

	for _, name := range kubePVFamilies {
		if !compareFamily(t, name, kcmMF, vbMF) {
			continue
		}
		// The operations of the workload, with their plugins. A write
		// conflict may add a provision error on either side.
		for _, want := range workloadSeries[name] {
			for who, mfs := range map[string]map[string]*dto.MetricFamily{"kube-controller-manager": kcmMF, "volbind": vbMF} {
				if got := series(mfs[name]); !slices.Contains(got, want) {
					t.Errorf("%s of %s: no series %s in %v", name, who, want, got)
				}
			}
		}
	}
	checkAnswersAdvanced(t, vbMF)
	for who, mfs := range map[string]map[string]*dto.MetricFamily{"kube-controller-manager": kcmMF, "volbind": vbMF} {
		if mf := mfs["retroactive_storageclass_total"]; mf == nil || mf.GetMetric()[0].GetCounter().GetValue() < 1 {
			t.Errorf("%s counted no retroactive StorageClass assignment: %v", who, mf)
		}
	}
	for _, name := range kubeQueueFamilies {
		k, v := map[string]*dto.MetricFamily{name: queueOnly(kcmMF[name])}, map[string]*dto.MetricFamily{name: queueOnly(vbMF[name])}
		if compareFamily(t, name, k, v) && !slices.Equal(series(k[name]), series(v[name])) {
			t.Errorf("%s: volbind's queues are %v, kube-controller-manager's %v", name, series(v[name]), series(k[name]))
		}
	}
	if t.Failed() {
		t.Logf("kube-controller-manager's /metrics:\n%s", grepPV(kcmBody))
		t.Logf("volbind's /metrics:\n%s", grepPV(vbBody))
	}
}

// checkAnswersAdvanced checks, on the scrape of a volbind controller that
// bound claims on a real kube-apiserver, that every write was answered
// with a newer resourceVersion: the Binder sends no update that changes
// nothing, so it never counts a stale answer (the count client-go's fake
// clientset, which keeps versions, would raise at every write).
func checkAnswersAdvanced(t *testing.T, mfs map[string]*dto.MetricFamily) {
	t.Helper()
	var binds float64
	if mf := mfs["volbind_binder_binds_total"]; mf != nil {
		for _, m := range mf.GetMetric() {
			binds += m.GetCounter().GetValue()
		}
	}
	if binds == 0 {
		t.Errorf("volbind counted no binding: the stale-answer check would pass vacuously")
	}
	for _, m := range mfs["volbind_binder_ignored_objects_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "reason" && l.GetValue() == "stale_answer" && m.GetCounter().GetValue() > 0 {
				t.Errorf("volbind counted %v write answers without a newer resourceVersion: %v", m.GetCounter().GetValue(), m)
			}
		}
	}
}

// grepPV returns the lines of a scrape about the PV controller's families.
func grepPV(body string) string {
	var b bytes.Buffer
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, f := range append(slices.Clone(kubePVFamilies), kubeQueueFamilies...) {
			if strings.Contains(line, f) && (!strings.HasPrefix(f, "workqueue_") || strings.Contains(line, `name="claims"`) || strings.Contains(line, `name="volumes"`)) {
				fmt.Fprintln(&b, line)
				break
			}
		}
	}
	return b.String()
}
