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

// findDeleter returns the Deleter of pv, as Kubernetes' findDeletablePlugin
// followed by NewDeleter: the one registered under the provisioner named by
// pv.kubernetes.io/provisioned-by; (nil, nil) for a provisioner without a
// Deleter whose name does not start with "kubernetes.io/", for a volume
// migrated to CSI and for a CSI volume without a Deleter of its driver (an
// external provisioner deletes those); otherwise the one registered under
// its volume plugin (VolumePluginName), or an error wrapping
// ErrNoVolumePlugin.
func (b *Binder) findDeleter(ctx context.Context, pv *v1.PersistentVolume) (Deleter, error) {
	deleters := b.cfg.Reclaim.Deleters
	var d Deleter
	if name := pv.Annotations[volume.AnnDynamicallyProvisioned]; name != "" {
		d = deleters[name]
		if d == nil {
			if !strings.HasPrefix(name, "kubernetes.io/") {
				return nil, nil
			}
			return nil, fmt.Errorf("%w name: %s", ErrNoVolumePlugin, name)
		}
	} else {
		if metav1.HasAnnotation(pv.ObjectMeta, volume.AnnMigratedTo) {
			return nil, nil
		}
		if name := VolumePluginName(pv); name != "" {
			d = deleters[name]
		}
		if d == nil && pv.Spec.CSI != nil {
			return nil, nil
		}
		if d == nil {
			return nil, fmt.Errorf("error getting deleter volume plugin for volume %q: %w", pv.Name, ErrNoVolumePlugin)
		}
	}
	return volumeDeleter(ctx, d, pv)
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
