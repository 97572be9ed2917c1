package binder

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
)

// An informer object the Binder cannot order is ignored: the Binder keeps
// the newest version of each object by its resourceVersion, which must be
// the integer an API server sets (etcd's revision). Objects of client-go's
// fake clientset have none, so a Binder on fake.NewClientset binds
// nothing; tests use binder/bindertest, which sets them as an API server
// does. The first ignored object is logged as
// an error at the default verbosity, with this hint; later ones at V(4).
// Every one is counted in volbind_binder_ignored_objects_total, as is
// every answer to a write that did not advance the resourceVersion
// (checkAnswer below).

// ignoredHint is the advice of the error log.
const ignoredHint = "The Binder orders objects by their resourceVersion, which must be the integer an API server sets; " +
	"objects of client-go's fake clientset have none: test with binder/bindertest, which sets them as an API server does. Further ignored objects are logged at V(4) and counted in volbind_binder_ignored_objects_total"

func newIgnoredCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Subsystem: "binder", Name: "ignored_objects_total",
		Help: "Informer objects and write answers the Binder ignored because it cannot order them, by resource and reason (invalid_version: no integer resourceVersion; invalid_object: no name; stale_answer: a write answered with a resourceVersion no newer than the one sent).",
	}, []string{"resource", "reason"})
}

// ignoreEvent reports an informer object that storeVolume or storeClaim
// refused with err.
func (b *Binder) ignoreEvent(resource string, obj klog.KMetadata, err error) {
	reason := "invalid_object"
	if errors.Is(err, cache.ErrInvalidVersion) {
		reason = "invalid_version"
	}
	if b.metrics != nil {
		b.metrics.ignored.WithLabelValues(resource, reason).Inc()
	}
	logger := b.cfg.Logger
	if b.ignoredLogged.CompareAndSwap(false, true) {
		logger.Error(err, "Ignoring an object the Binder cannot order", "resource", resource, "object", klog.KObj(obj), "hint", ignoredHint)
		return
	}
	logger.V(4).Info("Ignoring an object the Binder cannot order", "resource", resource, "object", klog.KObj(obj), "err", err)
}

// staleAnswerHint is the advice of the error log of a stale answer.
const staleAnswerHint = "kube-apiserver gives every write that changes an object a newer resourceVersion; client-go's fake clientset keeps the one sent: " +
	"wrap it with bindertest.AdvanceVersions, or test with bindertest's Server. The Binder cannot tell such an answer from the version it replaced and may repeat the write. " +
	"Further stale answers are logged at V(4) and counted in volbind_binder_ignored_objects_total"

// checkAnswer reports the answer out to the Binder's write of a version
// sent when its resourceVersion is no newer than sent: the cache, which keeps
// only newer versions, ignores it. kube-apiserver answers so only an
// update that changes nothing, which the Binder does not send; an API
// that never advances versions (client-go's fake clientset) answers so
// every write.
func (b *Binder) checkAnswer(resource, sent string, out metav1.Object) {
	if version(out.GetResourceVersion()) > version(sent) {
		return
	}
	if b.metrics != nil {
		b.metrics.ignored.WithLabelValues(resource, "stale_answer").Inc()
	}
	logger := b.cfg.Logger
	kv := []any{"resource", resource, "object", klog.KObj(out), "sentResourceVersion", sent, "answerResourceVersion", out.GetResourceVersion()}
	if b.staleAnswerLogged.CompareAndSwap(false, true) {
		logger.Error(nil, "The API server answered a write without advancing the resourceVersion", append(kv, "hint", staleAnswerHint)...)
		return
	}
	logger.V(4).Info("The API server answered a write without advancing the resourceVersion", kv...)
}
