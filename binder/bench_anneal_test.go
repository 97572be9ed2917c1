package binder

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
)

// BenchmarkAnneal measures what the migration-annotation and finalizer
// checks added at the start of every claim and volume sync cost when there
// is nothing to write: statically provisioned objects (most of a cluster)
// and provisioned ones of an internal and of a migrated provisioner.
func BenchmarkAnneal(b *testing.B) {
	bd := &Binder{cfg: Config{Reclaim: &ReclaimConfig{}, CSIMigration: TranslationLibMigration{}}}
	volumes := map[string]*v1.PersistentVolume{
		"static":      unusedPV("pv1", v1.PersistentVolumeReclaimDelete),
		"provisioned": unusedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy(mockPlugin), pvFinalizers(FinalizerPVController)),
		"migrated":    unusedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy(gcePlugin), func(pv *v1.PersistentVolume) { metav1SetAnn(pv, volume.AnnMigratedTo, gceDriver) }),
	}
	claims := map[string]*v1.PersistentVolumeClaim{
		"static":      newPVC("claim1", "1Gi"),
		"provisioned": newPVC("claim1", "1Gi", pvcAnnValue(volume.AnnStorageProvisioner, diskProvisioner)),
		"migrated":    newPVC("claim1", "1Gi", pvcAnnValue(volume.AnnStorageProvisioner, gcePlugin), pvcAnnValue(volume.AnnMigratedTo, gceDriver)),
	}
	for _, kind := range []string{"static", "provisioned", "migrated"} {
		pv, pvc := volumes[kind], claims[kind]
		b.Run("volume="+kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out, err := bd.annealVolume(b.Context(), pv); err != nil || out != pv {
					b.Fatalf("annealVolume wrote: %v", err)
				}
			}
		})
		b.Run("claim="+kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out, err := bd.annealClaimMigration(b.Context(), pvc); err != nil || out != pvc {
					b.Fatalf("annealClaimMigration wrote: %v", err)
				}
			}
		})
	}
}
