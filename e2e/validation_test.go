//go:build e2e && linux

package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/volbind/volbind/binder/bindertest"
)

// verdict is a server's answer to a write: success, or the reason and
// the sorted "field type" causes of its error.
type verdict struct {
	OK     bool
	Reason metav1.StatusReason
	Kind   string
	Causes []string
}

func (v verdict) String() string {
	if v.OK {
		return "accepted"
	}
	return fmt.Sprintf("%s %s %v", v.Reason, v.Kind, v.Causes)
}

func verdictOf(err error) verdict {
	if err == nil {
		return verdict{OK: true}
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return verdict{Reason: metav1.StatusReason("non-API error: " + err.Error())}
	}
	s := st.Status()
	v := verdict{Reason: s.Reason}
	if s.Details != nil {
		v.Kind = s.Details.Kind
		for _, c := range s.Details.Causes {
			v.Causes = append(v.Causes, c.Field+" "+string(c.Type))
		}
	}
	slices.Sort(v.Causes)
	v.Causes = slices.Compact(v.Causes)
	return v
}

// TestValidationMatchesKubeAPIServer sends every case of the table to
// bindertest and to the real kube-apiserver and compares the verdicts:
// accepted by both, or rejected by both with the same reason, kind, field
// paths and error types.
func TestValidationMatchesKubeAPIServer(t *testing.T) {
	f := newFixture(t)
	cases := validationCases()
	if len(cases) < 60 {
		t.Fatalf("the table has %d cases, want at least 60", len(cases))
	}
	var invalid int
	for i, tc := range cases {
		n := vnames{ns: f.ns, name: fmt.Sprintf("%s-v%03d", f.ns, i)}
		t.Run(tc.name, func(t *testing.T) {
			real := runCase(t, tc, n, realWriter{cs: f.cs})
			srv := bindertest.New()
			mem := runCase(t, tc, n, memWriter{srv: srv})
			if diff := cmp.Diff(real, mem); diff != "" {
				t.Errorf("verdict (-kube-apiserver +bindertest):\n%s", diff)
			}
			if !real.OK {
				invalid++
			}
			t.Logf("%s", real)
		})
	}
	t.Logf("%d cases, %d rejected by kube-apiserver", len(cases), invalid)
	if invalid < len(cases)/3 || invalid == len(cases) {
		t.Errorf("%d of %d cases rejected: the table must hold both valid and invalid writes", invalid, len(cases))
	}
}

// TestUpdateOfMissingMatchesKubeAPIServer updates a volume that does not
// exist, without a resourceVersion, with one and with one that is not a
// number, on bindertest and on kube-apiserver, and compares the verdicts.
func TestUpdateOfMissingMatchesKubeAPIServer(t *testing.T) {
	f := newFixture(t)
	for _, rv := range []string{"", "5", "abc"} {
		t.Run("resourceVersion="+rv, func(t *testing.T) {
			pv := pvMut()(vnames{ns: f.ns, name: f.ns + "-missing"}).(*v1.PersistentVolume)
			pv.ResourceVersion = rv
			_, err := realWriter{cs: f.cs}.update(t.Context(), pv.DeepCopy(), false)
			real := verdictOf(err)
			_, err = memWriter{srv: bindertest.New()}.update(t.Context(), pv, false)
			mem := verdictOf(err)
			if diff := cmp.Diff(real, mem); diff != "" {
				t.Errorf("verdict (-kube-apiserver +bindertest):\n%s", diff)
			}
			if real.OK {
				t.Errorf("kube-apiserver accepted an update of a missing volume")
			}
			t.Logf("%s", real)
		})
	}
}

// writer is the API a case is sent to.
type writer interface {
	create(ctx context.Context, obj runtime.Object) (runtime.Object, error)
	update(ctx context.Context, obj runtime.Object, status bool) (runtime.Object, error)
	cleanup(t *testing.T, obj runtime.Object)
}

// runCase makes tc's writes and returns the verdict of the last one.
// Setup writes (the create of an update case, pre) must succeed.
func runCase(t *testing.T, tc vcase, n vnames, w writer) verdict {
	t.Helper()
	ctx := t.Context()
	got, err := w.create(ctx, tc.obj(n))
	if err == nil {
		t.Cleanup(func() { w.cleanup(t, got) })
	}
	if tc.update == nil {
		return verdictOf(err)
	}
	if err != nil {
		t.Fatalf("%T: create before the update: %v", w, err)
	}
	if tc.pre != nil {
		tc.pre(got)
		if got, err = w.update(ctx, got, true); err != nil {
			t.Fatalf("%T: status update before the update: %v", w, err)
		}
	}
	tc.update(got)
	_, err = w.update(ctx, got, tc.status)
	return verdictOf(err)
}

// memWriter sends writes to a bindertest.Server.
type memWriter struct{ srv *bindertest.Server }

func (m memWriter) create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	return m.srv.Create(ctx, obj)
}

func (m memWriter) update(ctx context.Context, obj runtime.Object, status bool) (runtime.Object, error) {
	if status {
		return m.srv.UpdateStatus(ctx, obj)
	}
	return m.srv.Update(ctx, obj)
}

func (memWriter) cleanup(*testing.T, runtime.Object) {}

// realWriter sends writes to kube-apiserver.
type realWriter struct{ cs kubernetes.Interface }

func (r realWriter) create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	opts := metav1.CreateOptions{}
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		return r.cs.CoreV1().PersistentVolumes().Create(ctx, o, opts)
	case *v1.PersistentVolumeClaim:
		return r.cs.CoreV1().PersistentVolumeClaims(o.Namespace).Create(ctx, o, opts)
	case *storagev1.StorageClass:
		return r.cs.StorageV1().StorageClasses().Create(ctx, o, opts)
	case *v1.Node:
		return r.cs.CoreV1().Nodes().Create(ctx, o, opts)
	case *v1.Pod:
		return r.cs.CoreV1().Pods(o.Namespace).Create(ctx, o, opts)
	}
	return nil, fmt.Errorf("cannot create a %T", obj)
}

func (r realWriter) update(ctx context.Context, obj runtime.Object, status bool) (runtime.Object, error) {
	opts := metav1.UpdateOptions{}
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		if status {
			return r.cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, o, opts)
		}
		return r.cs.CoreV1().PersistentVolumes().Update(ctx, o, opts)
	case *v1.PersistentVolumeClaim:
		if status {
			return r.cs.CoreV1().PersistentVolumeClaims(o.Namespace).UpdateStatus(ctx, o, opts)
		}
		return r.cs.CoreV1().PersistentVolumeClaims(o.Namespace).Update(ctx, o, opts)
	case *storagev1.StorageClass:
		return r.cs.StorageV1().StorageClasses().Update(ctx, o, opts)
	case *v1.Node:
		if status {
			return r.cs.CoreV1().Nodes().UpdateStatus(ctx, o, opts)
		}
		return r.cs.CoreV1().Nodes().Update(ctx, o, opts)
	case *v1.Pod:
		if status {
			return r.cs.CoreV1().Pods(o.Namespace).UpdateStatus(ctx, o, opts)
		}
		return r.cs.CoreV1().Pods(o.Namespace).Update(ctx, o, opts)
	}
	return nil, fmt.Errorf("cannot update a %T", obj)
}

// cleanup deletes what a case created (volumes also go with the
// fixture's label; claims and pods stay in the test's namespace).
func (r realWriter) cleanup(t *testing.T, obj runtime.Object) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := metav1.DeleteOptions{}
	var err error
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		err = r.cs.CoreV1().PersistentVolumes().Delete(ctx, o.Name, opts)
	case *storagev1.StorageClass:
		err = r.cs.StorageV1().StorageClasses().Delete(ctx, o.Name, opts)
	case *v1.Node:
		err = r.cs.CoreV1().Nodes().Delete(ctx, o.Name, opts)
	case *v1.PersistentVolumeClaim:
		err = r.cs.CoreV1().PersistentVolumeClaims(o.Namespace).Delete(ctx, o.Name, opts)
	case *v1.Pod:
		err = r.cs.CoreV1().Pods(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: %v", err)
	}
}
