package explaincmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/volbind/volbind/internal/cli"
	"github.com/volbind/volbind/internal/explain"
)

// dump is shaped like `kubectl get pv,pvc,sc,nodes,pods,csidrivers,
// csistoragecapacities -A -o yaml` of a small cluster.
const dump = "testdata/cluster.yaml"

func exitCode(err error) int {
	var ee cli.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	return -1
}

// TestRunManifests runs the command on a dump: verdicts, exit statuses and
// output formats.
func TestRunManifests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"a claim that would bind", []string{"pvc", "shop/orders-db"}, 0, "Verdict: would bind to pv-nfs-0006 now", ""},
		{"the namespace flag", []string{"pvc", "orders-db", "-n", "shop"}, 0, "PersistentVolumeClaim shop/orders-db", ""},
		{"a claim nothing fits", []string{"persistentvolumeclaim", "shop/orders-archive", "--max", "2"}, 1,
			"  pv-nfs-0002  20Gi      RWO    nfs    capacity  capacity 20Gi < request 100Gi\n  9 more:", ""},
		{"a bound claim", []string{"pvc", "billing/ledger"}, 0, "Verdict: bound to pv-nfs-0004", ""},
		{"a pod that fits nowhere", []string{"pod", "streaming/kafka-0"}, 1,
			"0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind.", ""},
		{"a pod that fits", []string{"po", "web/uploader-7d9f8c6b5-x2xkq"}, 0, "fits on 2 of 3 node(s)", ""},
		{"a pod on the nodes given", []string{"pod", "web/uploader-7d9f8c6b5-x2xkq", "--node", "ip-10-0-2-41.ec2.internal"}, 1,
			"0/1 nodes are available: 1 node(s) did not have enough free storage.", ""},
		{"a claim on a node", []string{"pvc", "streaming/data-kafka-0", "--node", "ip-10-0-2-41.ec2.internal"}, 1,
			"as kube-scheduler matches them on node ip-10-0-2-41.ec2.internal", ""},
		{"a claim that is not there", []string{"pvc", "shop/nope"}, 2, "", "volbind explain: explain: not found: PersistentVolumeClaim shop/nope"},
		{"a node that is not there", []string{"pod", "streaming/kafka-0", "--node", "nope"}, 2, "", "not found: Node nope"},
		{"a node for an immediate claim", []string{"pvc", "shop/orders-db", "--node", "ip-10-0-2-41.ec2.internal"}, 2, "", "applies to WaitForFirstConsumer claims only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := Run(t.Context(), "volbind", append(tc.args, "-f", dump), nil, &stdout, &stderr)
			if got := exitCode(err); got != tc.code {
				t.Errorf("exit status %d (%v), want %d; stderr %q", got, err, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stdout:\n%s\nstderr %q; want them to contain %q and %q", stdout.String(), stderr.String(), tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

// TestRunFormats: JSON and YAML carry the explanation's fields.
func TestRunFormats(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "yaml"} {
		var stdout bytes.Buffer
		if err := Run(t.Context(), "volbind", []string{"pvc", "shop/orders-db", "-f", dump, "-o", format}, nil, &stdout, io.Discard); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		var x explain.ClaimExplanation
		var err error
		if format == "json" {
			err = json.Unmarshal(stdout.Bytes(), &x)
		} else {
			err = yaml.UnmarshalStrict(stdout.Bytes(), &x)
		}
		if err != nil {
			t.Fatalf("-o %s: %v\n%s", format, err, stdout.String())
		}
		if x.Verdict != explain.WouldBind || x.Volume != "pv-nfs-0006" || len(x.Candidates) == 0 || x.Candidates[2].Rule != explain.Selector {
			t.Errorf("-o %s: verdict %s, volume %s, candidates %+v", format, x.Verdict, x.Volume, x.Candidates)
		}
	}
	var stdout bytes.Buffer
	err := Run(t.Context(), "volbind", []string{"pod", "streaming/kafka-0", "-f", dump, "-o", "json"}, nil, &stdout, io.Discard)
	var x explain.PodExplanation
	if exitCode(err) != 1 || json.Unmarshal(stdout.Bytes(), &x) != nil || x.Verdict != explain.Unschedulable || len(x.Nodes) != 3 {
		t.Errorf("pod -o json: %v, %+v", err, x)
	}
}

// TestParseFlags: what the flags and arguments select, and their errors.
func TestParseFlags(t *testing.T) {
	t.Parallel()
	o, err := parseFlags("volbind", []string{"pod", "web/up", "--controller", "volbind", "--node", "a,b", "--recycler=false"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := explain.Config{UnmarkedCandidates: true, NoProvisioning: true, NoRecycling: true}
	if o.kind != kindPod || o.namespace != "web" || o.name != "up" || !slices.Equal(o.nodes, []string{"a", "b"}) || o.availableDelay != 5*time.Second {
		t.Errorf("options %+v", o)
	}
	if got := o.config(); got.UnmarkedCandidates != want.UnmarkedCandidates || got.NoProvisioning != want.NoProvisioning || got.NoRecycling != want.NoRecycling {
		t.Errorf("config %+v, want %+v", got, want)
	}
	if o, _ := parseFlags("volbind", []string{"pvc", "x"}, io.Discard); o.config().UnmarkedCandidates || o.config().NoProvisioning {
		t.Errorf("kube-controller-manager's config is %+v, want the zero value", o.config())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pvc"}, "want a kind (pvc or pod) and a name"},
		{[]string{"pv", "x"}, `unknown kind "pv"`},
		{[]string{"pvc", "a/b/c"}, "is not NAME or NAMESPACE/NAME"},
		{[]string{"pvc", "/b"}, "is not NAME or NAMESPACE/NAME"},
		{[]string{"pvc", "a/b", "-n", "c"}, `names namespace "a", but --namespace is "c"`},
		{[]string{"pvc", "x", "-o", "xml"}, "--output must be text, json or yaml"},
		{[]string{"pvc", "x", "--controller", "kcm"}, "--controller must be"},
		{[]string{"pvc", "x", "--available-delay", "5s"}, "--available-delay applies to --controller=volbind only"},
		{[]string{"pvc", "x", "--node", "a,b"}, "one --node"},
		{[]string{"pvc", "x", "-f", "a.yaml", "--context", "prod"}, "-f reads manifests"},
		{[]string{"pvc", "x", "--bogus"}, "unknown flag: --bogus"},
	} {
		_, err := parseFlags("volbind", tc.args, io.Discard)
		if !cli.IsFlagError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseFlags(%q) = %v, want a flag error saying %q", tc.args, err, tc.want)
		}
	}
	if _, err := parseFlags("volbind", []string{"--help"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v, want flag.ErrHelp", err)
	}
	var usage bytes.Buffer
	_, _ = parseFlags("kubectl volbind", []string{"-h"}, &usage)
	if !strings.Contains(usage.String(), "usage: kubectl volbind explain (pvc|pod)") {
		t.Errorf("the plugin's usage: %q", usage.String())
	}
}

// TestReadClusterListsOnce: a live cluster is read with one LIST per kind
// it needs, and nothing else.
func TestReadClusterListsOnce(t *testing.T) {
	t.Parallel()
	objs := []runtime.Object{
		&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "data"}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "data"}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}},
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}},
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web"}},
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web"}},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}},
		&storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "cap"}},
		&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}},
	}
	for _, tc := range []struct {
		kind  string
		nodes []string
		want  []string
	}{
		{kindClaim, nil, []string{"persistentvolumeclaims", "persistentvolumes", "pods/app", "storageclasses"}},
		{kindClaim, []string{"node-1"}, []string{"nodes", "persistentvolumeclaims", "persistentvolumes", "pods/app", "storageclasses"}},
		{kindPod, nil, []string{"csidrivers", "csinodes", "csistoragecapacities", "nodes", "persistentvolumeclaims", "persistentvolumes", "pods/app", "storageclasses"}},
	} {
		cs := fake.NewClientset(objs...)
		o := options{kind: tc.kind, namespace: "app", nodes: tc.nodes}
		got, err := o.readCluster(t.Context(), cs)
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		var lists []string
		for _, a := range cs.Actions() {
			if a.GetVerb() != "list" {
				t.Errorf("%s: a %s of %s; want only lists", tc.kind, a.GetVerb(), a.GetResource().Resource)
			}
			r := a.GetResource().Resource
			if r == "pods" {
				r += "/" + a.GetNamespace()
			}
			lists = append(lists, r)
		}
		slices.Sort(lists)
		if !slices.Equal(lists, tc.want) {
			t.Errorf("%s: lists %v, want %v", tc.kind, lists, tc.want)
		}
		if len(got.Volumes) != 1 || len(got.Claims) != 2 || len(got.Pods) != 1 || len(got.Classes) != 1 {
			t.Errorf("%s: read %d volumes, %d claims, %d pods, %d classes; want 1, 2 (all namespaces), 1 (its namespace), 1",
				tc.kind, len(got.Volumes), len(got.Claims), len(got.Pods), len(got.Classes))
		}
	}
}

// TestRunClusterErrors: a cluster that cannot be reached is exit status 2.
func TestRunClusterErrors(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	err := Run(t.Context(), "volbind", []string{"pvc", "a/b", "--kubeconfig", "/does/not/exist"}, nil, io.Discard, &stderr)
	if exitCode(err) != 2 || !strings.Contains(stderr.String(), "client configuration") {
		t.Errorf("Run: %v, stderr %q; want exit status 2 and the configuration error", err, stderr.String())
	}
}
