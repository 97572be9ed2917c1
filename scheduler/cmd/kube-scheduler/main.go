// Command kube-scheduler is Kubernetes' kube-scheduler with volbind's
// VolumeBinding plugin registered as "VolbindVolumeBinding". Enable it in a
// KubeSchedulerConfiguration profile in place of the in-tree VolumeBinding
// plugin (see scheduler/examples/config.yaml).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/volbind/volbind/scheduler/volumebinding"
)

func main() {
	f := volumebinding.NewFactory(volumebinding.Config{Registerer: legacyregistry.Registerer()})
	cmd := app.NewSchedulerCommand(app.WithPlugin(volumebinding.Name, f.New))
	os.Exit(cli.Run(cmd))
}
