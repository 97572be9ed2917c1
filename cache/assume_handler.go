package cache

import (
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
)

// OnAdd implements client-go's ResourceEventHandler: it stores obj as Update
// does. Objects that are not a T are logged and ignored.
func (c *Assume[T]) OnAdd(obj any, _ bool) {
	c.onObject("add", obj)
}

// OnUpdate implements client-go's ResourceEventHandler: it stores newObj as
// Update does, except that a resync (oldObj and newObj have the same
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
// object's key as Delete does, including for a
// toolscache.DeletedFinalStateUnknown (a delete the informer noticed only on
// relist), whose key it uses.
func (c *Assume[T]) OnDelete(obj any) {
	switch o := obj.(type) {
	case toolscache.DeletedFinalStateUnknown:
		c.DeleteKey(o.Key)
	case *toolscache.DeletedFinalStateUnknown:
		if o == nil {
			c.logWrongType("delete", obj)
			return
		}
		c.DeleteKey(o.Key)
	case T:
		c.Delete(o)
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
	c.logger.Error(fmt.Errorf("%s event: got %T, want %T", c.description, obj, any(want)), "Ignoring informer event", "cache", c.description, "event", event)
}
