package cache

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// OnAdd implements client-go's ResourceEventHandler. It stores obj: a
// version at least as new as the latest replaces the latest and the
// informer's object (dropping an assumption it has caught up with); an older
// one that is not older than the informer's object replaces only that;
// anything older is ignored. Objects that are not a T, have no name or have
// a non-integer resourceVersion are logged and ignored.
func (c *Assume[T]) OnAdd(obj any, _ bool) {
	c.onObject("add", obj)
}

// OnUpdate implements client-go's ResourceEventHandler: it stores newObj as
// OnAdd does, except that a resync (oldObj and newObj have the same
// resourceVersion: the informer re-delivers what it already had) does not
// replace an object assumed at that same version, as the scheduler's volume
// binder assumes objects before writing them.
func (c *Assume[T]) OnUpdate(oldObj, newObj any) {
	o, ok := newObj.(T)
	if !ok {
		c.logWrongType("update", newObj)
		return
	}
	old, ok := oldObj.(T)
	resync := ok && !isNil(old) && !isNil(o) && old.GetResourceVersion() == o.GetResourceVersion()
	if _, err := c.inform(o, resync); err != nil {
		c.logger.Error(err, "Ignoring informer event", "cache", c.description, "event", "update")
	}
}

// OnDelete implements client-go's ResourceEventHandler: it removes the
// object's key with its informer's object and any assumed version, without
// checking versions (deletion is final), including for a
// toolscache.DeletedFinalStateUnknown (a delete the informer noticed only on
// relist), whose key it uses.
func (c *Assume[T]) OnDelete(obj any) {
	switch o := obj.(type) {
	case toolscache.DeletedFinalStateUnknown:
		c.deleteKey(o.Key)
	case *toolscache.DeletedFinalStateUnknown:
		if o == nil {
			c.logWrongType("delete", obj)
			return
		}
		c.deleteKey(o.Key)
	case T:
		if isNil(o) {
			c.logWrongType("delete", obj)
			return
		}
		c.deleteKey(keyOf(o))
	default:
		c.logWrongType("delete", obj)
	}
}

func (c *Assume[T]) onObject(event string, obj any) {
	o, ok := obj.(T)
	if !ok {
		c.logWrongType(event, obj)
		return
	}
	if _, err := c.inform(o, false); err != nil {
		c.logger.Error(err, "Ignoring informer event", "cache", c.description, "event", event)
	}
}

func (c *Assume[T]) logWrongType(event string, obj any) {
	var want T
	c.logger.Error(fmt.Errorf("cache: %s event: got %T, want %T", c.description, obj, any(want)), "Ignoring informer event", "cache", c.description, "event", event)
}

var _ toolscache.ResourceEventHandler = (*Assume[*v1.PersistentVolume])(nil)
