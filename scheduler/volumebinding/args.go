package volumebinding

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// defaultBindTimeoutSeconds is kube-scheduler's default bindTimeoutSeconds.
const defaultBindTimeoutSeconds = 600

// args are the plugin's arguments: the in-tree plugin's VolumeBindingArgs
// (bindTimeoutSeconds, shape), so a profile's pluginConfig moves over as is.
type args struct {
	bindTimeout time.Duration
	shape       []config.UtilizationShapePoint
}

// decodeArgs reads obj (nil, *runtime.Unknown or a
// *configv1.VolumeBindingArgs), applies kube-scheduler's defaults and
// validates it with kube-scheduler's own rules.
func decodeArgs(obj runtime.Object, scoring bool) (args, error) {
	var in configv1.VolumeBindingArgs
	if err := frameworkruntime.DecodeInto(obj, &in); err != nil {
		return args{}, fmt.Errorf("%s args: %w", Name, err)
	}
	out := config.VolumeBindingArgs{BindTimeoutSeconds: defaultBindTimeoutSeconds}
	if in.BindTimeoutSeconds != nil {
		out.BindTimeoutSeconds = *in.BindTimeoutSeconds
	}
	for _, p := range in.Shape {
		out.Shape = append(out.Shape, config.UtilizationShapePoint{Utilization: p.Utilization, Score: p.Score})
	}
	if len(out.Shape) == 0 && scoring {
		out.Shape = []config.UtilizationShapePoint{
			{Utilization: 0, Score: int32(config.MaxCustomPriorityScore)},
			{Utilization: 100, Score: 0},
		}
	}
	opts := validation.VolumeBindingArgsValidationOptions{AllowStorageCapacityScoring: scoring}
	if err := validation.ValidateVolumeBindingArgsWithOptions(nil, &out, opts); err != nil {
		return args{}, fmt.Errorf("%s args: %w", Name, err)
	}
	return args{bindTimeout: time.Duration(out.BindTimeoutSeconds) * time.Second, shape: out.Shape}, nil
}
