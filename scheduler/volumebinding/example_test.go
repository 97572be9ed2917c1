package volumebinding_test

import (
	"fmt"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/volbind/volbind/scheduler/volumebinding"
)

// A kube-scheduler command with the plugin registered, its metrics in the
// scheduler's registry: enable "VolbindVolumeBinding" and disable
// "VolumeBinding" in the profile (scheduler/examples/config.yaml).
func ExampleNewFactory() {
	f := volumebinding.NewFactory(volumebinding.Config{Registerer: legacyregistry.Registerer()})
	cmd := app.NewSchedulerCommand(app.WithPlugin(volumebinding.Name, f.New))
	fmt.Println(cmd.Use, volumebinding.Name)
	// Output: kube-scheduler VolbindVolumeBinding
}
