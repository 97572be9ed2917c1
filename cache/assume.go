package cache

import (
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// AssumeConfig configures an Assume cache. The zero value is valid.
type AssumeConfig[T metav1.Object] struct {
	// Description names the kind of object in errors and logs, e.g.
	// "PersistentVolume". Default "object".
	Description string
	// Indexes maps an index name to the function that returns an object's
	// values for that index (List(name, value) finds the objects whose
	// function returned value). The functions are called without any lock
	// held, once per stored version, and must not mutate the object.
	// Default: no indexes.
	Indexes map[string]func(T) []string
	// Logger receives the errors of informer events (objects of the wrong
	// type, without a name or with a non-integer resourceVersion), which
	// have no caller to return them to. Default: discard.
	Logger klog.Logger
}

// Assume is a cache of objects from an informer on top of which a caller may
// assume newer versions of single objects before the informer delivers them.
//
// For each key it holds the informer's object ("API object") and the latest
// object, which is either the same or an assumed one. Get and List return the
// latest object; GetAPIObj the informer's. An informer event whose version is
// at least the latest one replaces both; an older one (but not older than the
// API object) replaces only the API object, so an assumption survives events
// that predate it. A resync (OnUpdate with the same version in the old and
// new object) replaces an assumption only when strictly newer, so that an
// object assumed at the informer's version before it is written survives
// it. Assume refuses unknown keys and versions older than the
// latest; an equal version is accepted. Restore returns to the API object. An
// informer delete removes the key, assumed or not.
//
// Stored objects are the pointers given to Add, Update and Assume, shared with
// the informer and the callers: treat them as read-only.
//
// All methods are safe for concurrent use. Get, GetAPIObj, IsAssumed and Len
// take no lock at all, so reads on any number of cores never wait for each
// other or for writers. Writers serialise on one lock; List and IndexValues
// share it with each other and wait only for writers.
type Assume[T metav1.Object] struct {
	description string
	logger      klog.Logger
	seed        maphash.Seed

	// indexNames is sorted; indexFuncs[i] and version.idx[i] belong to
	// indexNames[i].
	indexNames []string
	indexFuncs []func(T) []string

	// tab is the current key table, read without locks and replaced under
	// mu. tomb marks its deleted slots.
	tab  atomic.Pointer[table[T]]
	tomb *entry[T]
	// live is the number of keys.
	live atomic.Int64

	// mu serialises writers. It guards indexes, the contents of tab and
	// its replacement, and the versions of every entry.
	mu sync.RWMutex
	// indexes[i] maps a value of index i to the entries whose latest
	// version has that value.
	indexes []map[string]*entrySet[*entry[T]]
}

// entry is the state of one key; its table slot holds its key and the
// latest object for Get. Its pointers are written under Assume.mu and read
// without it.
type entry[T metav1.Object] struct {
	// latest and api are the latest (possibly assumed) and the informer's
	// versions; latest == api when nothing is assumed.
	latest atomic.Pointer[version[T]]
	api    atomic.Pointer[version[T]]
}

// version is one stored object with its parsed resourceVersion and index
// values. It is immutable once published.
type version[T metav1.Object] struct {
	obj T
	rv  uint64
	// idx[i] holds the object's values for index i.
	idx [][]string
	// one backs idx when there is a single index, saving an allocation.
	one [1][]string
}

// setLatestLocked publishes v as the latest version of the entry in slot s.
func (s *slot[T]) setLatestLocked(v *version[T]) {
	s.e.Load().latest.Store(v)
	s.obj.Store(box[T]{v.obj})
}

// NewAssume returns an empty Assume cache. It starts no goroutines; feed it
// by registering it on an informer (it is a ResourceEventHandler) or by
// calling Add, Update and Delete.
func NewAssume[T metav1.Object](cfg AssumeConfig[T]) *Assume[T] {
	c := &Assume[T]{
		description: cfg.Description,
		logger:      cfg.Logger,
		seed:        maphash.MakeSeed(),
		tomb:        &entry[T]{},
	}
	if c.description == "" {
		c.description = "object"
	}
	c.tab.Store(newTable[T](minTableSize))
	for name, f := range cfg.Indexes {
		if f != nil {
			c.indexNames = append(c.indexNames, name)
		}
	}
	sort.Strings(c.indexNames)
	c.indexFuncs = make([]func(T) []string, len(c.indexNames))
	c.indexes = make([]map[string]*entrySet[*entry[T]], len(c.indexNames))
	for i, name := range c.indexNames {
		c.indexFuncs[i] = cfg.Indexes[name]
		c.indexes[i] = make(map[string]*entrySet[*entry[T]])
	}
	return c
}

// Description returns the kind of object named in errors.
func (c *Assume[T]) Description() string { return c.description }

// IndexNames returns the names of the configured indexes, sorted.
func (c *Assume[T]) IndexNames() []string { return slices.Clone(c.indexNames) }

// newVersion checks obj and computes what the cache stores for it. It calls
// the index functions, so it runs without locks.
func (c *Assume[T]) newVersion(obj T) (string, *version[T], error) {
	key, rv, err := objectVersion(c.description, obj)
	if err != nil {
		return "", nil, err
	}
	v := &version[T]{obj: obj, rv: rv}
	if len(c.indexFuncs) > 0 {
		if len(c.indexFuncs) == 1 {
			v.idx = v.one[:]
		} else {
			v.idx = make([][]string, len(c.indexFuncs))
		}
		for i, f := range c.indexFuncs {
			v.idx[i] = f(obj)
		}
	}
	return key, v, nil
}

// lookup returns the entry of key, or nil, without locks.
func (c *Assume[T]) lookup(key string) *entry[T] {
	s := c.tab.Load().find(maphash.String(c.seed, key), key, c.tomb)
	if s == nil {
		return nil
	}
	e := s.e.Load()
	if e == c.tomb {
		// Deleted since find saw it.
		return nil
	}
	return e
}

// Get returns the latest object of key, assumed or from the informer. The
// object is shared: do not mutate it. It takes no lock and never blocks.
func (c *Assume[T]) Get(key string) (T, bool) {
	return c.tab.Load().get(maphash.String(c.seed, key), key, c.tomb)
}

// GetAPIObj returns the informer's object of key, ignoring any assumption.
// The object is shared: do not mutate it. It takes no lock.
func (c *Assume[T]) GetAPIObj(key string) (T, bool) {
	e := c.lookup(key)
	if e == nil {
		var zero T
		return zero, false
	}
	return e.api.Load().obj, true
}

// Lookup is Get with an error for a missing key that names it and wraps
// ErrNotFound.
func (c *Assume[T]) Lookup(key string) (T, error) {
	obj, ok := c.Get(key)
	if !ok {
		return obj, fmt.Errorf("%s %q: %w", c.description, key, ErrNotFound)
	}
	return obj, nil
}

// LookupAPIObj is GetAPIObj with an error for a missing key that names it
// and wraps ErrNotFound.
func (c *Assume[T]) LookupAPIObj(key string) (T, error) {
	obj, ok := c.GetAPIObj(key)
	if !ok {
		return obj, fmt.Errorf("%s %q: %w", c.description, key, ErrNotFound)
	}
	return obj, nil
}

// IsAssumed reports whether key has an assumed object, i.e. its latest
// object is not the informer's (even at an equal resourceVersion).
func (c *Assume[T]) IsAssumed(key string) bool {
	e := c.lookup(key)
	return e != nil && e.latest.Load() != e.api.Load()
}

// ListAll returns the latest object of every key, in no particular order.
// The objects are shared: do not mutate them.
func (c *Assume[T]) ListAll() []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]T, 0, c.live.Load())
	c.tab.Load().all(c.tomb, func(_ string, e *entry[T]) {
		out = append(out, e.latest.Load().obj)
	})
	return out
}

// Len returns the number of keys. It takes no lock.
func (c *Assume[T]) Len() int {
	return int(c.live.Load())
}
