package manifest

import (
	"strings"
	"testing"
)

// storageList is the shape of `kubectl get csidrivers,csistoragecapacities,
// csinodes -A -o yaml`: a v1 List of storage.k8s.io objects.
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
  kind: CSINode
  metadata:
    name: node-1
    annotations:
      storage.alpha.kubernetes.io/migrated-plugins: kubernetes.io/aws-ebs
  spec:
    drivers:
    - name: ebs.csi.aws.com
      nodeID: i-0123
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata:
    name: fast
  provisioner: disk.csi.example.com
`

// With Options.Storage, CSIDrivers, CSIStorageCapacities and CSINodes are kept;
// without, they are skipped with a warning, as before.
func TestLoadStorageObjects(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{true, false} {
		got, err := LoadFiles([]string{"-"}, strings.NewReader(storageList), Options{Storage: keep})
		if err != nil {
			t.Fatalf("Storage=%t: LoadFiles: %v", keep, err)
		}
		drivers, capacities, csiNodes, warnings := len(got.CSIDrivers), len(got.Capacities), len(got.CSINodes), len(got.Warnings)
		if keep && (drivers != 1 || capacities != 1 || csiNodes != 1 || warnings != 0 ||
			got.Capacities[0].MaximumVolumeSize.String() != "50Gi" || got.CSINodes[0].Spec.Drivers[0].Name != "ebs.csi.aws.com") {
			t.Errorf("Storage=true: %d drivers, %d capacities, %d CSINodes, warnings %q; want 1, 1 (max 50Gi), 1 (driver ebs.csi.aws.com), none",
				drivers, capacities, csiNodes, got.Warnings)
		}
		if !keep && (drivers != 0 || capacities != 0 || csiNodes != 0 || warnings != 3) {
			t.Errorf("Storage=false: %d drivers, %d capacities, %d CSINodes, warnings %q; want 0, 0, 0 and three warnings",
				drivers, capacities, csiNodes, got.Warnings)
		}
		if len(got.Classes) != 1 {
			t.Errorf("Storage=%t: %d classes, want 1", keep, len(got.Classes))
		}
	}
}
