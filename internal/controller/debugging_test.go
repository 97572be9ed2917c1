package controller

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/healthz"
)

// httpsDo sends a request with the method, body and bearer token (none if
// empty) to url, trusting any certificate, and returns the status and
// body.
func httpsDo(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	client := &http.Client{Timeout: wait.ForeverTestTimeout, Transport: &http.Transport{
		DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return 0, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
	}
	return resp.StatusCode, raw
}

// serveDebugging serves the handler of "volbind controller" with the
// debugging options of o until the test ends and returns its base URL.
func serveDebugging(t *testing.T, o controllerOptions) string {
	t.Helper()
	s, base := testServingWith(t, o)
	ctx, cancel := context.WithCancel(t.Context())
	stopped, err := s.serve(ctx, s.handler(prometheus.NewRegistry(), healthChecks{ready: healthz.PingHealthz}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-stopped })
	return base
}

// TestProfiling checks the routes of --profiling (on by default, as in
// kube-controller-manager): who may fetch a profile, that what comes back
// is a profile pprof reads, and that --profiling=false serves none even to
// a user allowed to ask.
func TestProfiling(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the cleanups registered later
	on := serveDebugging(t, newControllerOptions())
	offOpts := newControllerOptions()
	offOpts.Debugging.EnableProfiling = false
	off := serveDebugging(t, offOpts)

	tests := []struct {
		name, base, method, path, token, body string
		wantCode                              int
		wantBody                              string
	}{
		{name: "anonymous", base: on, method: http.MethodGet, path: "/debug/pprof/heap", wantCode: http.StatusForbidden},
		{name: "bad token", base: on, method: http.MethodGet, path: "/debug/pprof/heap", token: "bogus", wantCode: http.StatusUnauthorized},
		{name: "no right", base: on, method: http.MethodGet, path: "/debug/pprof/heap", token: intruderToken, wantCode: http.StatusForbidden},
		{name: "metrics only", base: on, method: http.MethodGet, path: "/debug/pprof/heap", token: scraperToken, wantCode: http.StatusForbidden},
		{name: "index", base: on, method: http.MethodGet, path: "/debug/pprof/", token: profilerToken, wantCode: http.StatusOK, wantBody: "goroutine"},
		{name: "redirect to the index", base: on, method: http.MethodGet, path: "/debug/pprof", token: profilerToken, wantCode: http.StatusOK, wantBody: "heap"},
		{name: "goroutines as text", base: on, method: http.MethodGet, path: "/debug/pprof/goroutine?debug=1", token: profilerToken,
			wantCode: http.StatusOK, wantBody: "goroutine profile: total"},
		{name: "flags index", base: on, method: http.MethodGet, path: "/debug/flags/", token: profilerToken, wantCode: http.StatusOK, wantBody: "<tr>v<br>"},
		{name: "verbosity needs a PUT", base: on, method: http.MethodGet, path: "/debug/flags/v", token: profilerToken, wantCode: http.StatusNotAcceptable},
		{name: "verbosity must be a number", base: on, method: http.MethodPut, path: "/debug/flags/v", token: profilerToken, body: "loud",
			wantCode: http.StatusBadRequest},
		{name: "off: not served", base: off, method: http.MethodGet, path: "/debug/pprof/heap", token: profilerToken, wantCode: http.StatusNotFound},
		{name: "off: no flags", base: off, method: http.MethodGet, path: "/debug/flags/", token: profilerToken, wantCode: http.StatusNotFound},
		{name: "off: still authorized first", base: off, method: http.MethodGet, path: "/debug/pprof/heap", wantCode: http.StatusForbidden},
		{name: "off: metrics still served", base: off, method: http.MethodGet, path: "/metrics", token: scraperToken, wantCode: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := httpsDo(t, tc.method, tc.base+tc.path, tc.token, tc.body)
			if code != tc.wantCode || !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("%s %s (token %q) = %d %.300q, want %d containing %q", tc.method, tc.path, tc.token, code, body, tc.wantCode, tc.wantBody)
			}
		})
	}

	t.Run("heap profile", func(t *testing.T) {
		code, body := httpsDo(t, http.MethodGet, on+"/debug/pprof/heap?debug=1", profilerToken, "")
		if code != http.StatusOK || !bytes.HasPrefix(body, []byte("heap profile: ")) || !bytes.Contains(body, []byte("# runtime.MemStats")) {
			t.Errorf("GET /debug/pprof/heap?debug=1 = %d %.300q, want 200 with a heap profile as text", code, body)
		}
		// As "go tool pprof" fetches it: a gzipped protocol buffer.
		code, body = httpsDo(t, http.MethodGet, on+"/debug/pprof/heap", profilerToken, "")
		if code != http.StatusOK {
			t.Fatalf("GET /debug/pprof/heap = %d %.300q, want 200", code, body)
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("heap profile: %v", err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil || !bytes.Contains(raw, []byte("inuse_space")) {
			t.Errorf("heap profile = %d bytes (%v), want a profile with inuse_space samples", len(raw), err)
		}
	})
}

// TestDebuggingFlags checks the flags' names and defaults, which are
// kube-controller-manager's.
func TestDebuggingFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args                  []string
		profiling, contention bool
	}{
		{nil, true, false},
		{[]string{"--profiling=false"}, false, false},
		{[]string{"--contention-profiling"}, true, true},
	} {
		o, err := parseControllerFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatalf("parse %q: %v", tc.args, err)
		}
		if o.Debugging.EnableProfiling != tc.profiling || o.Debugging.EnableContentionProfiling != tc.contention {
			t.Errorf("parse %q: profiling %v, contention %v; want %v, %v", tc.args,
				o.Debugging.EnableProfiling, o.Debugging.EnableContentionProfiling, tc.profiling, tc.contention)
		}
	}
}
