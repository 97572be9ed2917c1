package cache

import (
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/internal/shard"
)

// AssumeConfig configures an Assume cache. The zero value is valid.
type AssumeConfig[T metav1.Object] struct {
	// Description names the kind of object in errors and logs, e.g.
	// "PersistentVolume". Default "object".
	Description string
	// Logger receives the errors of informer events (objects of the wrong
	// type, without a name or with a non-integer resourceVersion), which
	// have no caller to return them to. The zero value means
	// klog.Background().
	Logger klog.Logger
}

// Assume is a cache of objects from an informer on top of which a caller may
// assume newer versions of single objects before the informer delivers them.
//
// For each key it holds the informer's object ("API object") and the latest
// object, which is either the same or an assumed one. Get returns the latest
// object; GetAPIObj the informer's. An informer event whose version is
// at least the latest one replaces both; an older one (but not older than the
// API object) replaces only the API object, so an assumption survives events
// that predate it. A resync (OnUpdate with the same version in the old and
// new object) replaces an assumption only when strictly newer, so that an
// object assumed at the informer's version before it is written survives
// it. Assume refuses unknown keys and versions older than the
// latest; an equal version is accepted. Restore returns to the API object. An
// informer delete removes the key, assumed or not.
//
// Stored objects are the pointers given to the handler methods and Assume,
// shared with the informer and the callers: treat them as read-only.
//
// All methods are safe for concurrent use. Get, GetAPIObj and IsAssumed take
// no lock at all, so reads on any number of cores never wait for each other
// or for writers. Writers serialise on one lock.
type Assume[T metav1.Object] struct {
	description string
	logger      klog.Logger
	hash        shard.Hasher

	// tab is the current key table, read without locks and replaced under
	// mu. tomb marks its deleted slots.
	tab  atomic.Pointer[table[T]]
	tomb *entry[T]
	// live is the number of keys.
	live atomic.Int64

	// mu serialises writers. It guards the contents of tab and its
	// replacement, and the versions of every entry.
	mu sync.Mutex
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

// version is one stored object with its parsed resourceVersion. It is
// immutable once published.
type version[T metav1.Object] struct {
	obj T
	rv  uint64
}

// setLatestLocked publishes v as the latest version of the entry in slot s.
func (s *slot[T]) setLatestLocked(v *version[T]) {
	s.e.Load().latest.Store(v)
	s.obj.Store(box[T]{v.obj})
}

// NewAssume returns an empty Assume cache. It starts no goroutines; feed it
// by registering it on an informer (it is a client-go
// ResourceEventHandler) or by calling its OnAdd, OnUpdate and OnDelete from
// another watch.
func NewAssume[T metav1.Object](cfg AssumeConfig[T]) *Assume[T] {
	c := &Assume[T]{
		description: cfg.Description,
		logger:      cfg.Logger,
		hash:        shard.NewHasher(),
		tomb:        &entry[T]{},
	}
	if c.description == "" {
		c.description = "object"
	}
	if c.logger.GetSink() == nil {
		c.logger = klog.Background()
	}
	c.tab.Store(newTable[T](minTableSize))
	return c
}

// newVersion checks obj and returns its key and what the cache stores for
// it.
func (c *Assume[T]) newVersion(obj T) (string, *version[T], error) {
	key, rv, err := objectVersion(c.description, obj)
	if err != nil {
		return "", nil, err
	}
	return key, &version[T]{obj: obj, rv: rv}, nil
}

// lookup returns the entry of key, or nil, without locks.
func (c *Assume[T]) lookup(key string) *entry[T] {
	s := c.tab.Load().find(c.hash.Sum(key), key, c.tomb)
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
	return c.tab.Load().get(c.hash.Sum(key), key, c.tomb)
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

// IsAssumed reports whether key has an assumed object, i.e. its latest
// object is not the informer's (even at an equal resourceVersion).
func (c *Assume[T]) IsAssumed(key string) bool {
	e := c.lookup(key)
	return e != nil && e.latest.Load() != e.api.Load()
}
