package chaos

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// runtimeObject and metaObject are the views of API objects a run needs.
type (
	runtimeObject = runtime.Object
	metaObject    = metav1.Object
)
