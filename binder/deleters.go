package binder

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
)

// DeleterFactory is implemented by a registered Deleter whose deleting
// needs a per-volume step that can fail first (Kubernetes' plugin
// NewDeleter: parse the volume's parameters, open a session): the Binder
// calls NewDeleter and then Delete on what it returns. A NewDeleter error
// makes the volume Failed with "failed to create deleter for volume
// "<name>": <error>" (Warning event VolumeFailedDelete) and is retried with
// backoff, as a Delete error is.
type DeleterFactory interface {
	Deleter
	// NewDeleter returns the Deleter of pv. pv is shared: do not modify
	// it.
	NewDeleter(ctx context.Context, pv *v1.PersistentVolume) (Deleter, error)
}

// ErrNoVolumePlugin is wrapped by the failure of a volume that no Deleter
// and no external provisioner can delete: its message is Kubernetes' ("no
// volume plugin matched").
var ErrNoVolumePlugin = errors.New("no volume plugin matched")

// deletePlugin returns the Deleter of pv and the name it is registered
// under, as Kubernetes' findDeletablePlugin: the one registered under the
// provisioner named by pv.kubernetes.io/provisioned-by; a nil Deleter and
// no error for a provisioner without a Deleter whose name does not start
// with "kubernetes.io/", for a volume migrated to CSI and for a CSI volume
// without a Deleter of its driver (an external provisioner deletes those);
// otherwise the one registered under its volume plugin (VolumePluginName),
// or an error wrapping ErrNoVolumePlugin.
func (b *Binder) deletePlugin(pv *v1.PersistentVolume) (string, Deleter, error) {
	deleters := b.cfg.Reclaim.Deleters
	if name := pv.Annotations[volume.AnnDynamicallyProvisioned]; name != "" {
		if d := deleters[name]; d != nil {
			return name, d, nil
		}
		if !strings.HasPrefix(name, "kubernetes.io/") {
			return name, nil, nil
		}
		return name, nil, fmt.Errorf("%w name: %s", ErrNoVolumePlugin, name)
	}
	if metav1.HasAnnotation(pv.ObjectMeta, volume.AnnMigratedTo) {
		return "", nil, nil
	}
	name := VolumePluginName(pv)
	if d := deleters[name]; name != "" && d != nil {
		return name, d, nil
	}
	if pv.Spec.CSI != nil {
		return name, nil, nil
	}
	return name, nil, fmt.Errorf("error getting deleter volume plugin for volume %q: %w", pv.Name, ErrNoVolumePlugin)
}

// findDeleter is deletePlugin followed by NewDeleter for a DeleterFactory.
func (b *Binder) findDeleter(ctx context.Context, pv *v1.PersistentVolume) (string, Deleter, error) {
	name, d, err := b.deletePlugin(pv)
	if d == nil || err != nil {
		return name, nil, err
	}
	vd, err := volumeDeleter(ctx, d, pv)
	return name, vd, err
}

// volumeDeleter returns the Deleter of pv: d itself, or what a
// DeleterFactory's NewDeleter makes for pv, as Kubernetes' doDeleteVolume
// makes one with the plugin's NewDeleter ("failed to create deleter for
// volume ...").
func volumeDeleter(ctx context.Context, d Deleter, pv *v1.PersistentVolume) (Deleter, error) {
	f, ok := d.(DeleterFactory)
	if !ok {
		return d, nil
	}
	nd, err := f.NewDeleter(ctx, pv)
	if err == nil && nd == nil {
		err = errors.New("no deleter returned")
	}
	if err != nil {
		return nil, fmt.Errorf("failed to create deleter for volume %q: %w", pv.Name, err)
	}
	return nd, nil
}
