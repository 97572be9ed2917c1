package controller

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
)

const (
	scraperToken  = "scraper-token"  // TokenReview: user "scraper", allowed /metrics
	intruderToken = "intruder-token" // TokenReview: user "intruder", denied
	profilerToken = "profiler-token" // TokenReview: user "profiler", allowed /debug/*
)

// reviewer is a fake API server for TokenReview and SubjectAccessReview:
// scraperToken is user "scraper", who may get /metrics; profilerToken is
// user "profiler", who may get and put /debug/*; intruderToken is user
// "intruder", who may do nothing; other tokens are not authenticated. The
// delegating webhooks need a REST client, so this is an HTTP server, not
// client-go's fake clientset.
func reviewer(t *testing.T) (kubernetes.Interface, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var out any
		switch {
		case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
			var tr authenticationv1.TokenReview
			if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			switch tr.Spec.Token {
			case scraperToken:
				tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "scraper"}}
			case intruderToken:
				tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "intruder"}}
			case profilerToken:
				tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "profiler"}}
			}
			out = &tr
		case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
			var sar authorizationv1.SubjectAccessReview
			if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			nr := sar.Spec.NonResourceAttributes
			switch {
			case nr == nil:
			case sar.Spec.User == "scraper":
				sar.Status.Allowed = nr.Path == "/metrics" && nr.Verb == "get"
			case sar.Spec.User == "profiler":
				sar.Status.Allowed = strings.HasPrefix(nr.Path, "/debug/") && (nr.Verb == "get" || nr.Verb == "put")
			}
			out = &sar
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	cfg.ContentType = "application/json"
	cfg.Transport = &http.Transport{DisableKeepAlives: true}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, srv.URL
}

// testServing is newServing on a loopback port with a self-signed
// certificate, delegating authentication and authorization to reviewer()
// through --authentication-kubeconfig and --authorization-kubeconfig.
func testServing(t *testing.T) (*serving, string) {
	t.Helper()
	return testServingWith(t, newControllerOptions())
}

// testServingWith is testServing with the other options of o.
func testServingWith(t *testing.T, o controllerOptions) (*serving, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, url := reviewer(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	config := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " + url + "}\n" +
		"users:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	o.SecureServing.Listener = ln
	o.SecureServing.BindPort = 0
	o.Authentication.RemoteKubeConfigFile = kc
	o.Authorization.RemoteKubeConfigFile = kc
	o.Authentication.SkipInClusterLookup = true // the reviewer has no ConfigMaps
	s, err := newServing(&o)
	if err != nil {
		t.Fatalf("newServing: %v", err)
	}
	return s, "https://" + ln.Addr().String()
}

// httpsGetAs fetches url with the bearer token (none if empty), trusting
// any certificate, without keeping the connection.
func httpsGetAs(t *testing.T, url, token string) (int, string) {
	t.Helper()
	code, body := httpsDo(t, http.MethodGet, url, token, "")
	return code, string(body)
}

// TestServingAuth checks who gets what: the health paths are always
// allowed; /metrics needs a token that TokenReview authenticates and
// SubjectAccessReview authorizes.
func TestServingAuth(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	s, base := testServing(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "test_total", Help: "A test counter."}))
	ready := false
	checks := healthChecks{
		election: leaderelection.NewLeaderHealthzAdaptor(time.Second),
		ready: healthz.NamedCheck("binder", func(*http.Request) error {
			if !ready {
				return errors.New("not ready")
			}
			return nil
		}),
	}
	ctx, cancel := context.WithCancel(t.Context())
	stopped, err := s.serve(ctx, s.handler(reg, checks))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-stopped }()

	tests := []struct {
		path, token string
		wantCode    int
		wantBody    string
	}{
		{path: "/metrics", wantCode: http.StatusForbidden},                       // anonymous
		{path: "/metrics", token: "bogus", wantCode: http.StatusUnauthorized},    // TokenReview says no
		{path: "/metrics", token: intruderToken, wantCode: http.StatusForbidden}, // SubjectAccessReview says no
		{path: "/metrics", token: scraperToken, wantCode: http.StatusOK, wantBody: "test_total 0"},
		{path: "/healthz", wantCode: http.StatusOK, wantBody: "ok"},
		{path: "/livez", wantCode: http.StatusOK, wantBody: "ok"},
		{path: "/healthz?verbose", wantCode: http.StatusOK, wantBody: "[+]leaderElection ok"},
		{path: "/readyz", wantCode: http.StatusInternalServerError, wantBody: "[-]binder failed"},
		{path: "/readyz", token: "bogus", wantCode: http.StatusUnauthorized}, // a bad token is refused everywhere
		{path: "/debug/pprof/", token: scraperToken, wantCode: http.StatusForbidden},
	}
	for _, tc := range tests {
		code, body := httpsGetAs(t, base+tc.path, tc.token)
		if code != tc.wantCode || !strings.Contains(body, tc.wantBody) {
			t.Errorf("GET %s (token %q) = %d %q, want %d containing %q", tc.path, tc.token, code, body, tc.wantCode, tc.wantBody)
		}
	}
	ready = true
	if code, body := httpsGetAs(t, base+"/readyz?verbose", ""); code != http.StatusOK || !strings.Contains(body, "[+]binder ok") {
		t.Errorf("/readyz when ready = %d %q", code, body)
	}
}

// TestNewServingDisabled checks that --secure-port=0 serves nothing.
func TestNewServingDisabled(t *testing.T) {
	t.Parallel()
	o := newControllerOptions()
	o.SecureServing.BindPort = 0
	s, err := newServing(&o)
	if s != nil || err != nil {
		t.Errorf("newServing(--secure-port=0) = %v, %v; want nil, nil", s, err)
	}
}

// TestNewServingSelfSigned checks that newServing listens with a
// self-signed certificate for localhost when no certificate is given.
func TestNewServingSelfSigned(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	o := newControllerOptions()
	o.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	o.SecureServing.BindPort = 0
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.SecureServing.Listener = ln
	s, err := newServing(&o)
	if err != nil {
		t.Fatalf("newServing: %v", err)
	}
	defer s.info.Listener.Close()
	if s.info.Cert == nil || s.authn.Authenticator == nil || s.authz.Authorizer == nil {
		t.Fatalf("serving = %+v, want a certificate, an authenticator and an authorizer", s)
	}
	cert, _ := s.info.Cert.CurrentCertKeyContent()
	if !strings.Contains(string(cert), "BEGIN CERTIFICATE") {
		t.Errorf("certificate = %q, want a PEM certificate", cert)
	}
}
