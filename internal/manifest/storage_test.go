package manifest

import (
	"strings"
	"testing"
)

// storageList is the shape of `kubectl get csidrivers,csistoragecapacities
// -A -o yaml`: a v1 List of storage.k8s.io objects.
const storageList = `apiVersion: v1
kind: List
items:
- apiVersion: storage.k8s.io/v1
  kind: CSIDriver
  metadata:
    name: disk.csi.example.com
  spec:
    storageCapacity: true
- apiVersion: storage.k8s.io/v1
  kind: CSIStorageCapacity
  metadata:
    name: csisc-zone-a
    namespace: kube-system
  storageClassName: fast
  nodeTopology:
    matchLabels:
      topology.kubernetes.io/zone: zone-a
  capacity: 100Gi
  maximumVolumeSize: 50Gi
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata:
    name: fast
  provisioner: disk.csi.example.com
`

// With Options.Storage, CSIDrivers and CSIStorageCapacities are kept;
// without, they are skipped with a warning, as before.
func TestLoadStorageObjects(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{true, false} {
		got, err := LoadFiles([]string{"-"}, strings.NewReader(storageList), Options{Storage: keep})
		if err != nil {
			t.Fatalf("Storage=%t: LoadFiles: %v", keep, err)
		}
		drivers, capacities, warnings := len(got.CSIDrivers), len(got.Capacities), len(got.Warnings)
		if keep && (drivers != 1 || capacities != 1 || warnings != 0 || got.Capacities[0].MaximumVolumeSize.String() != "50Gi") {
			t.Errorf("Storage=true: %d drivers, %d capacities, warnings %q; want 1, 1 (max 50Gi), none", drivers, capacities, got.Warnings)
		}
		if !keep && (drivers != 0 || capacities != 0 || warnings != 2) {
			t.Errorf("Storage=false: %d drivers, %d capacities, warnings %q; want 0, 0 and two warnings", drivers, capacities, got.Warnings)
		}
		if len(got.Classes) != 1 {
			t.Errorf("Storage=%t: %d classes, want 1", keep, len(got.Classes))
		}
	}
}
