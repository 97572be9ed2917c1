package binder

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/binder/bindertest"
)

// failCreates makes the n first creates of volumes fail with "Mock
// creation error<i>", as Kubernetes' tests inject them.
func failCreates(n int) func(*testing.T, *env) {
	return func(_ *testing.T, e *env) {
		for i := 1; i <= n; i++ {
			e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbCreate, Kind: bindertest.KindVolume,
				Err: fmt.Errorf("Mock creation error%d", i), Nth: i})
		}
	}
}

// saveCfg provisions class "gold" with p as Provisioner (and, unless
// deleter is given, as its own Deleter), five create attempts a second
// apart as Kubernetes' createProvisionedPVRetryCount.
func saveCfg(provisioner func(*plugin) Provisioner) func(*env, *plugin) Config {
	return func(_ *env, p *plugin) Config {
		return Config{Provisioning: &ProvisioningConfig{
			Provisioners:         map[string]Provisioner{diskProvisioner: provisioner(p)},
			CreateVolumeRetries:  DefaultCreateVolumeRetries,
			CreateVolumeInterval: time.Second,
		}}
	}
}

// provisionOnly is a Provisioner that is not a Deleter.
type provisionOnly struct{ p *plugin }

func (o provisionOnly) Provision(ctx context.Context, req *ProvisionRequest) (*v1.PersistentVolume, error) {
	return o.p.Provision(ctx, req)
}

// failDeletes is saveCfg whose plugin fails its n first calls after
// Provision (its Deletes) with "Mock deletion error".
func failDeletes(n int) func(*env, *plugin) Config {
	return func(e *env, p *plugin) Config {
		p.onProvision = func(context.Context, *ProvisionRequest) {
			p.mu.Lock()
			p.fail, p.err = n, errors.New("Mock deletion error")
			p.mu.Unlock()
		}
		return saveCfg(func(p *plugin) Provisioner { return p })(e, p)
	}
}

// TestKubernetesProvisioningSave: provision_test.go's cases 11-8 to 11-12
// and 11-19, the creation of a provisioned volume's object and the
// clean-up of its storage when the object cannot be created, with
// Kubernetes' events. Deleting goes through a DeleterFactory's NewDeleter
// as Kubernetes' plugin NewDeleter.
func TestKubernetesProvisioningSave(t *testing.T) {
	t.Parallel()
	const (
		failed  = "Warning ProvisioningFailed Error creating provisioned PV object for claim default/%s: Mock creation error5. Deleting the volume."
		cleanup = "Warning ProvisioningCleanupFailed Error cleaning provisioned volume for claim default/%s: %s. Please delete manually."
		success = "Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-%s using " + diskProvisioner
	)
	plain := func(p *plugin) Provisioner { return p }
	annotated := func(claim string) map[string]map[string]string {
		return map[string]map[string]string{claim: {volume.AnnStorageProvisioner: diskProvisioner, volume.AnnBetaStorageProvisioner: diskProvisioner}}
	}
	runKCMCases(t, []kcmCase{{
		name:         "11-8 cannot save the provisioned volume once, the second try succeeds",
		objs:         objs(provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim11-8", "1Gi")),
		cfg:          saveCfg(plain),
		prepare:      failCreates(1),
		sync:         "claim/claim11-8",
		wantVolumes:  map[string]*volWant{"pvc-uid-claim11-8": {phase: v1.VolumePending}},
		wantClaimAnn: annotated("claim11-8"),
		wantEvents:   []string{fmt.Sprintf(success, "claim11-8")},
		wantWrites:   3, // the claim's annotations, two creates
		wantCalls:    []string{"provision pvc-uid-claim11-8"},
		stepClock:    true,
	}, {
		name:         "11-9 cannot save the provisioned volume, the storage is deleted",
		objs:         objs(provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim11-9", "1Gi")),
		cfg:          saveCfg(plain),
		prepare:      failCreates(5),
		sync:         "claim/claim11-9",
		wantVolumes:  map[string]*volWant{"pvc-uid-claim11-9": nil},
		wantClaimAnn: annotated("claim11-9"),
		wantEvents:   []string{fmt.Sprintf(failed, "claim11-9")},
		wantWrites:   6, // the claim's annotations, five creates
		wantCalls:    []string{"provision pvc-uid-claim11-9", "delete pvc-uid-claim11-9"},
		stepClock:    true,
	}, {
		name: "11-10 cannot save the provisioned volume, the plugin's NewDeleter fails",
		objs: objs(provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim11-10", "1Gi")),
		cfg: saveCfg(func(p *plugin) Provisioner {
			return factory{plugin: p, err: errors.New("Mock plugin error: no deleteCalls configured")}
		}),
		prepare:      failCreates(5),
		sync:         "claim/claim11-10",
		wantVolumes:  map[string]*volWant{"pvc-uid-claim11-10": nil},
		wantClaimAnn: annotated("claim11-10"),
		wantEvents: []string{fmt.Sprintf(failed, "claim11-10"), fmt.Sprintf(cleanup, "claim11-10",
			`failed to create deleter for volume "pvc-uid-claim11-10": Mock plugin error: no deleteCalls configured`)},
		wantWrites: 6, // the claim's annotations, five creates
		wantCalls:  []string{"provision pvc-uid-claim11-10"},
		stepClock:  true,
	}, {
		name:         "11-10 cannot save the provisioned volume, no Deleter for the provisioner",
		objs:         objs(provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim11-10", "1Gi")),
		cfg:          saveCfg(func(p *plugin) Provisioner { return provisionOnly{p} }),
		prepare:      failCreates(5),
		sync:         "claim/claim11-10",
		wantClaimAnn: annotated("claim11-10"),
		wantEvents:   []string{fmt.Sprintf(failed, "claim11-10"), fmt.Sprintf(cleanup, "claim11-10", "no deletable volume plugin matched")},
		wantWrites:   6, // the claim's annotations, five creates
		wantCalls:    []string{"provision pvc-uid-claim11-10"},
		stepClock:    true,
	}, {
		name:         "11-11 cannot save the provisioned volume, the Deleter fails five times",
		objs:         objs(provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim11-11", "1Gi")),
		cfg:          failDeletes(5),
		prepare:      failCreates(5),
		sync:         "claim/claim11-11",
		wantClaimAnn: annotated("claim11-11"),
		wantEvents:   []string{fmt.Sprintf(failed, "claim11-11"), fmt.Sprintf(cleanup, "claim11-11", "Mock deletion error")},
		wantWrites:   6, // the claim's annotations, five creates
		wantCalls: []string{"provision pvc-uid-claim11-11", "delete pvc-uid-claim11-11", "delete pvc-uid-claim11-11",
			"delete pvc-uid-claim11-11", "delete pvc-uid-claim11-11", "delete pvc-uid-claim11-11"},
		stepClock: true,
	}, {
		name:         "11-12 cannot save the provisioned volume, the Deleter succeeds the second time",
		objs:         objs(provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim11-12", "1Gi")),
		cfg:          failDeletes(1),
		prepare:      failCreates(5),
		sync:         "claim/claim11-12",
		wantClaimAnn: annotated("claim11-12"),
		wantEvents:   []string{fmt.Sprintf(failed, "claim11-12")},
		wantWrites:   6, // the claim's annotations, five creates
		wantCalls:    []string{"provision pvc-uid-claim11-12", "delete pvc-uid-claim11-12", "delete pvc-uid-claim11-12"},
		stepClock:    true,
	}, {
		name: "11-19 the first save was applied but answered with an error, the second gets AlreadyExists",
		objs: objs(provClass("gold", diskProvisioner, storagev1.VolumeBindingImmediate), goldClaim("claim11-19", "1Gi")),
		cfg:  saveCfg(plain),
		prepare: func(_ *testing.T, e *env) {
			// As Kubernetes' test, the volume is not actually created:
			// AlreadyExists alone makes the save a success.
			e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbCreate, Kind: bindertest.KindVolume, Err: errors.New("Mock creation error1"), Nth: 1})
			e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbCreate, Kind: bindertest.KindVolume,
				Err: apierrors.NewAlreadyExists(schema.GroupResource{Resource: "persistentvolumes"}, ""), Nth: 2})
		},
		sync:         "claim/claim11-19",
		wantVolumes:  map[string]*volWant{"pvc-uid-claim11-19": nil},
		wantClaimAnn: annotated("claim11-19"),
		wantEvents:   []string{fmt.Sprintf(success, "claim11-19")},
		wantWrites:   3, // the claim's annotations, two creates
		wantCalls:    []string{"provision pvc-uid-claim11-19"},
		stepClock:    true,
	}})
}
