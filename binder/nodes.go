package binder

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// ListerNodes is a NodeGetter that reads a client-go NodeLister (an
// informer's cache); it makes no API call and never blocks.
// NewForClientset uses it when provisioning is on and
// ProvisioningConfig.Nodes is nil.
type ListerNodes struct {
	// Lister is the node lister, e.g. factory.Core().V1().Nodes().Lister().
	Lister corelisters.NodeLister
}

var _ NodeGetter = ListerNodes{}

// GetNode returns the cached node (shared with the informer; do not
// modify it) or a NotFound error.
func (l ListerNodes) GetNode(_ context.Context, name string) (*v1.Node, error) {
	return l.Lister.Get(name)
}

// ListNodes returns every cached node (shared with the informer).
func (l ListerNodes) ListNodes(_ context.Context) ([]*v1.Node, error) {
	return l.Lister.List(labels.Everything())
}
