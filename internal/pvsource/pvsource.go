// Package pvsource names the member of a PersistentVolumeSource union that
// a volume uses: its field name in the API (for messages) and the name of
// the Kubernetes volume plugin that serves it (for plugin lookups). One
// table serves package binder (plugin names) and package recycler (the
// source named in its errors), so that the two never disagree on a source.
package pvsource

import v1 "k8s.io/api/core/v1"

// Source is one member of the PersistentVolumeSource union.
type Source struct {
	// Field is the member's field name in the API ("nfs", "hostPath",
	// "awsElasticBlockStore", ...).
	Field string
	// Plugin is the name of the in-tree volume plugin that serves the
	// member ("kubernetes.io/nfs", ...); for CSI, the volume's driver; ""
	// when Kubernetes v1.37.2 has no such plugin (any more).
	Plugin string
	// Driver is the driver a CSI or FlexVolume source names, else "".
	Driver string
}

// member is one row of the table: the member's names and whether s sets it.
type member struct {
	field, plugin string
	set           func(s *v1.PersistentVolumeSource) bool
}

// members lists the union's members; CSI first, as a volume with more than
// one (invalid) is named after the first set.
var members = [...]member{
	{"csi", "", func(s *v1.PersistentVolumeSource) bool { return s.CSI != nil }},
	{"hostPath", "kubernetes.io/host-path", func(s *v1.PersistentVolumeSource) bool { return s.HostPath != nil }},
	{"nfs", "kubernetes.io/nfs", func(s *v1.PersistentVolumeSource) bool { return s.NFS != nil }},
	{"local", "kubernetes.io/local-volume", func(s *v1.PersistentVolumeSource) bool { return s.Local != nil }},
	{"gcePersistentDisk", "kubernetes.io/gce-pd", func(s *v1.PersistentVolumeSource) bool { return s.GCEPersistentDisk != nil }},
	{"awsElasticBlockStore", "kubernetes.io/aws-ebs", func(s *v1.PersistentVolumeSource) bool { return s.AWSElasticBlockStore != nil }},
	{"azureDisk", "kubernetes.io/azure-disk", func(s *v1.PersistentVolumeSource) bool { return s.AzureDisk != nil }},
	{"azureFile", "kubernetes.io/azure-file", func(s *v1.PersistentVolumeSource) bool { return s.AzureFile != nil }},
	{"cinder", "kubernetes.io/cinder", func(s *v1.PersistentVolumeSource) bool { return s.Cinder != nil }},
	{"vsphereVolume", "kubernetes.io/vsphere-volume", func(s *v1.PersistentVolumeSource) bool { return s.VsphereVolume != nil }},
	{"rbd", "kubernetes.io/rbd", func(s *v1.PersistentVolumeSource) bool { return s.RBD != nil }},
	{"cephfs", "kubernetes.io/cephfs", func(s *v1.PersistentVolumeSource) bool { return s.CephFS != nil }},
	{"iscsi", "kubernetes.io/iscsi", func(s *v1.PersistentVolumeSource) bool { return s.ISCSI != nil }},
	{"fc", "kubernetes.io/fc", func(s *v1.PersistentVolumeSource) bool { return s.FC != nil }},
	{"glusterfs", "", func(s *v1.PersistentVolumeSource) bool { return s.Glusterfs != nil }},
	{"flexVolume", "", func(s *v1.PersistentVolumeSource) bool { return s.FlexVolume != nil }},
	{"portworxVolume", "", func(s *v1.PersistentVolumeSource) bool { return s.PortworxVolume != nil }},
	{"scaleIO", "", func(s *v1.PersistentVolumeSource) bool { return s.ScaleIO != nil }},
	{"storageos", "", func(s *v1.PersistentVolumeSource) bool { return s.StorageOS != nil }},
	{"quobyte", "", func(s *v1.PersistentVolumeSource) bool { return s.Quobyte != nil }},
	{"flocker", "", func(s *v1.PersistentVolumeSource) bool { return s.Flocker != nil }},
	{"photonPersistentDisk", "", func(s *v1.PersistentVolumeSource) bool { return s.PhotonPersistentDisk != nil }},
}

// Of returns the first member s sets, and false when it sets none.
func Of(s *v1.PersistentVolumeSource) (Source, bool) {
	for _, m := range members {
		if !m.set(s) {
			continue
		}
		src := Source{Field: m.field, Plugin: m.plugin}
		switch m.field {
		case "csi":
			src.Driver, src.Plugin = s.CSI.Driver, s.CSI.Driver
		case "flexVolume":
			src.Driver = s.FlexVolume.Driver
		}
		return src, true
	}
	return Source{}, false
}
