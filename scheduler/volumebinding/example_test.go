package volumebinding_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/volbind/volbind/scheduler/volumebinding"
)

// The scheduler binary registers the plugin with
//
//	f := volumebinding.NewFactory(volumebinding.Config{Registerer: legacyregistry.Registerer()})
//	cmd := app.NewSchedulerCommand(app.WithPlugin(volumebinding.Name, f.New))
//
// and the framework calls f.New for each profile that enables it. Here the
// plugin is built on a framework handle of a fake client.
func ExampleNewFactory() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops the framework's metrics recorder
	cs := fake.NewClientset()
	inf := informers.NewSharedInformerFactory(cs, 0)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil,
		frameworkruntime.WithClientSet(cs), frameworkruntime.WithInformerFactory(inf))
	if err != nil {
		fmt.Println(err)
		return
	}
	f := volumebinding.NewFactory(volumebinding.Config{})
	pl, err := f.New(ctx, nil, fh) // nil args: the in-tree VolumeBindingArgs defaults
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pl.Name())
	// Output: VolbindVolumeBinding
}
