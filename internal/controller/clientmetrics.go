package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection" // leader_election_* metrics
	_ "k8s.io/component-base/metrics/prometheus/restclient"              // rest_client_* metrics
)

// metricsGatherer is what /metrics serves: reg, which holds the Binder's
// and the controller's metrics, and component-base's legacy registry. The
// component-base packages imported above install client-go's REST client
// and leader-election metrics there when the program starts, with the
// names, labels and buckets of kube-controller-manager, which imports
// them the same way; the legacy registry also holds the Go and process
// collectors. Client-go keeps one set of such adapters per process, so
// they cannot live on a registry of ours.
func metricsGatherer(reg prometheus.Gatherer) prometheus.Gatherer {
	return prometheus.Gatherers{reg, legacyregistry.DefaultGatherer}
}
