package cache

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// benchSizes are the cache sizes of every benchmark.
var benchSizes = []int{1_000, 10_000, 100_000}

// benchClasses spreads the benchmark volumes over 100 storage classes.
const benchClasses = 100

func benchClass(i int) string { return "class-" + strconv.Itoa(i%benchClasses) }

// newBenchAssume returns a PV assume cache holding n volumes at version 1,
// and their keys.
func newBenchAssume(tb testing.TB, n int) (*Assume[*v1.PersistentVolume], []string) {
	tb.Helper()
	c := newPVCache()
	keys := make([]string, n)
	for i := range n {
		keys[i] = pvName(i)
		c.OnAdd(newPV(keys[i], benchClass(i), "1"), false)
	}
	if length(c) != n {
		tb.Fatalf("Len = %d, want %d", length(c), n)
	}
	return c, keys
}

func BenchmarkAssumeGet(b *testing.B) {
	for _, n := range benchSizes {
		c, keys := newBenchAssume(b, n)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				// Each goroutine walks all keys in turn, as in the style
				// guide's benchmark, from its own random start.
				i := int(fastrand() % uint64(n))
				for pb.Next() {
					if _, ok := c.Get(keys[i]); !ok {
						b.Errorf("Get(%q) missed", keys[i])
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

func BenchmarkAssumeAssumeRestore(b *testing.B) {
	for _, n := range benchSizes {
		c, keys := newBenchAssume(b, n)
		assumed := make([]*v1.PersistentVolume, n)
		for i := range n {
			assumed[i] = newPV(keys[i], benchClass(i), "2")
		}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := c.Assume(assumed[i]); err != nil {
					b.Fatal(err)
				}
				c.Restore(keys[i])
				if i++; i == n {
					i = 0
				}
			}
		})
	}
}

// versionedObjects holds two objects per key whose versions a serial
// benchmark raises in turn, so that every event carries a newer version
// without allocating a new object per event.
type versionedObjects struct {
	objs [][2]*v1.PersistentVolume
	// versions holds preformatted resourceVersions.
	versions []string
	next     []int
}

func newVersionedObjects(keys []string, rounds int) *versionedObjects {
	v := &versionedObjects{objs: make([][2]*v1.PersistentVolume, len(keys)), next: make([]int, len(keys))}
	for i, k := range keys {
		v.objs[i] = [2]*v1.PersistentVolume{newPV(k, benchClass(i), "1"), newPV(k, benchClass(i), "1")}
	}
	for r := range rounds {
		v.versions = append(v.versions, strconv.Itoa(r+2))
	}
	return v
}

// nextFor returns the previous object of key i and a new one with a higher
// version; ok is false once the preformatted versions are exhausted (see
// restart).
func (v *versionedObjects) nextFor(i int) (old, new *v1.PersistentVolume, ok bool) {
	r := v.next[i]
	if r >= len(v.versions) {
		return nil, nil, false
	}
	v.next[i]++
	old, new = v.objs[i][r%2], v.objs[i][(r+1)%2]
	new.ResourceVersion = v.versions[r]
	return old, new, true
}

// restart starts key i over at version 1 and returns its object at that
// version, for the benchmark to store after removing the key.
func (v *versionedObjects) restart(i int) *v1.PersistentVolume {
	v.next[i] = 0
	v.objs[i][0].ResourceVersion = "1"
	v.objs[i][1].ResourceVersion = "1"
	return v.objs[i][0]
}

func BenchmarkAssumeInformerUpdate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			c, keys := newBenchAssume(b, n)
			objs := newVersionedObjects(keys, 1<<12)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				old, new, ok := objs.nextFor(i)
				if !ok {
					b.StopTimer()
					c.deleteKey(keys[i])
					c.OnAdd(objs.restart(i), false)
					old, new, _ = objs.nextFor(i)
					b.StartTimer()
				}
				c.OnUpdate(old, new)
				if i++; i == n {
					i = 0
				}
			}
		})
	}
}

// fastrand returns a pseudo-random number for spreading benchmark
// goroutines over keys.
func fastrand() uint64 { return rand.Uint64() }

// BenchmarkParseVersion: a resourceVersion as etcd issues them, parsed on
// every store of Latest and on every write a binder checks.
func BenchmarkParseVersion(b *testing.B) {
	for _, rv := range []string{"123456", "18446744073709551615"} {
		b.Run("digits="+strconv.Itoa(len(rv)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseVersion(rv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
