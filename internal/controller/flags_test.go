package controller

import (
	"bytes"
	"errors"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseControllerFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, o controllerOptions)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, o controllerOptions) {
			type plain struct {
				QPS                         float64
				Burst, Claims, Vols         int
				Resync, Delay               time.Duration
				ContentType, Lock, Name, NS string
				Recycler, LeaderElect       bool
				Lease, Renew, Retry         time.Duration
				Port                        int
				Format                      string
				AllowPaths                  []string
			}
			want := plain{20, 30, 32, 8, 15 * time.Second, 5 * time.Second, "application/vnd.kubernetes.protobuf", "leases", "volbind", "kube-system",
				true, true, 15 * time.Second, 10 * time.Second, 2 * time.Second, 10260, "text", []string{"/healthz", "/readyz", "/livez"}}
			got := plain{o.QPS, o.Burst, o.ClaimWorkers, o.VolumeWorkers, o.ResyncPeriod, o.AvailableDelay, o.ContentType, o.ResourceLock, o.LeaseName, o.LeaseNS,
				o.Recycler, o.LeaderElect, o.LeaseDuration, o.RenewDeadline, o.RetryPeriod, o.SecureServing.BindPort, o.Logs.Format, o.Authorization.AlwaysAllowPaths}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
			if pc := provisioning(o); !o.DynamicProvisioning || pc == nil || pc.Nodes == nil {
				t.Errorf("DynamicProvisioning = %v, provisioning = %+v; want on by default, as kube-controller-manager, with Nodes set (no node informer)", o.DynamicProvisioning, provisioning(o))
			}
			if !strings.Contains(o.Identity, "_") || len(o.Identity) < 38 {
				t.Errorf("Identity = %q, want host name, _ and a UUID", o.Identity)
			}
		}},
		{name: "every flag", args: []string{"--kubeconfig=/tmp/kc", "--master=https://api:6443", "--kube-api-qps=1000", "--kube-api-burst=2000",
			"--claim-workers=4", "--volume-workers=2", "--pvclaimbinder-sync-period=1m", "--v=3", "--vmodule=binder*=5",
			"--leader-elect=false", "--available-delay=0", "--kube-api-content-type=application/json", "--recycler=false",
			"--bind-address=127.0.0.1", "--secure-port=9443", "--authorization-always-allow-paths=/healthz",
			"--authentication-kubeconfig=/tmp/a", "--authorization-kubeconfig=/tmp/z"},
			check: func(t *testing.T, o controllerOptions) {
				if o.Kubeconfig != "/tmp/kc" || o.Master != "https://api:6443" || o.QPS != 1000 || o.Burst != 2000 || o.ClaimWorkers != 4 ||
					o.VolumeWorkers != 2 || o.ResyncPeriod != time.Minute || o.Logs.Verbosity != 3 ||
					len(o.Logs.VModule) != 1 || o.LeaderElect || o.AvailableDelay != 0 || o.ContentType != "application/json" || o.Recycler ||
					!o.SecureServing.BindAddress.Equal(net.ParseIP("127.0.0.1")) || o.SecureServing.BindPort != 9443 ||
					!cmp.Equal(o.Authorization.AlwaysAllowPaths, []string{"/healthz"}) ||
					o.Authentication.RemoteKubeConfigFile != "/tmp/a" || o.Authorization.RemoteKubeConfigFile != "/tmp/z" {
					t.Errorf("parsed = %+v", o)
				}
			}},
		{name: "lease flags", args: []string{"--leader-elect-resource-name", "b", "--leader-elect-resource-namespace", "ns", "--leader-elect-identity", "me",
			"--leader-elect-lease-duration", "30s", "--leader-elect-renew-deadline", "20s", "--leader-elect-retry-period", "5s", "--leader-elect-resource-lock=leases"},
			check: func(t *testing.T, o controllerOptions) {
				if o.LeaseName != "b" || o.LeaseNS != "ns" || o.Identity != "me" || o.LeaseDuration != 30*time.Second ||
					o.RenewDeadline != 20*time.Second || o.RetryPeriod != 5*time.Second {
					t.Errorf("parsed = %+v", o)
				}
			}},
		{name: "dynamic provisioning off", args: []string{"--enable-dynamic-provisioning=false"}, check: func(t *testing.T, o controllerOptions) {
			if o.DynamicProvisioning || provisioning(o) != nil {
				t.Errorf("DynamicProvisioning = %v, provisioning = %v; want off", o.DynamicProvisioning, provisioning(o))
			}
		}},
		{name: "deprecated --resync", args: []string{"--resync=2m"}, check: func(t *testing.T, o controllerOptions) {
			if o.ResyncPeriod != 2*time.Minute {
				t.Errorf("ResyncPeriod = %v, want 2m", o.ResyncPeriod)
			}
		}},
		{name: "new name wins over --resync", args: []string{"--resync=2m", "--pvclaimbinder-sync-period=3m"}, check: func(t *testing.T, o controllerOptions) {
			if o.ResyncPeriod != 3*time.Minute {
				t.Errorf("ResyncPeriod = %v, want 3m", o.ResyncPeriod)
			}
		}},
		{name: "deprecated --metrics-addr", args: []string{"--metrics-addr=127.0.0.2:8443"}, check: func(t *testing.T, o controllerOptions) {
			if o.SecureServing.BindPort != 8443 || !o.SecureServing.BindAddress.Equal(net.ParseIP("127.0.0.2")) {
				t.Errorf("serving on %v:%d, want 127.0.0.2:8443", o.SecureServing.BindAddress, o.SecureServing.BindPort)
			}
		}},
		{name: "deprecated --metrics-addr without host", args: []string{"--metrics-addr=:8080"}, check: func(t *testing.T, o controllerOptions) {
			if o.SecureServing.BindPort != 8080 || !o.SecureServing.BindAddress.Equal(net.ParseIP("0.0.0.0")) {
				t.Errorf("serving on %v:%d, want 0.0.0.0:8080", o.SecureServing.BindAddress, o.SecureServing.BindPort)
			}
		}},
		{name: "empty --metrics-addr turns serving off", args: []string{"--metrics-addr="}, check: func(t *testing.T, o controllerOptions) {
			if o.SecureServing.BindPort != 0 {
				t.Errorf("BindPort = %d, want 0", o.SecureServing.BindPort)
			}
		}},
		{name: "--secure-port=0 turns serving off", args: []string{"--secure-port=0"}, check: func(t *testing.T, o controllerOptions) {
			if o.SecureServing.BindPort != 0 {
				t.Errorf("BindPort = %d, want 0", o.SecureServing.BindPort)
			}
		}},
		{name: "bad lease timing is fine without leader election", args: []string{"--leader-elect=false", "--leader-elect-renew-deadline", "1h"},
			check: func(t *testing.T, o controllerOptions) {
				if o.LeaderElect {
					t.Errorf("LeaderElect = true")
				}
			}},
		{name: "json logs", args: []string{"--logging-format=json", "-v=2"}, check: func(t *testing.T, o controllerOptions) {
			if o.Logs.Format != "json" || o.Logs.Verbosity != 2 {
				t.Errorf("logs = %+v, want json at verbosity 2", o.Logs)
			}
		}},
		{name: "vmodule needs text logs", args: []string{"--logging-format=json", "--vmodule=binder*=5"}, wantErr: "vmodule"},
		{name: "zero qps", args: []string{"--kube-api-qps", "0"}, wantErr: "--kube-api-qps"},
		{name: "zero burst", args: []string{"--kube-api-burst", "0"}, wantErr: "--kube-api-burst"},
		{name: "zero workers", args: []string{"--claim-workers", "0"}, wantErr: "--claim-workers"},
		{name: "zero resync", args: []string{"--pvclaimbinder-sync-period", "0"}, wantErr: "--pvclaimbinder-sync-period"},
		{name: "negative available delay", args: []string{"--available-delay", "-1s"}, wantErr: "--available-delay"},
		{name: "unknown content type", args: []string{"--kube-api-content-type", "text/plain"}, wantErr: "--kube-api-content-type"},
		{name: "unknown logging format", args: []string{"--logging-format", "xml"}, wantErr: "xml"},
		{name: "bad --metrics-addr", args: []string{"--metrics-addr", "nohost"}, wantErr: "--metrics-addr"},
		{name: "bad --metrics-addr port", args: []string{"--metrics-addr", ":http"}, wantErr: "--metrics-addr"},
		{name: "bad secure port", args: []string{"--secure-port", "70000"}, wantErr: "secure-port"},
		{name: "configmap lock", args: []string{"--leader-elect-resource-lock", "configmapsleases"}, wantErr: "--leader-elect-resource-lock"},
		{name: "renew deadline beyond lease", args: []string{"--leader-elect-renew-deadline", "20s"}, wantErr: "--leader-elect-lease-duration"},
		{name: "retry period too close to renew deadline", args: []string{"--leader-elect-retry-period", "9s"}, wantErr: "--leader-elect-retry-period"},
		{name: "empty identity is the default", args: []string{"--leader-elect-identity", ""}, check: func(t *testing.T, o controllerOptions) {
			if !strings.Contains(o.Identity, "_") {
				t.Errorf("Identity = %q, want host name, _ and a UUID", o.Identity)
			}
		}},
		{name: "no Lease name", args: []string{"--leader-elect-resource-name", ""}, wantErr: "Lease name"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			o, err := parseControllerFlags(tc.args, &stderr)
			if !parsed(t, "parseControllerFlags", tc.args, err, tc.wantErr) {
				return
			}
			tc.check(t, o)
		})
	}
}

// TestControllerFlagsDeprecationWarning checks that an old name works and
// says what replaces it.
func TestControllerFlagsDeprecationWarning(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if _, err := parseControllerFlags([]string{"--resync=1m"}, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "--resync has been deprecated, use --pvclaimbinder-sync-period") {
		t.Errorf("stderr = %q, want a deprecation warning naming the new flag", stderr.String())
	}
}

// TestControllerHelp checks the help text: double-dash flags in
// kube-controller-manager's sections, deprecated names hidden.
func TestControllerHelp(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	_, err := parseControllerFlags([]string{"--help"}, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help = %v, want flag.ErrHelp", err)
	}
	help := stderr.String()
	wantContains(t, "help", help, "Generic flags:", "Secure serving flags:", "Authentication flags:", "Authorization flags:", "Logs flags:",
		"--kubeconfig", "--master", "--secure-port int", "--bind-address", "--authorization-always-allow-paths", "--logging-format",
		"--vmodule", "-v, --v Level", "--leader-elect-resource-lock", "--pvclaimbinder-sync-period", "--recycler", "--version")
	for _, hidden := range []string{"--metrics-addr", "--resync "} {
		if strings.Contains(help, hidden) {
			t.Errorf("help shows the deprecated %q", hidden)
		}
	}
}

// TestClientConfigLoadingRules checks that the client configuration comes
// from --kubeconfig, else $KUBECONFIG, and that --master overrides the
// server, as client-go's loading rules do.
func TestClientConfigLoadingRules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, server string) string {
		p := filepath.Join(dir, name)
		kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " + server + "}\n" +
			"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
		if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := write("env", "https://from-env:6443")
	explicit := write("explicit", "https://from-flag:6443")
	t.Setenv("KUBECONFIG", env)
	t.Setenv("HOME", dir) // no ~/.kube/config

	tests := []struct {
		name       string
		args       []string
		wantServer string
	}{
		{name: "$KUBECONFIG", wantServer: "https://from-env:6443"},
		{name: "--kubeconfig wins", args: []string{"--kubeconfig", explicit}, wantServer: "https://from-flag:6443"},
		{name: "--master overrides", args: []string{"--master", "https://master:6443"}, wantServer: "https://master:6443"},
	}
	for _, tc := range tests {
		o, err := parseControllerFlags(tc.args, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := o.restConfig()
		if err != nil {
			t.Fatalf("%s: restConfig: %v", tc.name, err)
		}
		if cfg.Host != tc.wantServer || cfg.BearerToken != "t" || cfg.UserAgent != "volbind-controller" || cfg.QPS != 20 {
			t.Errorf("%s: config host %q token %q agent %q qps %v; want %s", tc.name, cfg.Host, cfg.BearerToken, cfg.UserAgent, cfg.QPS, tc.wantServer)
		}
	}
}
