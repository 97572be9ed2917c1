package volumebinding

import (
	"context"

	fwk "k8s.io/kube-scheduler/framework"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
)

// EventsToRegister returns the events after which a pod this plugin
// rejected may fit, with their queueing hints: the in-tree plugin's own.
// Its hints in v1.37.2 read none of the plugin's fields (only the pod and
// the changed objects), so a zero VolumeBinding gives them; TestQueueingHints
// pins what they answer.
func (pl *Plugin) EventsToRegister(ctx context.Context) ([]fwk.ClusterEventWithHint, error) {
	return (&intree.VolumeBinding{}).EventsToRegister(ctx)
}
