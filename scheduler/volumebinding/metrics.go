package volumebinding

import (
	"github.com/prometheus/client_golang/prometheus"
	intreemetrics "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding/metrics"
)

// replacingRegisterer registers binder/scheduling's metrics in place of
// the in-tree plugin's collectors of the same names, which kube-scheduler
// registers at start whether or not VolumeBinding is enabled. Those are
// unregistered first; ours go in unchecked (no Describe), because a
// Prometheus registry remembers the help text of every name it has seen,
// and the in-tree help carries component-base's "[ALPHA] " prefix. Only
// our collectors then export those names, so a scrape stays consistent.
type replacingRegisterer struct {
	prometheus.Registerer
}

func newReplacingRegisterer(reg prometheus.Registerer) replacingRegisterer {
	reg.Unregister(intreemetrics.VolumeBindingRequestSchedulerBinderCache)
	reg.Unregister(intreemetrics.VolumeSchedulingStageFailed)
	return replacingRegisterer{reg}
}

// Register registers c unchecked.
func (r replacingRegisterer) Register(c prometheus.Collector) error {
	return r.Registerer.Register(unchecked{c})
}

// MustRegister registers cs unchecked and panics on the first error.
func (r replacingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// unchecked is a collector the registry does not check at registration.
type unchecked struct{ prometheus.Collector }

// Describe sends nothing, which makes the collector unchecked.
func (unchecked) Describe(chan<- *prometheus.Desc) {}
