package controller

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

const examplesDir = "../../examples/controller"

// kustomization is the part of a kustomization.yaml the examples use.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Patches    []struct {
		Target map[string]string `json:"target"`
		Patch  string            `json:"patch"`
	} `json:"patches"`
}

// buildExample reads the kustomization in dir as kustomize would for
// these files: resources (files and directories, recursively) and the
// JSON patches that add a Deployment argument. Decoding is strict.
func buildExample(t *testing.T, dir string) []runtime.Object {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	var objs []runtime.Object
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		if fi, err := os.Stat(p); err != nil {
			t.Fatalf("%s/kustomization.yaml: resource %s: %v", dir, r, err)
		} else if fi.IsDir() {
			objs = append(objs, buildExample(t, p)...)
			continue
		}
		objs = append(objs, decodeFile(t, p)...)
	}
	for _, p := range k.Patches {
		var ops []struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			Value string `json:"value"`
		}
		if err := yaml.UnmarshalStrict([]byte(p.Patch), &ops); err != nil {
			t.Fatalf("%s: patch: %v", dir, err)
		}
		for _, op := range ops {
			if op.Op != "add" || op.Path != "/spec/template/spec/containers/0/args/-" {
				t.Fatalf("%s: patch %+v: this test applies only argument additions", dir, op)
			}
			d := deployment(t, objs)
			d.Spec.Template.Spec.Containers[0].Args = append(d.Spec.Template.Spec.Containers[0].Args, op.Value)
		}
	}
	return objs
}

// strictDecoder decodes with client-go's scheme and fails on unknown and
// duplicate fields, as "volbind simulate -f" reads manifests.
var strictDecoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// decodeFile decodes every document of a YAML file strictly, skipping the
// empty ones (separators and comments only).
func decodeFile(t *testing.T, path string) []runtime.Object {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if j, err := yaml.YAMLToJSON(doc); err == nil && string(j) == "null" {
			continue
		}
		obj, _, err := strictDecoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, obj)
	}
}

func deployment(t *testing.T, objs []runtime.Object) *appsv1.Deployment {
	t.Helper()
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			return d
		}
	}
	t.Fatal("no Deployment")
	return nil
}

// podRules returns the rules that grant more on pods than the Binder's pod
// informer needs (list, watch): the recycler's.
func podRules(objs []runtime.Object) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, o := range objs {
		var rs []rbacv1.PolicyRule
		switch r := o.(type) {
		case *rbacv1.Role:
			rs = r.Rules
		case *rbacv1.ClusterRole:
			rs = r.Rules
		}
		for _, rule := range rs {
			informerOnly := !slices.ContainsFunc(rule.Verbs, func(v string) bool { return v != "list" && v != "watch" })
			if (slices.Contains(rule.Resources, "pods") || slices.Contains(rule.Resources, "*")) && !informerOnly {
				rules = append(rules, rule)
			}
		}
	}
	return rules
}

// selects reports whether sel is a non-empty selector that matches a pod
// with the labels podLabels.
func selects(t *testing.T, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Errorf("selector %v: %v", sel, err)
		return false
	}
	return !s.Empty() && s.Matches(labels.Set(podLabels))
}

// TestControllerExamples checks the shipped deployment: its objects
// decode strictly, the Deployment's arguments are valid flags of the
// program, it runs two replicas with leader election, probes the HTTPS
// health endpoints, a PodDisruptionBudget keeps one replica, and the
// no-recycler variant turns the recycler off and grants no pod access beyond
// the pod informer's list and watch.
func TestControllerExamples(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dir          string
		wantRecycler bool
	}{
		{dir: examplesDir, wantRecycler: true},
		{dir: filepath.Join(examplesDir, "no-recycler"), wantRecycler: false},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			t.Parallel()
			objs := buildExample(t, tc.dir)
			d := deployment(t, objs)
			c := d.Spec.Template.Spec.Containers[0]
			if c.Args[0] != "controller" {
				t.Fatalf("%s: args %q, want the controller command first", tc.dir, c.Args)
			}
			o, err := parseControllerFlags(c.Args[1:], io.Discard)
			if err != nil {
				t.Fatalf("%s: the Deployment's arguments: %v", tc.dir, err)
			}
			if o.Recycler != tc.wantRecycler || !o.LeaderElect || *d.Spec.Replicas != 2 {
				t.Errorf("%s: recycler %v, leader election %v, %d replicas; want %v, true, 2", tc.dir, o.Recycler, o.LeaderElect, *d.Spec.Replicas, tc.wantRecycler)
			}
			if got := len(podRules(objs)) > 0; got != tc.wantRecycler {
				t.Errorf("%s: pod rules %v, want them only with the recycler", tc.dir, podRules(objs))
			}
			port := c.Ports[0].ContainerPort
			if int(port) != o.SecureServing.BindPort {
				t.Errorf("%s: container port %d, serving on %d", tc.dir, port, o.SecureServing.BindPort)
			}
			for _, p := range []struct {
				name string
				path string
				got  string
			}{
				{"liveness", "/livez", c.LivenessProbe.HTTPGet.Path},
				{"readiness", "/readyz", c.ReadinessProbe.HTTPGet.Path},
			} {
				if p.got != p.path || !slices.Contains(o.Authorization.AlwaysAllowPaths, p.path) {
					t.Errorf("%s: %s probe on %s; want %s, which anonymous callers may get", tc.dir, p.name, p.got, p.path)
				}
			}
			if c.LivenessProbe.HTTPGet.Scheme != "HTTPS" || c.ReadinessProbe.HTTPGet.Scheme != "HTTPS" {
				t.Errorf("%s: probes over %s and %s, want HTTPS", tc.dir, c.LivenessProbe.HTTPGet.Scheme, c.ReadinessProbe.HTTPGet.Scheme)
			}
			var pdb *policyv1.PodDisruptionBudget
			for _, obj := range objs {
				if p, ok := obj.(*policyv1.PodDisruptionBudget); ok {
					pdb = p
				}
			}
			if pdb == nil || pdb.Spec.MinAvailable.IntValue() != 1 || !selects(t, pdb.Spec.Selector, d.Spec.Template.Labels) {
				t.Errorf("%s: PodDisruptionBudget %+v, want minAvailable 1 for the Deployment's pods", tc.dir, pdb)
			}
		})
	}
}
