package binder

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/clock"
)

// pendingAge is volbind_binder_pending_claim_max_age_seconds.
var pendingAge = prometheus.NewDesc(metricsNamespace+"_binder_pending_claim_max_age_seconds",
	"Age of the oldest Pending claim of the namespace and storage class, from its creation. Claims of a "+
		"WaitForFirstConsumer class that no pod has been scheduled for yet wait by design and are left out.",
	[]string{"namespace", "storage_class"}, nil)

// pendingCollector computes volbind_binder_pending_claim_max_age_seconds
// from the claim cache at each scrape: "a claim has been Pending for more
// than N minutes" is then one comparison, which the count of unbound
// claims cannot tell apart from a steady stream of claims bound at once.
type pendingCollector struct {
	claims func() []*v1.PersistentVolumeClaim
	// waits reports whether a claim waits for its first consumer.
	waits func(*v1.PersistentVolumeClaim) bool
	clock clock.PassiveClock
}

var _ prometheus.Collector = pendingCollector{}

// registerPending registers the Binder's pendingCollector on reg, when reg
// is not nil.
func registerPending(reg prometheus.Registerer, b *Binder) error {
	if reg == nil {
		return nil
	}
	c := pendingCollector{claims: b.store.claims.List, waits: b.waitsForConsumer, clock: b.cfg.Clock}
	if err := reg.Register(c); err != nil {
		return errors.Join(ErrInvalidConfig, err)
	}
	return nil
}

// waitsForConsumer reports whether claim is of a WaitForFirstConsumer class
// and no node was selected for it yet.
func (b *Binder) waitsForConsumer(claim *v1.PersistentVolumeClaim) bool {
	delay, err := b.classes.delayBinding(claim)
	return err == nil && delay && !volume.IsDelayBindingProvisioning(claim)
}

// Describe implements prometheus.Collector.
func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingAge }

// Collect implements prometheus.Collector.
func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	type key struct{ namespace, class string }
	now := c.clock.Now()
	oldest := map[key]float64{}
	for _, pvc := range c.claims() {
		if pvc.Status.Phase == v1.ClaimBound || pvc.Status.Phase == v1.ClaimLost || c.waits(pvc) {
			continue
		}
		k := key{pvc.Namespace, volume.GetPersistentVolumeClaimClass(pvc)}
		age := 0.0 // no creation time (an object that did not come from an API server)
		if created := pvc.CreationTimestamp; !created.IsZero() {
			age = max(now.Sub(created.Time).Seconds(), 0)
		}
		if cur, ok := oldest[k]; !ok || age > cur {
			oldest[k] = age
		}
	}
	for k, age := range oldest {
		ch <- prometheus.MustNewConstMetric(pendingAge, prometheus.GaugeValue, age, k.namespace, k.class)
	}
}
