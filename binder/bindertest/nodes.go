package bindertest

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// ListNodes returns deep copies of every node, by name. With GetNode it
// makes the Server a binder.NodeGetter, so tests and simulations pass the
// Server itself as ProvisioningConfig.Nodes. Like List it reads memory
// directly: it is not counted in Stats and injects no faults; it fails only
// when ctx is done.
func (s *Server) ListNodes(ctx context.Context) ([]*v1.Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return listTyped[*v1.Node](s, KindNode), nil
}
