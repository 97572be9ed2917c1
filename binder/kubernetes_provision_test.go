package binder

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"
)

// Kubernetes-ID cases of provisioning, CSI migration and delayed binding;
// see kubernetes_cases_test.go for the runner.

// migrationCfg provisions class "gold" with p (registered under its
// provisioner too when that is in-tree) under the given migration.
func migrationCfg(m CSIMigration, provisioner string) func(*env, *plugin) Config {
	return func(_ *env, p *plugin) Config {
		return Config{CSIMigration: m, Provisioning: &ProvisioningConfig{
			Provisioners: map[string]Provisioner{provisioner: p, diskProvisioner: p}}}
	}
}

// TestKubernetesProvisioning: provision_test.go's cases about CSI
// migration (11-21), mount options (11-20) and the provisioner
// annotations, with Kubernetes' texts.
func TestKubernetesProvisioning(t *testing.T) {
	t.Parallel()
	external := func(driver string) string {
		return fmt.Sprintf("Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.", driver)
	}
	gold := func(prov string, mountOptions ...string) runtime.Object {
		sc := provClass("gold", prov, "Immediate")
		sc.MountOptions = mountOptions
		return sc
	}
	runKCMCases(t, []kcmCase{{
		name: "11-21 external provisioner for CSI migration (every name migrated)",
		objs: objs(gold(gcePlugin), goldClaim("claim11-21", "1Gi")),
		cfg:  migrationCfg(allMigrated{}, gcePlugin),
		sync: "claim/claim11-21",
		wantClaimAnn: map[string]map[string]string{"claim11-21": {
			volume.AnnStorageProvisioner: mockCSIDrv, volume.AnnBetaStorageProvisioner: mockCSIDrv, volume.AnnMigratedTo: mockCSIDrv}},
		wantEvents: []string{external(mockCSIDrv)},
		wantWrites: 1,
	}, {
		name: "migrated in-tree class (csi-translation-lib): handed to the CSI driver, the registered Provisioner is not called",
		objs: objs(gold(gcePlugin), goldClaim("claim1", "1Gi")),
		cfg:  migrationCfg(nil, gcePlugin),
		sync: "claim/claim1",
		// The annotation names the driver, which is not itself a migrated
		// plugin: no migrated-to, as kube-controller-manager v1.37 does.
		wantClaimAnn: map[string]map[string]string{"claim1": {
			volume.AnnStorageProvisioner: gceDriver, volume.AnnBetaStorageProvisioner: gceDriver, volume.AnnMigratedTo: ""}},
		wantEvents: []string{external(gceDriver)},
		wantWrites: 1,
	}, {
		name:         "migration disabled: the registered in-tree Provisioner provisions",
		objs:         objs(gold(gcePlugin), goldClaim("claim1", "1Gi")),
		cfg:          migrationCfg(TranslationLibMigration{Disabled: []string{gcePlugin}}, gcePlugin),
		sync:         "claim/claim1",
		wantClaimAnn: map[string]map[string]string{"claim1": {volume.AnnStorageProvisioner: gcePlugin, volume.AnnMigratedTo: ""}},
		wantEvents:   []string{"Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-claim1 using " + gcePlugin},
		wantWrites:   2, // claim annotations, volume created
		wantCalls:    []string{"provision pvc-uid-claim1"},
	}, {
		name: "11-20 provisioner without mount options, class with some: ProvisioningFailed",
		objs: objs(gold(diskProvisioner, "ro"), goldClaim("claim11-20", "1Gi")),
		cfg: func(_ *env, p *plugin) Config {
			return Config{Provisioning: &ProvisioningConfig{Provisioners: map[string]Provisioner{diskProvisioner: noMountOptions{p}}}}
		},
		sync: "claim/claim11-20",
		wantClaimAnn: map[string]map[string]string{"claim11-20": {
			volume.AnnStorageProvisioner: diskProvisioner, volume.AnnBetaStorageProvisioner: diskProvisioner}},
		wantEvents: []string{`Warning ProvisioningFailed Mount options are not supported by the provisioner but StorageClass "gold" has mount options [ro]`},
		wantWrites: 1,
	}, {
		name:         "claim with the GA provisioner annotation only: not written again for the beta one",
		objs:         objs(gold(diskProvisioner), goldClaim("claim1", "1Gi", pvcAnnValue(volume.AnnStorageProvisioner, diskProvisioner))),
		cfg:          migrationCfg(nil, diskProvisioner),
		sync:         "claim/claim1",
		wantClaimAnn: map[string]map[string]string{"claim1": {volume.AnnStorageProvisioner: diskProvisioner, volume.AnnBetaStorageProvisioner: ""}},
		wantEvents:   []string{"Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-claim1 using " + diskProvisioner},
		wantWrites:   1, // the volume only
		wantCalls:    []string{"provision pvc-uid-claim1"},
	}, {
		name:         "external provisioner, claim annotated GA only: no write, event only",
		objs:         objs(gold(externalProv), goldClaim("claim1", "1Gi", pvcAnnValue(volume.AnnStorageProvisioner, externalProv))),
		cfg:          migrationCfg(nil, diskProvisioner),
		sync:         "claim/claim1",
		wantClaimAnn: map[string]map[string]string{"claim1": {volume.AnnBetaStorageProvisioner: ""}},
		wantEvents:   []string{external(externalProv)},
	}, {
		name: "provisioned Delete volume with reclaim on: carries kubernetes.io/pv-controller",
		objs: objs(gold(diskProvisioner), goldClaim("claim1", "1Gi", pvcAnnValue(volume.AnnStorageProvisioner, diskProvisioner))),
		cfg: func(e *env, p *plugin) Config {
			c := migrationCfg(nil, diskProvisioner)(e, p)
			c.Reclaim = &ReclaimConfig{Deleters: map[string]Deleter{diskProvisioner: p}}
			return c
		},
		sync:        "claim/claim1",
		wantVolumes: map[string]*volWant{"pvc-uid-claim1": {phase: v1.VolumePending, finalizers: []string{FinalizerPVController}}},
		wantEvents:  []string{"Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-claim1 using " + diskProvisioner},
		wantWrites:  1,
		wantCalls:   []string{"provision pvc-uid-claim1"},
	}, {
		name:        "provisioned volume with reclaim off: no finalizer nothing would remove",
		objs:        objs(gold(diskProvisioner), goldClaim("claim1", "1Gi", pvcAnnValue(volume.AnnStorageProvisioner, diskProvisioner))),
		cfg:         migrationCfg(nil, diskProvisioner),
		sync:        "claim/claim1",
		wantVolumes: map[string]*volWant{"pvc-uid-claim1": {phase: v1.VolumePending}},
		wantEvents:  []string{"Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-claim1 using " + diskProvisioner},
		wantWrites:  1,
		wantCalls:   []string{"provision pvc-uid-claim1"},
	}})
}

// TestKubernetesAnnealMigration: pv_controller_test.go's
// TestAnnealMigrationAnnotations through the claim sync: the claim's
// migrated-to annotation follows its provisioner annotation (GA or beta),
// in one write.
func TestKubernetesAnnealMigration(t *testing.T) {
	t.Parallel()
	bound := func(ann ...string) []runtime.Object {
		opts := []pvcOpt{pvcBound("pv1")}
		for i := 0; i+1 < len(ann); i += 2 {
			opts = append(opts, pvcAnnValue(ann[i], ann[i+1]))
		}
		return objs(newPV("pv1", "10Gi", hostPath, boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound), pvAnn(volume.AnnBoundByController)),
			newPVC("claim1", "1Gi", opts...))
	}
	cfg := func(*env, *plugin) Config { return Config{} }
	runKCMCases(t, []kcmCase{{
		name: "migration on", objs: bound(volume.AnnStorageProvisioner, gcePlugin), cfg: cfg, sync: "claim/claim1",
		wantClaimAnn: map[string]map[string]string{"claim1": {volume.AnnMigratedTo: gceDriver}},
		wantWrites:   1,
	}, {
		name: "migration on with the beta annotation", objs: bound(volume.AnnBetaStorageProvisioner, gcePlugin), cfg: cfg, sync: "claim/claim1",
		wantClaimAnn: map[string]map[string]string{"claim1": {volume.AnnMigratedTo: gceDriver}},
		wantWrites:   1,
	}, {
		name: "migration off", objs: bound(volume.AnnStorageProvisioner, "kubernetes.io/rbd"), cfg: cfg, sync: "claim/claim1",
		wantClaimAnn: map[string]map[string]string{"claim1": {volume.AnnMigratedTo: ""}},
	}, {
		name: "migration off removes migrated-to (rollback)", objs: bound(volume.AnnStorageProvisioner, "kubernetes.io/rbd", volume.AnnMigratedTo, "rbd.csi.ceph.com"),
		cfg: cfg, sync: "claim/claim1",
		wantClaimAnn: map[string]map[string]string{"claim1": {volume.AnnMigratedTo: ""}},
		wantWrites:   1,
	}, {
		name: "no provisioner annotation: untouched", objs: bound(volume.AnnMigratedTo, gceDriver), cfg: cfg, sync: "claim/claim1",
		wantClaimAnn: map[string]map[string]string{"claim1": {volume.AnnMigratedTo: gceDriver}},
	}})
}

// TestWaitForPodScheduled: Kubernetes' emitEventForUnboundDelayBindingClaim
// names the unscheduled pods that use a claim waiting for its first
// consumer.
func TestWaitForPodScheduled(t *testing.T) {
	t.Parallel()
	wffc := func(extra ...runtime.Object) []runtime.Object {
		return append(objs(newClass("wffc", "WaitForFirstConsumer", false), newPVC("claim1", "1Gi", pvcClass(&[]string{"wffc"}[0]))), extra...)
	}
	withPods := func(e *env, _ *plugin) Config { return Config{Pods: serverPods{e.srv}} }
	runKCMCases(t, []kcmCase{{
		name: "no pod", objs: wffc(), cfg: withPods, sync: "claim/claim1",
		wantEvents: []string{"Normal WaitForFirstConsumer waiting for first consumer to be created before binding"},
	}, {
		name: "one unscheduled pod", objs: wffc(podUsing("pod1", "claim1", "", v1.PodPending), podUsing("pod0", "claim1", "node1", v1.PodPending)),
		cfg: withPods, sync: "claim/claim1",
		wantEvents: []string{"Normal WaitForPodScheduled waiting for pod pod1 to be scheduled"},
	}, {
		name: "two unscheduled pods and a terminated one", objs: wffc(podUsing("pod1", "claim1", "", v1.PodPending), podUsing("pod2", "claim1", "", v1.PodPending), podUsing("pod3", "claim1", "", v1.PodFailed)),
		cfg: withPods, sync: "claim/claim1",
		wantEvents: []string{"Normal WaitForPodScheduled waiting for pods pod1,pod2 to be scheduled"},
	}})
}
