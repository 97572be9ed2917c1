package controller

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/leaderelection"
	componentbaseconfig "k8s.io/component-base/config"
)

// serving is the HTTPS endpoint of "volbind controller", configured as
// kube-controller-manager configures its own: k8s.io/apiserver's secure
// serving, with requests authenticated by TokenReview and authorized by
// SubjectAccessReview, except the always-allowed paths.
type serving struct {
	info  *server.SecureServingInfo
	authn server.AuthenticationInfo
	authz server.AuthorizationInfo
	// debugging says which /debug routes are served (debugging.go).
	debugging componentbaseconfig.DebuggingConfiguration
}

// newServing applies the serving options: it listens on
// --bind-address:--secure-port (with a self-signed certificate when none
// is given) and builds the delegated authenticator and authorizer. It
// returns nil when --secure-port is 0.
func newServing(o *controllerOptions) (*serving, error) {
	if o.SecureServing.BindPort == 0 && o.SecureServing.Listener == nil {
		return nil, nil
	}
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("controller: self-signed certificate: %w", err)
	}
	s := &serving{debugging: o.Debugging}
	if err := o.SecureServing.ApplyTo(&s.info); err != nil {
		return nil, fmt.Errorf("controller: secure serving: %w", err)
	}
	if err := o.Authentication.ApplyTo(&s.authn, s.info, nil); err != nil {
		s.info.Listener.Close()
		return nil, fmt.Errorf("controller: delegated authentication: %w", err)
	}
	if err := o.Authorization.ApplyTo(&s.authz); err != nil {
		s.info.Listener.Close()
		return nil, fmt.Errorf("controller: delegated authorization: %w", err)
	}
	return s, nil
}

// healthChecks are the checks of /healthz, /livez and /readyz.
type healthChecks struct {
	// election fails /healthz and /livez when this replica holds the Lease
	// but has not renewed it for longer than the lease duration plus a
	// grace period; nil without leader election.
	election *leaderelection.HealthzAdaptor
	// ready is the readiness of the controller (see controllerState).
	ready healthz.HealthChecker
}

// handler serves /metrics from reg, the health checks and the profiles of
// --profiling, behind the authentication and authorization filters of
// k8s.io/apiserver, in the order kube-controller-manager stacks them.
func (s *serving) handler(reg prometheus.Gatherer, checks healthChecks) http.Handler {
	m := mux.NewPathRecorderMux("volbind")
	m.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	live := []healthz.HealthChecker{healthz.PingHealthz}
	if checks.election != nil {
		live = append(live, checks.election)
	}
	healthz.InstallHandler(m, live...)
	healthz.InstallLivezHandler(m, live...)
	healthz.InstallReadyzHandler(m, append([]healthz.HealthChecker{healthz.PingHealthz}, checks.ready)...)
	installDebugging(m, s.debugging)

	resolver := &apirequest.RequestInfoFactory{}
	var h http.Handler = m
	h = genericapifilters.WithAuthorization(h, s.authz.Authorizer, scheme.Codecs)
	h = genericapifilters.WithAuthentication(h, s.authn.Authenticator, genericapifilters.Unauthorized(scheme.Codecs), nil, nil)
	h = genericapifilters.WithRequestInfo(h, resolver)
	h = genericapifilters.WithCacheControl(h)
	h = genericfilters.WithHTTPLogging(h)
	h = genericfilters.WithPanicRecovery(h, resolver)
	return h
}

// serve serves h until ctx is done and returns a channel closed once the
// server and its certificate controllers have stopped.
func (s *serving) serve(ctx context.Context, h http.Handler) (<-chan struct{}, error) {
	stopped, _, err := s.info.Serve(h, 5*time.Second, ctx.Done())
	if err != nil {
		return nil, fmt.Errorf("controller: serve: %w", err)
	}
	return stopped, nil
}
