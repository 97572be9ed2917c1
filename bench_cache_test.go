package volbind_test

// Root benchmarks of the assume cache's read paths, as the scheduler's volume
// binder uses them: get a volume by name from many goroutines, and list the
// volumes of one storage class.

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/cache"
)

// cacheBenchClasses spreads the volumes over 100 classes, so one class is
// 1% of them.
const cacheBenchClasses = 100

// cacheBenchPVs returns a PV assume cache holding n available volumes as a
// provisioner creates them, and their names.
func cacheBenchPVs(tb testing.TB, n int) (*cache.Assume[*v1.PersistentVolume], []string) {
	tb.Helper()
	c := cache.NewPVAssume()
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("pvc-%08d-cache", i)
		c.Add(&v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: names[i], ResourceVersion: strconv.Itoa(i + 1)},
			Spec: v1.PersistentVolumeSpec{
				StorageClassName:              "class-" + strconv.Itoa(i%cacheBenchClasses),
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		})
	}
	if c.Len() != n {
		tb.Fatalf("Len = %d, want %d", c.Len(), n)
	}
	return c, names
}

// BenchmarkCacheAssumeGet gets volumes by name from all cores at once.
func BenchmarkCacheAssumeGet(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		c, names := cacheBenchPVs(b, n)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var start atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				// Each goroutine walks all names in turn, from its own
				// start half the names apart.
				i := int(start.Add(int64(n/2+1))) % n
				for pb.Next() {
					if _, ok := c.Get(names[i]); !ok {
						b.Errorf("Get(%q) missed", names[i])
						return
					}
					if i++; i == n {
						i = 0
					}
				}
			})
		})
	}
}

// BenchmarkCacheAssumeList lists the volumes of one storage class (1% of
// the volumes), with a tenth of them assumed.
func BenchmarkCacheAssumeList(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		c, names := cacheBenchPVs(b, n)
		for i := 0; i < n; i += 10 * cacheBenchClasses {
			pv, _ := c.Get(names[i])
			assumed := pv.DeepCopy()
			assumed.ResourceVersion = strconv.Itoa(n + i + 1)
			assumed.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "claim-" + strconv.Itoa(i)}
			if err := c.Assume(assumed); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := cache.PVsOfClass(c, "class-0"); len(got) != n/cacheBenchClasses {
					b.Fatalf("PVsOfClass = %d volumes, want %d", len(got), n/cacheBenchClasses)
				}
			}
		})
	}
}
