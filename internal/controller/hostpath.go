package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"

	v1 "k8s.io/api/core/v1"

	"github.com/volbind/volbind/binder"
)

// hostPathPlugin is the name of Kubernetes' in-tree host-path volume
// plugin, under which the controller registers hostPathDeleter.
const hostPathPlugin = "kubernetes.io/host-path"

// tmpPath is the paths the in-tree host-path deleter deletes: any that
// contains "/tmp/" followed by something (the expression is not anchored,
// as in Kubernetes).
var tmpPath = regexp.MustCompile("/tmp/.+")

// hostPathDeleter is kube-controller-manager's in-tree host-path deleter,
// which its PersistentVolume controller runs for released host-path volumes
// with the Delete policy, for development and single-node clusters: it
// removes the volume's directory on the host the controller runs on when
// the path matches tmpPath, and fails with Kubernetes' message for any
// other path (the volume becomes Failed, event VolumeFailedDelete). In a
// container, the directory is the container's own (nothing, with a
// read-only root filesystem); only the volume object is then deleted.
type hostPathDeleter struct{}

var _ binder.Deleter = hostPathDeleter{}

// Delete implements binder.Deleter.
func (hostPathDeleter) Delete(_ context.Context, pv *v1.PersistentVolume) error {
	if pv.Spec.HostPath == nil {
		return errors.New("spec.PersistentVolumeSource.HostPath is nil")
	}
	path := pv.Spec.HostPath.Path
	if !tmpPath.MatchString(path) {
		return fmt.Errorf("host_path deleter only supports /tmp/.+ but received provided %s", path)
	}
	return os.RemoveAll(path)
}
