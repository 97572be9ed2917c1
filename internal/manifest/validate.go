package manifest

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// maxListed is how many objects InvalidObjectsError names before it gives
// only a count.
const maxListed = 20

// InvalidObjectsError lists the loaded objects kube-apiserver would
// reject, each with where it was loaded from and every field in error.
type InvalidObjectsError struct {
	Problems []string
}

func (e *InvalidObjectsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d invalid object(s), which kube-apiserver would reject:", len(e.Problems))
	for i, p := range e.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Problems)-maxListed)
			break
		}
		b.WriteString("\n  " + p)
	}
	return b.String()
}

// validate checks every loaded object as kube-apiserver checks a create
// (bindertest.Validate) and returns an *InvalidObjectsError listing all
// the invalid ones.
func (l *Objects) validate() error {
	var problems []string
	for _, obj := range l.All() {
		if err := bindertest.Validate(obj); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", l.where(obj), err))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &InvalidObjectsError{Problems: problems}
}

// where returns the file and document an object was loaded from.
func (l *Objects) where(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "?"
	}
	name := cache.MetaObjectToName(m).String()
	if at, ok := l.seen[kindName(obj)+" "+name]; ok {
		return at
	}
	return kindName(obj) + " " + name
}

func kindName(obj runtime.Object) string {
	switch obj.(type) {
	case *v1.PersistentVolume:
		return "PersistentVolume"
	case *v1.PersistentVolumeClaim:
		return "PersistentVolumeClaim"
	case *storagev1.StorageClass:
		return "StorageClass"
	case *v1.Node:
		return "Node"
	case *v1.Pod:
		return "Pod"
	}
	return fmt.Sprintf("%T", obj)
}
