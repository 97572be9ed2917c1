package operations

import "k8s.io/apimachinery/pkg/types"

// VolumeOpName returns the operation name of op on the PersistentVolume
// pvName with the given UID, "<op>-<pvName>[<uid>]", for example
// "delete-pv-1[6f1c...]". The UID keeps an operation on a deleted volume
// apart from one on a new volume of the same name. An empty uid is left
// out: "<op>-<pvName>".
func VolumeOpName(op, pvName string, uid types.UID) string {
	if uid == "" {
		return op + "-" + pvName
	}
	return op + "-" + pvName + "[" + string(uid) + "]"
}

// ClaimOpName returns the operation name of op on the
// PersistentVolumeClaim namespace/name with the given UID,
// "<op>-<namespace>/<name>[<uid>]", for example
// "provision-default/data[0a2b...]". An empty uid is left out.
func ClaimOpName(op, namespace, name string, uid types.UID) string {
	if uid == "" {
		return op + "-" + namespace + "/" + name
	}
	return op + "-" + namespace + "/" + name + "[" + string(uid) + "]"
}
