//go:build e2e && linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/recycler"
)

// exampleRBAC are the files of examples/controller that grant the
// program its permissions.
var exampleRBAC = []string{"base/serviceaccount.yaml", "base/rbac.yaml", "recycler.yaml"}

const (
	programSA = "volbind"     // the example's ServiceAccount, in kube-system
	programNS = "kube-system" // and its Lease's namespace
)

// resources maps the kinds of the example's RBAC files to their resources.
var resources = map[string]schema.GroupVersionResource{
	"ServiceAccount":     {Version: "v1", Resource: "serviceaccounts"},
	"ClusterRole":        rbacv1.SchemeGroupVersion.WithResource("clusterroles"),
	"ClusterRoleBinding": rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"),
	"Role":               rbacv1.SchemeGroupVersion.WithResource("roles"),
	"RoleBinding":        rbacv1.SchemeGroupVersion.WithResource("rolebindings"),
}

// readExample returns the objects of the example's RBAC files (all of
// exampleRBAC when none are named).
func readExample(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	if len(files) == 0 {
		files = exampleRBAC
	}
	var objs []*unstructured.Unstructured
	for _, name := range files {
		raw, err := os.ReadFile(filepath.Join("../examples/controller", name))
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			u := &unstructured.Unstructured{}
			if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
	}
	return objs
}

// applyExample applies the objects with server-side apply, first as a
// dry run (which the API server validates like a real one), then for real.
func applyExample(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(testCluster.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, dryRun := range [][]string{{metav1.DryRunAll}, nil} {
		for _, u := range objs {
			gvr, ok := resources[u.GetKind()]
			if !ok {
				t.Fatalf("examples/controller: unexpected kind %s", u.GetKind())
			}
			data, err := json.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			_, err = dyn.Resource(gvr).Namespace(u.GetNamespace()).Patch(t.Context(), u.GetName(), types.ApplyPatchType, data,
				metav1.PatchOptions{FieldManager: "volbind-e2e", Force: ptr.To(true), DryRun: dryRun})
			if err != nil {
				t.Fatalf("apply %s %s/%s (dry run %v): %v", u.GetKind(), u.GetNamespace(), u.GetName(), dryRun != nil, err)
			}
		}
	}
}

// saKubeconfig writes a kubeconfig that reaches the test cluster as the
// ServiceAccount ns/name, with a token from the TokenRequest API, and
// returns its path and the token.
func saKubeconfig(t *testing.T, cs kubernetes.Interface, ns, name string) (string, string) {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, name, err)
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: sa
  user: {token: %q}
contexts:
- name: local
  context: {cluster: local, user: sa}
current-context: local
`, testCluster.cfg.Host, tr.Status.Token)
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, tr.Status.Token
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// scrape gets https://127.0.0.1:port/path with the bearer token (none if
// empty), trusting the self-signed certificate.
func scrape(t *testing.T, port int, path, token string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestControllerUnderRBAC runs two "volbind controller" replicas as the
// example's ServiceAccount, with exactly the example's RBAC, on an API
// server that enforces RBAC: binding, Recycle (the test plays the kubelet
// for the recycler pod), Delete (the in-tree host-path deleter: a volume
// under /tmp/ is deleted, another becomes Failed), leader failover, and /metrics behind delegated
// authentication and authorization. Then every API call the program made,
// as the audit log records it, must be allowed by the example's rules,
// none may have been refused, and every rule must have been used.
func TestControllerUnderRBAC(t *testing.T) {
	admin := newClient(t, 1000, 2000)
	applyExample(t, readExample(t))
	programKC, _ := saKubeconfig(t, admin, programNS, programSA)
	scraperToken, nobodyToken := metricsReaders(t, admin)
	bin := buildVolbind(t)
	started := time.Now()

	lease := "volbind-rbac-e2e-" + utilrand.String(5) // a new Lease: its creation is one of the calls checked
	replicas := map[string]*replica{}
	ports := map[string]int{}
	for _, id := range []string{"rbac-a", "rbac-b"} {
		ports[id] = freePort(t)
		format := map[string]string{"rbac-a": "json", "rbac-b": "text"}[id]
		replicas[id] = startReplicaWith(t, bin, id, "--kubeconfig", programKC,
			"--authentication-kubeconfig", programKC, "--authorization-kubeconfig", programKC,
			"--leader-elect-resource-name", lease, "--leader-elect-resource-namespace", programNS,
			"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[id]), "-v", "2", "--logging-format", format)
	}
	holder := func(ctx context.Context) (string, error) {
		l, err := admin.CoordinationV1().Leases(programNS).Get(ctx, lease, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && l.Spec.HolderIdentity == nil) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return *l.Spec.HolderIdentity, nil
	}

	t.Run("binding", func(t *testing.T) {
		f := newFixture(t)
		var objs []runtime.Object
		for i := range 20 {
			objs = append(objs, f.volume(fmt.Sprintf("pv-%02d", i), 1), f.claim(fmt.Sprintf("pvc-%02d", i), 1))
		}
		f.create(objs...)
		f.waitBound(20, 2*time.Minute)
	})

	t.Run("recycle", func(t *testing.T) {
		f := newFixture(t)
		pv := f.bindAndRelease("scrubbed", v1.PersistentVolumeReclaimRecycle)
		podName := recycler.PodName(pv.Name)
		var pod *v1.Pod
		f.eventually(time.Minute, "the recycler pod", func(ctx context.Context) (bool, error) {
			var err error
			pod, err = admin.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, podName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
		pod.Status.Phase = v1.PodSucceeded
		if _, err := admin.CoreV1().Pods(pod.Namespace).UpdateStatus(t.Context(), pod, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("complete the recycler pod: %v", err)
		}
		f.eventually(time.Minute, "the recycled volume to be Available", func(ctx context.Context) (bool, error) {
			got := f.getVolume(pv.Name)
			return got.Status.Phase == v1.VolumeAvailable && got.Spec.ClaimRef == nil, nil
		})
		f.eventually(time.Minute, "the recycler pod to be deleted", func(ctx context.Context) (bool, error) {
			_, err := admin.CoreV1().Pods(pod.Namespace).Get(ctx, podName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	})

	t.Run("delete", func(t *testing.T) {
		f := newFixture(t)
		// A host path under /tmp/: deleted, as kube-controller-manager's
		// in-tree plugin deletes it.
		pv := f.bindAndRelease("doomed", v1.PersistentVolumeReclaimDelete)
		f.eventually(time.Minute, "the volume to be deleted", func(ctx context.Context) (bool, error) {
			_, err := admin.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		// Any other path: Failed, with that plugin's message.
		pv = f.bindAndRelease("refused", v1.PersistentVolumeReclaimDelete, func(pv *v1.PersistentVolume) {
			pv.Spec.HostPath.Path = "/srv/" + pv.Name
		})
		want := "host_path deleter only supports /tmp/.+ but received provided /srv/" + pv.Name
		f.eventually(time.Minute, "the volume to be Failed with a VolumeFailedDelete event", func(ctx context.Context) (bool, error) {
			got := f.getVolume(pv.Name)
			if got.Status.Phase != v1.VolumeFailed {
				return false, nil
			}
			sel := "involvedObject.name=" + pv.Name + ",reason=" + binder.ReasonVolumeFailedDelete
			evs, err := admin.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel})
			return err == nil && len(evs.Items) > 0 && evs.Items[0].Message == want, err
		})
	})

	t.Run("metrics", func(t *testing.T) {
		leader, err := holder(t.Context())
		if err != nil || replicas[leader] == nil {
			t.Fatalf("Lease holder = %q (%v), want one of the replicas", leader, err)
		}
		port := ports[leader]
		for _, tc := range []struct {
			name, token string
			want        []int
		}{
			{"no token", "", []int{http.StatusUnauthorized, http.StatusForbidden}},
			{"a token without the right", nobodyToken, []int{http.StatusForbidden}},
			{"bad token", "not-a-token", []int{http.StatusUnauthorized}},
		} {
			if code, body := scrape(t, port, "/metrics", tc.token); !slices.Contains(tc.want, code) {
				t.Errorf("/metrics with %s = %d %.200q, want one of %v", tc.name, code, body, tc.want)
			}
		}
		// The PV-collector gauges and the pending age have series only
		// while the caches hold volumes and a Pending claim: the other
		// subtests' objects are gone by now.
		f := newFixture(t)
		f.create(f.volume("pv-small", 1), f.claim("pvc-too-big", 100))
		f.eventually(time.Minute, "the collectors to see a volume and a Pending claim", func(context.Context) (bool, error) {
			code, body := scrape(t, port, "/metrics", scraperToken)
			return code == http.StatusOK && strings.Contains(body, "pv_collector_total_pv_count{") &&
				strings.Contains(body, "volbind_binder_pending_claim_max_age_seconds"), nil
		})
		code, body := scrape(t, port, "/metrics", scraperToken)
		for _, want := range []string{`leader_election_master_status{name="` + lease + `"} 1`, "rest_client_requests_total{",
			"rest_client_request_duration_seconds_bucket{", "rest_client_rate_limiter_duration_seconds_count{",
			"rest_client_request_size_bytes_count{", "go_goroutines", "process_cpu_seconds_total",
			"volbind_binder_binds_total", "volbind_binder_workqueue_adds_total",
			"pv_collector_total_pv_count{", `workqueue_adds_total{name="claims"}`, "volbind_binder_pending_claim_max_age_seconds"} {
			if code != http.StatusOK || !strings.Contains(body, want) {
				t.Errorf("/metrics with an authorized token = %d, want 200 with %q", code, want)
			}
		}
		for _, path := range []string{"/healthz", "/livez", "/readyz"} {
			if code, body := scrape(t, port, path, ""); code != http.StatusOK || body != "ok" {
				t.Errorf("%s without a token = %d %q, want 200 ok", path, code, body)
			}
		}
	})

	t.Run("json logs", func(t *testing.T) {
		raw, err := os.ReadFile(replicas["rbac-a"].log)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		var entry struct {
			Msg string  `json:"msg"`
			V   *int    `json:"v"`
			TS  float64 `json:"ts"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil || entry.Msg == "" || entry.TS == 0 {
			t.Errorf("first log line of --logging-format=json = %q (%v), want a JSON entry with ts and msg", lines[0], err)
		}
	})

	t.Run("failover", func(t *testing.T) {
		f := newFixture(t)
		leader, err := holder(t.Context())
		if err != nil || replicas[leader] == nil {
			t.Fatalf("Lease holder = %q (%v), want one of the replicas", leader, err)
		}
		if err := replicas[leader].cmd.Process.Kill(); err != nil {
			t.Fatalf("kill leader %s: %v", leader, err)
		}
		<-replicas[leader].exited
		var objs []runtime.Object
		for i := range 20 {
			objs = append(objs, f.volume(fmt.Sprintf("pv-%02d", i), 1), f.claim(fmt.Sprintf("pvc-%02d", i), 1))
		}
		f.create(objs...)
		f.eventually(time.Minute, "the other replica to take the Lease over", func(ctx context.Context) (bool, error) {
			h, err := holder(ctx)
			return h != "" && h != leader, err
		})
		f.waitBound(20, 2*time.Minute)
	})

	checkAuditedCalls(t, admin, started)
}

// metricsReaders creates two ServiceAccounts: one bound to a ClusterRole
// that may get /metrics, one with no rights; it returns their tokens.
func metricsReaders(t *testing.T, admin kubernetes.Interface) (reader, nobody string) {
	t.Helper()
	reader = nonResourceReader(t, admin, "volbind-e2e-scraper", "volbind-e2e-metrics-reader", "/metrics")
	return reader, nonResourceReader(t, admin, "volbind-e2e-nobody", "")
}

// nonResourceReader creates the ServiceAccount sa in programNS and, unless
// role is empty, a ClusterRole of that name that may get urls, bound to it,
// as an operator would grant them; it returns the ServiceAccount's token.
// What exists already is kept.
func nonResourceReader(t *testing.T, admin kubernetes.Interface, sa, role string, urls ...string) string {
	t.Helper()
	ctx := t.Context()
	_, err := admin.CoreV1().ServiceAccounts(programNS).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if role != "" {
		_, err = admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: role},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: urls, Verbs: []string{"get"}}},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: programNS}},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	_, token := saKubeconfig(t, admin, programNS, sa)
	return token
}

// TestControllerWithoutRecyclerUnderRBAC runs "volbind controller
// --recycler=false" as the example's ServiceAccount with the RBAC of
// examples/controller/no-recycler (no recycler pod rules): a released Recycle
// volume becomes Failed with a VolumeFailedRecycle event, no call of the
// program is refused, and pods are only listed and watched (the Binder's pod
// informer).
func TestControllerWithoutRecyclerUnderRBAC(t *testing.T) {
	admin := newClient(t, 1000, 2000)
	applyExample(t, readExample(t, "base/serviceaccount.yaml", "base/rbac.yaml"))
	// What recycler.yaml granted in an earlier test goes away.
	err := admin.RbacV1().RoleBindings(metav1.NamespaceDefault).Delete(t.Context(), "volbind-recycler", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	programKC, _ := saKubeconfig(t, admin, programNS, programSA)
	bin := buildVolbind(t)
	started := time.Now()
	startReplicaWith(t, bin, "norecycler", "--kubeconfig", programKC, "--recycler=false", "--secure-port", "0",
		"--leader-elect-resource-name", "volbind-norecycler-"+utilrand.String(5), "--leader-elect-resource-namespace", programNS)

	f := newFixture(t)
	pv := f.bindAndRelease("unscrubbed", v1.PersistentVolumeReclaimRecycle)
	f.eventually(time.Minute, "the volume to be Failed with a VolumeFailedRecycle event", func(ctx context.Context) (bool, error) {
		if f.getVolume(pv.Name).Status.Phase != v1.VolumeFailed {
			return false, nil
		}
		sel := "involvedObject.name=" + pv.Name + ",reason=" + binder.ReasonVolumeFailedRecycle
		evs, err := admin.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err == nil && len(evs.Items) > 0, err
	})
	calls := auditedCalls(t, "system:serviceaccount:"+programNS+":"+programSA, started)
	// The write that failed the volume is there: the log is read.
	if !used(calls, "", "", "persistentvolumes/status", "update") {
		t.Errorf("the audit log has no volume status update by the program; calls: %v", calls)
	}
	for c, refused := range calls {
		// The Binder's pod informer lists and watches pods; nothing else
		// touches them without the recycler.
		if refused > 0 || (c.resource == "pods" && c.verb != "list" && c.verb != "watch") {
			t.Errorf("%s (refused %d times) with --recycler=false", c, refused)
		}
	}
}
