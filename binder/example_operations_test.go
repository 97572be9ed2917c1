package binder_test

import (
	"context"
	"fmt"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
)

// Drive the Binder step by step, without Run: SyncClaim starts the
// provisioning operation and WaitForOperations waits for it. The
// provisioned Delete volume carries Kubernetes' kubernetes.io/pv-controller
// finalizer, which the Binder removes once it has deleted the storage.
func ExampleBinder_WaitForOperations() {
	ctx := context.Background()
	srv := bindertest.New()
	p := hostPathProvisioner{root: "/srv/volumes"}
	b, err := binder.New(srv, binder.Config{
		Provisioning: &binder.ProvisioningConfig{Provisioners: map[string]binder.Provisioner{"example.com/hostpath": p}},
		Reclaim:      &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{"example.com/hostpath": p}},
	})
	if err != nil {
		panic(err)
	}
	defer srv.AddEventHandler(bindertest.KindStorageClass, b.ClassHandler())()
	defer srv.AddEventHandler(bindertest.KindVolume, b.VolumeHandler())()
	defer srv.AddEventHandler(bindertest.KindClaim, b.ClaimHandler())()
	// Class "local" of example.com/hostpath; claim default/data (UID 3f6c) of 1Gi.
	seedLocalClaim(ctx, srv, "1Gi")
	step := func(sync func() error) {
		if err := sync(); err != nil {
			panic(err)
		}
		if err := b.WaitForOperations(ctx); err != nil {
			panic(err)
		}
	}
	step(func() error { return b.SyncClaim(ctx, "default/data") }) // provisions pvc-3f6c
	step(func() error { return b.SyncClaim(ctx, "default/data") }) // binds the claim to it
	pv, _ := srv.GetVolume(ctx, "pvc-3f6c")
	fmt.Println(pv.Name, pv.Status.Phase, pv.Finalizers)

	if err := srv.DeleteClaim(ctx, "default", "data"); err != nil {
		panic(err)
	}
	step(func() error { return b.SyncVolume(ctx, "pvc-3f6c") }) // Released, storage and volume deleted
	fmt.Println("volumes left:", len(srv.Volumes()))
	// Output:
	// pvc-3f6c Bound [kubernetes.io/pv-controller]
	// volumes left: 0
}
