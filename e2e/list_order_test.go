//go:build e2e && linux

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestClaimListOrderMatchesKubeAPIServer checks that the in-memory API
// lists claims in the order kube-apiserver lists them across namespaces,
// which it stores by namespace and then name: with namespaces that are
// prefixes of each other ("x", "x-b", "x0", "xb") and names alike, the
// order of the "namespace/name" keys, not of the namespaces and then the
// names.
func TestClaimListOrderMatchesKubeAPIServer(t *testing.T) {
	cs := newClient(t, 2000, 4000)
	ctx := t.Context()
	base := "e2e-order-" + utilrand.String(5)
	namespaces := []string{base, base + "-b", base + "0", base + "b"}
	names := []string{"c", "c-0", "c.0", "c0"}
	for _, ns := range namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s: %v", ns, err)
		}
		// The claims are deleted and the namespace kept, as newFixture
		// does: the controllers of tests running alongside record events
		// about these claims, which a terminating namespace refuses.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := cs.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Errorf("delete the claims of %s: %v", ns, err)
			}
		})
	}
	var claims []runtime.Object
	for _, ns := range namespaces {
		for _, name := range names {
			pvc := &v1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{testLabel: base}},
				Spec: v1.PersistentVolumeClaimSpec{
					AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}
			if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create claim %s/%s: %v", ns, name, err)
			}
			claims = append(claims, pvc)
		}
	}
	list, err := cs.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + base})
	if err != nil {
		t.Fatal(err)
	}
	var real []string
	for _, pvc := range list.Items {
		real = append(real, pvc.Namespace+"/"+pvc.Name)
	}

	srv := bindertest.New()
	if err := srv.Seed(ctx, claims...); err != nil {
		t.Fatal(err)
	}
	var mem []string
	for _, pvc := range srv.Claims() {
		mem = append(mem, pvc.Namespace+"/"+pvc.Name)
	}
	if len(real) != len(namespaces)*len(names) {
		t.Fatalf("kube-apiserver listed %d claims, want %d: %q", len(real), len(namespaces)*len(names), real)
	}
	if !slices.Equal(mem, real) {
		t.Errorf("in-memory API lists\n%q\nkube-apiserver lists\n%q", mem, real)
	}
}
