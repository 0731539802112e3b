package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	katalogexamples "github.com/c5c3/reconciler-sdk/examples/katalog"
	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// mainArgsEnv, when set, makes the test binary run main with these arguments
// (separated by newlines) instead of the tests: how the exit codes are tested.
const mainArgsEnv = "KATALOG_TEST_MAIN_ARGS"

var env *testenv.Env

const examples = "../../examples/katalog"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Args = append([]string{"katalog"}, strings.Split(args, "\n")...)
		if args == "" {
			os.Args = os.Args[:1]
		}
		main()
		os.Exit(0)
	}
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Main(m, testenv.Options{
		CRDSources: []testenv.CRDSource{},
		CRDPaths:   []string{filepath.Join(examples, katalogexamples.CRDDir)},
	}, &env))
}

// badKatalog has an unknown field on line 9.
const badKatalog = `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata:
  name: bad
spec:
  crds:
    thing:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Thing, plural: things}
      colour: blue
`

func writeBad(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(p, []byte(badKatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The command's run, given a rest.Config and its flags, runs the example platform and
// database Katalogs in --namespace: the sample Database and Application reach Ready
// True and phase Ready (the test plays the Deployment controller and the registry),
// /readyz answers 200 once every CRD's informer synced, and the inspector answers
// GET /katalog/application/health with the engine's health and serves its pages. It
// runs as a user bound only to what `katalog rbac` prints, with leader election on
// (the Lease in --leader-election-namespace) and /metrics over HTTPS to an authorized
// scraper only.
func TestRunConvergesAndServesTheInspector(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != katalogexamples.RegistryHost || r.URL.Path != "/v2/nginx/manifests/latest" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(registry.Close)

	probes, metrics := testenv.FreeAddress(t), testenv.FreeAddress(t)
	fs := flag.NewFlagSet("katalog", flag.ContinueOnError)
	o, err := parseFlags(fs, []string{
		"--katalog", filepath.Join(examples, "platform.yaml") + "," + filepath.Join(examples, "database.yaml"),
		"--namespace", ns, "--metrics-bind-address", metrics, "--health-probe-bind-address", probes,
		"--inspector-bind-address", "127.0.0.1:0", "--leader-election-namespace", ns,
		"--outbound-allow", "127.0.0.1", // the registry stand-in listens there
	})
	if err != nil {
		t.Fatal(err)
	}
	// platform.yaml calls katalogexamples.RegistryHost: the stand-in plays it, reached
	// through the policy the flags set.
	if o.engine.HTTPClient, err = katalogexamples.StandInClient(registry.URL, o.engine.Outbound); err != nil {
		t.Fatal(err)
	}
	o.Manager.Controller.SkipNameValidation = new(true)
	o.engine.DependencyRetry = 200 * time.Millisecond
	o.engine.HealthWindow = 1
	inspector := make(chan string, 1)
	o.inspectorListening = func(url string) { inspector <- url }
	// The engine runs as a user bound only to the ClusterRole and the Role (in ns)
	// `katalog rbac` prints.
	var printed bytes.Buffer
	if err := printRBAC(&printed, []string{"--katalog", filepath.Join(examples, "platform.yaml"),
		"--katalog", filepath.Join(examples, "database.yaml"), "--name", "katalog-" + ns, "--namespace", ns}); err != nil {
		t.Fatal(err)
	}
	cr, leases := parseRBAC(t, printed.Bytes())
	cfg := env.ConfigAs(t, "katalog-"+ns, cr)
	bindRole(t, cfg, leases)
	scraper := metricsReader(t, ns)
	testenv.Go(t, func(ctx context.Context) error { return run(ctx, cfg, o) })

	var base string
	select {
	case base = <-inspector:
	case <-time.After(testenv.ConditionTimeout):
		t.Fatal("the inspector never listened")
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Errorf("the inspector on 127.0.0.1 serves %s, want plain HTTP", base)
	}

	samples, err := katalogexamples.Samples(examples)
	if err != nil {
		t.Fatal(err)
	}
	var created []*unstructured.Unstructured
	for _, s := range samples {
		if s.GetKind() == "RegionalApp" { // foreach.yaml is not given
			continue
		}
		s.SetNamespace(ns)
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		created = append(created, s)
	}

	deadline := time.Now().Add(2 * testenv.ConditionTimeout)
	for {
		var deps appsv1.DeploymentList
		if err := env.Client.List(ctx, &deps, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, d := range deps.Items {
			if d.Status.ReadyReplicas == 0 {
				if _, err := simulate.MarkDeploymentAvailable(ctx, env.Client, client.ObjectKeyFromObject(&d)); err != nil {
					t.Fatal(err)
				}
			}
		}
		pending := pendingSamples(ctx, t, created)
		if pending == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("samples not converged: %s", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}

	code, body := get(t, "http://"+probes+"/readyz")
	if code != http.StatusOK {
		t.Errorf("GET /readyz: %d %s, want 200", code, body)
	}
	code, body = get(t, base+"/katalog/application/health")
	var report inspect.HealthReport
	if err := json.Unmarshal([]byte(body), &report); err != nil {
		t.Fatalf("GET /katalog/application/health: %d %s: %v", code, body, err)
	}
	if code != http.StatusOK || report.CRD != "application" || !report.Healthy || !report.Synced || report.Reconciles == 0 {
		t.Errorf("GET /katalog/application/health: %d %+v, want 200, healthy, synced, reconciled", code, report)
	}
	code, body = get(t, base+"/controlcenter/katalog/application/cr/"+ns+"/shop")
	if code != http.StatusOK || !strings.Contains(body, "shop-credentials") {
		t.Errorf("GET the Application's page: %d, want 200 showing its Secret shop-credentials:\n%s", code, body)
	}
	code, _ = get(t, base+"/")
	if code != http.StatusOK { // the redirect to /controlcenter/ is followed
		t.Errorf("GET /: %d, want the control center", code)
	}
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: defaultLeaderElectionID}, lease); err != nil ||
		lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("the leader's Lease %s/%s: %v %+v", ns, defaultLeaderElectionID, err, lease.Spec)
	}
	if code, _ := getAs(t, "https://"+metrics+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a token: %d, want 401", code)
	}
	code, body = getAs(t, "https://"+metrics+"/metrics", scraper)
	for _, step := range []string{"application/onCreate", "application/status", "database/onReconcile"} {
		series := katalog.MetricsPrefix + `_reconcile_duration_seconds_count{sub_reconciler="` + step + `"}`
		if code != http.StatusOK || !strings.Contains(body, series) {
			t.Errorf("GET /metrics: %d, want the series %s", code, series)
		}
	}
}

// pendingSamples describes the samples whose Ready is not True or phase not Ready.
func pendingSamples(ctx context.Context, t *testing.T, samples []*unstructured.Unstructured) string {
	t.Helper()
	var out []string
	for _, s := range samples {
		fresh := &unstructured.Unstructured{}
		fresh.SetGroupVersionKind(s.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), fresh); err != nil {
			t.Fatal(err)
		}
		phase, _, _ := unstructured.NestedString(fresh.Object, "status", "phase")
		conds, _, _ := unstructured.NestedSlice(fresh.Object, "status", "conditions")
		ready := "none"
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
				ready = fmt.Sprintf("%v/%v: %v", m["status"], m["reason"], m["message"])
			}
		}
		if phase != "Ready" || !strings.HasPrefix(ready, string(metav1.ConditionTrue)+"/") {
			out = append(out, fmt.Sprintf("%s %s: phase %q, Ready %s", s.GetKind(), s.GetName(), phase, ready))
		}
	}
	return strings.Join(out, "; ")
}

// parseRBAC reads what `katalog rbac` prints: a ClusterRole, then a Role.
func parseRBAC(t *testing.T, printed []byte) (*rbacv1.ClusterRole, *rbacv1.Role) {
	t.Helper()
	docs := strings.Split(string(printed), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("katalog rbac printed %d documents, want a ClusterRole and a Role:\n%s", len(docs), printed)
	}
	cr, role := &rbacv1.ClusterRole{}, &rbacv1.Role{}
	if err := yaml.UnmarshalStrict([]byte(docs[0]), cr); err != nil || cr.Kind != "ClusterRole" {
		t.Fatalf("katalog rbac printed no ClusterRole first: %v\n%s", err, printed)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), role); err != nil || role.Kind != "Role" {
		t.Fatalf("katalog rbac printed no Role second: %v\n%s", err, printed)
	}
	return cr, role
}

// bindRole creates role and binds it to the user cfg authenticates as (the common name
// of its client certificate), both removed when the test ends.
func bindRole(t *testing.T, cfg *rest.Config, role *rbacv1.Role) {
	t.Helper()
	block, _ := pem.Decode(cfg.CertData)
	if block == nil {
		t.Fatal("the user's rest config has no client certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: role.Namespace, Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cert.Subject.CommonName}},
	}
	for _, obj := range []client.Object{role.DeepCopy(), binding} {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	return getAs(t, url, "")
}

// getAs is get with a bearer token (none when empty), not verifying the server's
// certificate (the metrics server's is self-signed).
func getAs(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed metrics certificate
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// run refuses, before it reaches the cluster, a Katalog with a problem (naming the file
// and line), a path that cannot be read (naming it), no Katalog at all, target clusters
// and an inspector address that is no host:port.
func TestRunRefuses(t *testing.T) {
	bad := writeBad(t)
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	cases := map[string]struct {
		edit func(*options)
		want []string
		is   error
	}{
		"bad Katalog": {func(o *options) { o.katalogs = []string{bad} },
			[]string{bad + `:9: spec.crds.thing.colour: unknown field "colour"`}, katalog.ErrUnknownField},
		"missing file": {func(o *options) { o.katalogs = []string{missing} }, []string{missing}, katalog.ErrRead},
		"both, reported together": {func(o *options) { o.katalogs = []string{bad, missing} },
			[]string{bad + ":9:", missing}, katalog.ErrRead},
		"no Katalog":         {func(o *options) { o.katalogs = nil }, []string{"--katalog"}, errNoKatalog},
		"clusters namespace": {func(o *options) { o.ClustersNamespace = "clusters" }, []string{"--clusters-namespace"}, errClustersNamespace},
		"inspector address": {func(o *options) { o.inspectorBindAddress = "8080" },
			[]string{"--inspector-bind-address"}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := defaultOptions()
			o.katalogs = []string{filepath.Join(examples, "database.yaml")}
			tc.edit(&o)
			err := run(t.Context(), env.Config, o)
			if err == nil {
				t.Fatal("run = nil, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("run = %v\nwant it to name %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("run = %v, want errors.Is %v", err, tc.is)
			}
		})
	}
}

// TestPrintRBAC: katalog rbac prints the ClusterRole of the Katalogs given and the
// Role of the leader-election Lease (in --namespace when given), and refuses a call
// without Katalogs or with a Katalog that does not load, naming the file.
func TestPrintRBAC(t *testing.T) {
	var out bytes.Buffer
	if err := printRBAC(&out, []string{"--katalog", filepath.Join(examples, "platform.yaml") + "," + filepath.Join(examples, "database.yaml")}); err != nil {
		t.Fatal(err)
	}
	cr, role := parseRBAC(t, out.Bytes())
	kats, err := load([]string{filepath.Join(examples, "platform.yaml"), filepath.Join(examples, "database.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(katalog.ClusterRole("katalog", kats...), cr); diff != "" {
		t.Errorf("katalog rbac printed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(katalog.LeaseRole("katalog", ""), role); diff != "" {
		t.Errorf("katalog rbac printed the Role (-want +got):\n%s", diff)
	}
	out.Reset()
	if err := printRBAC(&out, []string{"--katalog", filepath.Join(examples, "database.yaml"), "--namespace", "katalog-system"}); err != nil {
		t.Fatal(err)
	}
	if _, role := parseRBAC(t, out.Bytes()); role.Namespace != "katalog-system" {
		t.Errorf("katalog rbac --namespace katalog-system printed the Role in %q", role.Namespace)
	}
	if err := printRBAC(io.Discard, nil); !errors.Is(err, errNoKatalog) {
		t.Errorf("no --katalog: %v, want errNoKatalog", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata: {name: x}\nspec:\n  crds:\n    x:\n      nope: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := printRBAC(io.Discard, []string{"--katalog", bad}); err == nil || !strings.Contains(err.Error(), "bad.yaml:7") {
		t.Errorf("a bad Katalog: %v, want an error naming bad.yaml:7", err)
	}
	if err := printRBAC(io.Discard, []string{"--katalog", bad, "--name", ""}); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Errorf("an empty --name: %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(flag.NewFlagSet("katalog", flag.ContinueOnError),
		[]string{"--katalog", "a.yaml, b.yaml", "--katalog", "c.yaml", "--namespace", "apps"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.katalogs, " "); got != "a.yaml b.yaml c.yaml" {
		t.Errorf("katalogs %q, want a.yaml b.yaml c.yaml", got)
	}
	if o.Namespace != "apps" || o.inspectorBindAddress != "127.0.0.1:8080" || o.MetricsBindAddress != ":8082" || o.FieldManager != "katalog" {
		t.Errorf("options %+v", o)
	}
	if !o.LeaderElect || o.InsecureMetrics || o.inspectorCertDir != "" {
		t.Errorf("defaults: leader election %v, plain-HTTP metrics %v, inspector certificates %q; want leader election and secure metrics",
			o.LeaderElect, o.InsecureMetrics, o.inspectorCertDir)
	}
	o, err = parseFlags(flag.NewFlagSet("katalog", flag.ContinueOnError), []string{"--katalog", "a.yaml",
		"--leader-elect=false", "--metrics-secure=false", "--inspector-bind-address", ":8080", "--inspector-cert-dir", "/certs"})
	if err != nil {
		t.Fatal(err)
	}
	if o.LeaderElect || !o.InsecureMetrics || o.inspectorBindAddress != ":8080" || o.inspectorCertDir != "/certs" {
		t.Errorf("--leader-elect=false --metrics-secure=false --inspector-bind-address :8080 --inspector-cert-dir /certs: %+v", o)
	}
	fs := flag.NewFlagSet("katalog", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseFlags(fs, []string{"--namespace", "apps"}); !errors.Is(err, errNoKatalog) {
		t.Errorf("without --katalog: %v, want errNoKatalog", err)
	}
	if _, err := parseFlags(flag.NewFlagSet("katalog", flag.ContinueOnError), []string{"--katalog", "a.yaml", "b.yaml"}); err == nil {
		t.Error("a positional argument was accepted")
	}
}

// The command exits with status 2 and its usage without --katalog, and with status 1
// naming the file and line of a Katalog's problem, without needing a cluster.
func TestMainExitCodes(t *testing.T) {
	bad := writeBad(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "katalog: no Katalog: give at least one --katalog file"},
		{[]string{"--katalog", bad}, 1, bad + `:9: spec.crds.thing.colour: unknown field "colour"`},
	} {
		cmd := exec.CommandContext(t.Context(), os.Args[0])
		cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(tc.args, "\n"), "KUBECONFIG=/nonexistent")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code {
			t.Errorf("katalog %v: %v, want exit status %d; stderr:\n%s", tc.args, err, tc.code, stderr.String())
			continue
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("katalog %v: stderr lacks %q:\n%s", tc.args, tc.want, stderr.String())
		}
	}
}

// metricsReader returns a token of a new ServiceAccount ns/prometheus that may get /metrics.
func metricsReader(t *testing.T, ns string) string {
	t.Helper()
	return env.ServiceAccountToken(t, ns, "prometheus", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}})
}
