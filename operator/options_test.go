package operator_test

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/c5c3/reconciler-sdk/operator"
)

// A command line parses into the options, each flag starting from DefaultOptions.
func TestBindFlags(t *testing.T) {
	defaults := operator.DefaultOptions()
	cases := map[string]struct {
		reason string
		args   []string
		want   func(o *operator.Options)
		err    string
	}{
		"NoFlags": {
			reason: "Without flags the options are DefaultOptions.",
			want:   func(*operator.Options) {},
		},
		"EveryFlag": {
			reason: "Each flag sets its field.",
			args: []string{"--metrics-bind-address", "127.0.0.1:9090", "--metrics-cert-path", "/certs",
				"--health-probe-bind-address", ":9091", "--leader-elect=false", "--leader-election-namespace", "ops",
				"--namespace", "team-a", "--webhook-cert-path", "/webhook-certs", "--webhook-port", "10250"},
			want: func(o *operator.Options) {
				o.MetricsBindAddress, o.MetricsCertDir, o.HealthProbeBindAddress = "127.0.0.1:9090", "/certs", ":9091"
				o.LeaderElect, o.LeaderElectionNamespace, o.Namespace = false, "ops", "team-a"
				o.WebhookCertDir, o.WebhookPort = "/webhook-certs", 10250
			},
		},
		"PlainMetrics": {
			reason: "--metrics-secure=false is the one way to plain HTTP metrics.",
			args:   []string{"--metrics-secure=false"},
			want:   func(o *operator.Options) { o.InsecureMetrics = true },
		},
		"SecureMetricsWithoutValue": {
			reason: "--metrics-secure is a boolean flag: given alone it keeps metrics secure.",
			args:   []string{"--metrics-secure"},
			want:   func(*operator.Options) {},
		},
		"Sharded": {
			reason: "--sharded runs the replicas as members of a shard ring.",
			args:   []string{"--sharded"},
			want:   func(o *operator.Options) { o.Sharded = true },
		},
		"ShardSelectors": {
			reason: "--shard-selectors narrows a sharded replica's informers to its slice.",
			args:   []string{"--sharded=true", "--shard-selectors"},
			want:   func(o *operator.Options) { o.Sharded, o.ShardSelectors = true, true },
		},
		"NotSharded": {
			reason: "--sharded=false keeps the single active replica.",
			args:   []string{"--sharded=false", "--shard-selectors=false"},
			want:   func(*operator.Options) {},
		},
		"BadSharded": {
			reason: "A value of --sharded that is not a boolean is refused, naming the flag.",
			args:   []string{"--sharded=sometimes"},
			err:    "sharded",
		},
		"BadBoolean": {
			reason: "A value that is not a boolean is refused, naming the flag.",
			args:   []string{"--metrics-secure=maybe"},
			err:    "metrics-secure",
		},
		"BadPort": {
			reason: "A port that is not a number is refused, naming the flag.",
			args:   []string{"--webhook-port", "https"},
			err:    "webhook-port",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := operator.DefaultOptions()
			fs := flag.NewFlagSet("operator", flag.ContinueOnError)
			fs.SetOutput(discard{})
			opts.BindFlags(fs)
			err := fs.Parse(tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("\n%s\nParse(%q) = %v, want an error naming %q", tc.reason, tc.args, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := defaults
			tc.want(&want)
			if diff := cmp.Diff(want, opts, cmpopts.IgnoreFields(operator.Options{}, "Manager", "SetupWebhooks")); diff != "" {
				t.Errorf("\n%s\nParse(%q): -want +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

// discard swallows the flag set's usage output.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// The flags keep the names deployed manifests use, with the secure defaults as their
// help shows them.
func TestBindFlagsNamesAndDefaults(t *testing.T) {
	opts := operator.DefaultOptions()
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	got := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { got[f.Name] = f.DefValue })
	want := map[string]string{"health-probe-bind-address": ":8081", "leader-elect": "true", "leader-election-namespace": "",
		"metrics-bind-address": ":8080", "metrics-cert-path": "", "metrics-secure": "true", "namespace": "",
		"webhook-cert-path": "", "webhook-port": "9443", "sharded": "false", "shard-selectors": "false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags and their defaults: -want +got:\n%s", diff)
	}
}

// The defaults are secure: leader election on, /metrics over HTTPS behind the API
// server's authentication and authorization, offering HTTP/1.1 only and a self-signed
// certificate rather than one from a shared directory; the cache holds only the
// operator's own Secrets and ConfigMaps.
func TestDefaultOptionsAreSecure(t *testing.T) {
	opts := operator.DefaultOptions()
	opts.FieldManager, opts.LeaderElectionID = "memo-operator", "memo-operator.test"
	mo := opts.ManagerOptions()
	if !mo.LeaderElection || mo.LeaderElectionID != "memo-operator.test" {
		t.Errorf("leader election %v (Lease %q), want on with the Lease memo-operator.test", mo.LeaderElection, mo.LeaderElectionID)
	}
	if !mo.Metrics.SecureServing || mo.Metrics.FilterProvider == nil || mo.Metrics.CertDir != "" {
		t.Errorf("metrics: secure %v, filter %v, cert dir %q; want HTTPS behind authentication, a self-signed certificate",
			mo.Metrics.SecureServing, mo.Metrics.FilterProvider != nil, mo.Metrics.CertDir)
	}
	if len(mo.Metrics.TLSOpts) != 2 {
		t.Errorf("metrics TLS options: %d, want HTTP/1.1 only and the self-signed certificate", len(mo.Metrics.TLSOpts))
	}
	if mo.Metrics.BindAddress != operator.DefaultMetricsBindAddress || mo.HealthProbeBindAddress != operator.DefaultHealthProbeBindAddress {
		t.Errorf("addresses %q, %q; want the defaults", mo.Metrics.BindAddress, mo.HealthProbeBindAddress)
	}
	if len(mo.Cache.ByObject) != 2 || mo.Cache.DefaultNamespaces != nil {
		t.Errorf("cache: %d label-filtered kinds, namespaces %v; want Secrets and ConfigMaps by label, all namespaces",
			len(mo.Cache.ByObject), mo.Cache.DefaultNamespaces)
	}
	if mo.Client.Cache == nil || len(mo.Client.Cache.DisableFor) == 0 {
		t.Error("no kind is read past the cache, want reconcile.UncachedObjects")
	}
	if err := opts.Validate(); !errors.Is(err, operator.ErrInvalidOptions) || !strings.Contains(err.Error(), "Scheme") {
		t.Errorf("Validate without a scheme = %v, want ErrInvalidOptions naming the scheme", err)
	}
}

// ManagerOptions turns what the flags opened into manager options, and keeps the rest of
// Options.Manager.
func TestManagerOptions(t *testing.T) {
	opts := operator.DefaultOptions()
	opts.FieldManager, opts.Namespace, opts.InsecureMetrics, opts.LeaderElect = "memo-operator", "team-a", true, false
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "", "0"
	opts.Manager.Scheme = runtime.NewScheme()
	mo := opts.ManagerOptions()
	if mo.Metrics.SecureServing || mo.Metrics.FilterProvider != nil || mo.LeaderElection {
		t.Errorf("secure %v, filter %v, leader election %v; want plain metrics, no leader election",
			mo.Metrics.SecureServing, mo.Metrics.FilterProvider != nil, mo.LeaderElection)
	}
	if mo.Metrics.BindAddress != operator.DefaultMetricsBindAddress || mo.HealthProbeBindAddress != "0" {
		t.Errorf("addresses %q, %q; want the default metrics address for an empty one, probes off", mo.Metrics.BindAddress, mo.HealthProbeBindAddress)
	}
	if diff := cmp.Diff(map[string]cache.Config{"team-a": {}}, mo.Cache.DefaultNamespaces); diff != "" {
		t.Errorf("cache namespaces: -want +got:\n%s", diff)
	}
	if mo.Scheme != opts.Manager.Scheme {
		t.Error("the scheme of Options.Manager was not kept")
	}
}

// A sharded operator runs every replica active: ManagerOptions turns leader election off
// whatever --leader-elect says.
func TestManagerOptionsSharded(t *testing.T) {
	opts := operator.DefaultOptions()
	opts.FieldManager, opts.LeaderElectionID, opts.Sharded = "memo-operator", "memo-operator.test", true
	if mo := opts.ManagerOptions(); mo.LeaderElection {
		t.Error("leader election on with Sharded, want off")
	}
	opts.Sharded = false
	if mo := opts.ManagerOptions(); !mo.LeaderElection {
		t.Error("leader election off without Sharded, want --leader-elect's on")
	}
}

// Validate refuses what Run cannot run with, naming the flag, or the field without one.
func TestValidate(t *testing.T) {
	cases := map[string]struct {
		reason string
		change func(*operator.Options)
		want   string
	}{
		"Namespace":    {"--namespace must be a namespace name.", func(o *operator.Options) { o.Namespace = "Not_A_Namespace" }, `--namespace "Not_A_Namespace" is not a namespace name`},
		"MetricsAddr":  {"An address needs a port.", func(o *operator.Options) { o.MetricsBindAddress = "8080" }, `--metrics-bind-address "8080": want host:port or 0`},
		"MetricsPort":  {"A port is at most 65535.", func(o *operator.Options) { o.MetricsBindAddress = ":80800" }, `port "80800" is not a number from 0 to 65535`},
		"ProbeAddr":    {"A named port is refused.", func(o *operator.Options) { o.HealthProbeBindAddress = "localhost:http" }, `--health-probe-bind-address "localhost:http": port "http"`},
		"LeaseID":      {"Leader election needs a Lease name.", func(o *operator.Options) { o.LeaderElectionID = "" }, "--leader-elect needs Options.LeaderElectionID"},
		"LeaseNS":      {"The Lease's namespace must be a namespace name.", func(o *operator.Options) { o.LeaderElectionNamespace = "Kube_System" }, `--leader-election-namespace "Kube_System" is not a namespace name`},
		"CertNoTLS":    {"A certificate without TLS is a mistake.", func(o *operator.Options) { o.InsecureMetrics, o.MetricsCertDir = true, "/certs" }, `--metrics-cert-path "/certs" needs --metrics-secure`},
		"FieldManager": {"The field manager is required.", func(o *operator.Options) { o.FieldManager = "" }, "Options.FieldManager is empty"},
		"Scheme":       {"A scheme is required.", func(o *operator.Options) { o.Manager.Scheme = nil }, "Options.Manager.Scheme is nil and Options.AddToScheme is empty"},
		"SchemeToBuild": {"AddToScheme without a scheme builds one.", func(o *operator.Options) {
			o.Manager.Scheme, o.AddToScheme = nil, []func(*runtime.Scheme) error{corev1.AddToScheme}
		}, ""},
		"NegativePort":  {"A webhook port is not negative.", func(o *operator.Options) { o.WebhookPort = -1 }, "--webhook-port -1 is not a port from 1 to 65535"},
		"LargePort":     {"A webhook port is at most 65535.", func(o *operator.Options) { o.WebhookCertDir, o.WebhookPort = "/certs", 65536 }, "--webhook-port 65536 is not a port"},
		"DefaultPort":   {"Port 0 is DefaultWebhookPort.", func(o *operator.Options) { o.WebhookCertDir, o.WebhookPort = "/certs", 0 }, ""},
		"ProbesOffOK":   {"0 turns an endpoint off.", func(o *operator.Options) { o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0" }, ""},
		"NoLeaderNoID":  {"Without leader election no Lease name is needed.", func(o *operator.Options) { o.LeaderElect, o.LeaderElectionID = false, "" }, ""},
		"ShardedNoID":   {"A sharded operator elects no leader, so it needs no Lease name.", func(o *operator.Options) { o.Sharded, o.LeaderElectionID = true, "" }, ""},
		"DefaultsValid": {"The defaults with the required fields are valid.", func(*operator.Options) {}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := operator.DefaultOptions()
			opts.FieldManager, opts.LeaderElectionID, opts.Manager.Scheme = "memo-operator", "memo-operator.test", runtime.NewScheme()
			tc.change(&opts)
			err := opts.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("\n%s\nValidate() = %v, want nil", tc.reason, err)
				}
				return
			}
			if !errors.Is(err, operator.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("\n%s\nValidate() = %v, want ErrInvalidOptions saying %q", tc.reason, err, tc.want)
			}
		})
	}
}
