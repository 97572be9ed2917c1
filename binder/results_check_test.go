package binder

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// resultCheck is an API that remembers every object its API returned to
// the Binder, with a deep copy taken when it was returned, and checks at
// the end of the test that none was modified: the promise of VolumeAPI
// ("returned objects … are never mutated by it") that lets
// bindertest.Config.SharedResults hand the Binder the stored versions
// themselves. Every test Binder made by env.newBinder runs on one.
type resultCheck struct {
	API
	mu       sync.Mutex
	returned []returnedObject
}

// returnedObject is one object an API call returned, and its copy.
type returnedObject struct {
	call     string
	obj, was runtime.Object
}

// newResultCheck wraps api and checks its results when t ends.
func newResultCheck(t testing.TB, api API) *resultCheck {
	c := &resultCheck{API: api}
	t.Cleanup(func() {
		for _, m := range c.modified() {
			t.Error(m)
		}
	})
	return c
}

// keep remembers obj (a nil pointer is not kept) as returned by call.
func keep[T interface {
	*v1.PersistentVolume | *v1.PersistentVolumeClaim
	runtime.Object
}](c *resultCheck, call string, obj T, err error) (T, error) {
	if obj != nil {
		c.mu.Lock()
		c.returned = append(c.returned, returnedObject{call: call, obj: obj, was: obj.DeepCopyObject()})
		c.mu.Unlock()
	}
	return obj, err
}

// modified describes every returned object that is no longer equal to its
// copy.
func (c *resultCheck) modified() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.returned {
		if !reflect.DeepEqual(r.obj, r.was) {
			out = append(out, fmt.Sprintf("the Binder modified the object %s returned (-returned +now):\n%s", r.call, cmp.Diff(r.was, r.obj)))
		}
	}
	return out
}

func (c *resultCheck) CreateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	out, err := c.API.CreateVolume(ctx, pv)
	return keep(c, "CreateVolume", out, err)
}

func (c *resultCheck) UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	out, err := c.API.UpdateVolume(ctx, pv)
	return keep(c, "UpdateVolume", out, err)
}

func (c *resultCheck) UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	out, err := c.API.UpdateVolumeStatus(ctx, pv)
	return keep(c, "UpdateVolumeStatus", out, err)
}

func (c *resultCheck) GetVolume(ctx context.Context, name string) (*v1.PersistentVolume, error) {
	out, err := c.API.GetVolume(ctx, name)
	return keep(c, "GetVolume", out, err)
}

func (c *resultCheck) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	out, err := c.API.UpdateClaim(ctx, pvc)
	return keep(c, "UpdateClaim", out, err)
}

func (c *resultCheck) UpdateClaimStatus(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	out, err := c.API.UpdateClaimStatus(ctx, pvc)
	return keep(c, "UpdateClaimStatus", out, err)
}

func (c *resultCheck) GetClaim(ctx context.Context, namespace, name string) (*v1.PersistentVolumeClaim, error) {
	out, err := c.API.GetClaim(ctx, namespace, name)
	return keep(c, "GetClaim", out, err)
}

// TestResultCheckCatchesModification checks that resultCheck fails a test
// whose Binder modifies a returned object, so that its silence in the
// other tests means something.
func TestResultCheckCatchesModification(t *testing.T) {
	e := newEnv(t, newPV("pv-1", "1Gi"))
	c := &resultCheck{API: e.srv}
	pv, err := c.GetVolume(e.ctx, "pv-1")
	if err != nil {
		t.Fatal(err)
	}
	if m := c.modified(); len(m) != 0 {
		t.Fatalf("modified() = %q with nothing modified", m)
	}
	pv.Labels = map[string]string{"modified": "yes"}
	if m := c.modified(); len(m) != 1 || !strings.Contains(m[0], "GetVolume") {
		t.Errorf("modified() = %q after the volume GetVolume returned was modified, want one report naming GetVolume", m)
	}
}
