package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	ksv1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
)

// TestDemo runs the whole demo, both scenes, as `make demo | cat` would, against
// envtest with real controllers: it must succeed, print each milestone, never print a
// SECRET_KEY, an admin password, a fernet key, the OpenID Connect client secret, the
// SAML service provider's private key or any file of the federation Secret (nor log
// one) and, its output not being a terminal, write no ANSI escapes. Without the envtest binaries it fails
// (testenv.Start says how to get them).
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	var keys, passwords, clientSecrets []string
	o := defaultOptions()
	o.Out = &out
	o.Pause = 200 * time.Millisecond
	o.PhaseTimeout = 90 * time.Second
	o.LogDir = t.TempDir()
	o.NewKey = func() (string, error) {
		k, err := randomKey()
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, k)
		return k, err
	}
	o.NewPassword = func() (string, error) {
		p, err := randomKey()
		mu.Lock()
		defer mu.Unlock()
		passwords = append(passwords, p)
		return p, err
	}
	o.NewClientSecret = func() (string, error) {
		c, err := randomKey()
		mu.Lock()
		defer mu.Unlock()
		clientSecrets = append(clientSecrets, c)
		return c, err
	}
	var federation, keyPair map[string][]byte
	o.afterFederation = func(f, kp map[string][]byte) { federation, keyPair = f, kp }
	var fernetKeys []string
	o.afterRotation = func(data map[string][]byte) {
		for _, v := range data {
			fernetKeys = append(fernetKeys, string(v))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if err := run(ctx, o); err != nil {
		t.Fatalf("demo failed: %v\noutput:\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		`SecretsReady +False +SecretStoreNotReady`,
		`ESO \(played\): ClusterSecretStore openbao-cluster-store is Ready`,
		`SecretsReady +False +WaitingForSecretKey`,
		`SecretsReady +True +SecretsAvailable`,
		`HorizonAPIReady +True +APIHealthy +GET http://127\.0\.0\.1:\d+/auth/login/ returned 200 OK`,
		fmt.Sprintf(`Ready +True +AllReady .*\[%d/%d\]`, len(conditionOrder), len(conditionOrder)),
		`✓ Ready=True after [\d.]+ s: Deployment horizon \(ReplicaSet horizon-\w+, 1/1 pods ready\)`,
		`endpoint http://horizon\.openstack\.svc:8080`,
		`secret-key-hash: [0-9a-f]{16} → [0-9a-f]{16}`,
		`new ReplicaSet horizon-\w+ rolled out \(1/1 pods ready\); horizon-\w+ scaled to 0`,
		`✓ Ready=True again after`,
		`spec\.timeZone = Europe/Berlin\n +→ ConfigMap horizon-config-\w+, ReplicaSet horizon-\w+ rolled out`,
		`kept: newest older #3`,
		`the Deployment keeps 3 old ReplicaSets \(revisionHistoryLimit\)`,
		// Past the retention: pruned already, or at the next pass when its ReplicaSet was
		// trimmed after the last one (which of the two depends on the rollout's timing).
		`horizon-config-\w+ +TIME_ZONE Europe/Berlin +(deleted by the prune|past the retention, its ReplicaSet trimmed since the last pass)`,
		`horizon-config-\w+ +TIME_ZONE UTC +deleted by the prune`,
		`kubectl get horizons -n openstack`,
		`kubectl get deploy,rs,svc,pdb,externalsecret -n openstack -l app\.kubernetes\.io/instance=horizon`,
		// The Keystone scene.
		`K1\. Apply the minimal sample Keystone openstack/keystone`,
		`ClusterSecretStore openbao-cluster-store is Ready already \(the Horizon scene\)`,
		`SecretsReady +False +WaitingForAdminPassword`,
		`ESO \(played\): synced "openstack/keystone/admin" into Secret openstack/keystone-admin-password \(a random admin password, not shown\)`,
		`ConfigReady +False +RestorePending`,
		`ExternalSecret openstack/keystone-db-password-restore finds no backup`,
		`FernetKeysReady +False +WaitingForKeyRestore`,
		`ExternalSecret openstack/keystone-fernet-keys-restore finds no backup`,
		`ExternalSecret openstack/keystone-credential-keys-restore finds no backup`,
		`DatabaseReady +False +MariaDBNotReady`,
		`mariadb-operator \(played\): MariaDB openstack/mariadb is Ready`,
		`mariadb-operator \(played\): Grant openstack/keystone is Ready`,
		`DatabaseReady +True +DatabaseSynced +db-sync Job openstack/keystone-db-sync completed`,
		`KeystoneAPIReady +True +APIHealthy +GET http://127\.0\.0\.1:\d+/v3 returned 200 OK`,
		`BootstrapReady +True +BootstrapComplete`,
		fmt.Sprintf(`Ready +True +AllReady .*\[%d/%d\]`, len(keystoneConditionOrder), len(keystoneConditionOrder)),
		`✓ Ready=True after [\d.]+ s: ConfigMap keystone-config-\w+, endpoint http://keystone\.openstack\.svc:5000`,
		`Jobs keystone-db-sync \(1 succeeded\), keystone-bootstrap \(1 succeeded\)`,
		`before: key repository: staged 0, primary 1\n`,
		`rotate-keys --secret openstack/keystone-fernet-keys --max-active-keys 3 --interval 168h, its clock at [-\dT:]+Z: rotated`,
		`after: +key repository: staged 0, primary 2, secondaries \[1\]`,
		`✓ primary key index 1 → 2`,
		`✓ Ready stayed True`,
		`kubectl get keystones -n openstack`,
		// The Keystone scene's identity providers.
		`K3\. Add identity providers: apply the sample KeystoneIdentityBackend openstack/corp-sso\n +\(` + regexp.QuoteMeta(backendSamplePath) + `\):\n` +
			` +domain corp-sso, the OpenID Connect provider corp-oidc, and a SAML provider corp-saml`,
		`ExternalSecret openstack/corp-sso-client \(remote key "openstack/corp-sso-client"\),\n +the service provider's key pair from Certificate openstack/corp-saml-sp`,
		// The table cuts messages to 64 runes.
		`DomainReady +True +DomainCreated +domain corp-sso exists in Keystone with ID [0-9a-f]{10}`,
		`FederationReady +False +WaitingForFederationSecret +identity provider corp-oidc: client secret Secret openstack/cor`,
		`ESO \(played\): synced "openstack/corp-sso-client" into Secret openstack/corp-sso-client \(a random OpenID Connect client secret, not shown\)`,
		`FederationReady +False +WaitingForFederationSecret +identity provider corp-saml: service provider key pair Secret o`,
		`cert-manager \(played\): Certificate openstack/corp-saml-sp issued into Secret openstack/corp-saml-sp`,
		`FederationReady +True +IdentityProvidersRegistered +identity providers corp-oidc \(openid\), corp-saml \(saml2\) are re`,
		`ConfigProjected +True +Projected`,
		`Ready +True +AllReady .*\[4/4\]`,
		`✓ Ready=True after [\d.]+ s: domain corp-sso \(ID [0-9a-f]{32}\); status\.identityProviders: corp-oidc \(openid\), corp-saml \(saml2\)`,
		`GET /v3/OS-FEDERATION/identity_providers/corp-oidc: domain_id [0-9a-f]{32}, remote_ids \[https://sso\.corp\.example\.com/realms/corp\], enabled true`,
		`GET /v3/OS-FEDERATION/identity_providers/corp-oidc/protocols/openid: mapping_id corp-oidc-mapping \(mapping found\)`,
		`GET /v3/OS-FEDERATION/identity_providers/corp-saml: domain_id [0-9a-f]{32}, remote_ids \[https://idp\.partners\.example/saml\], enabled true`,
		`GET /v3/OS-FEDERATION/identity_providers/corp-saml/protocols/saml2: mapping_id corp-saml-mapping \(mapping found\)`,
		`✓ Keystone openstack/keystone Ready=True, [\d.]+ s after the backend; IdentityBackendsReady: .*identity providers corp-oidc, corp-saml rendered into Secret keystone-federation-\w+`,
		`Deployment openstack/keystone mounts Secret keystone-federation-\w+ at /etc/keystone/federation; its keys \(values not shown\):\n` +
			` +httpd-openid-corp-oidc\.conf\n +httpd-saml2-corp-saml\.conf\n +keystone-federation\.conf\n` +
			` +saml2-corp-saml-idp-metadata\.xml\n +saml2-corp-saml-sp\.crt\n +saml2-corp-saml-sp\.key\n`,
		`kubectl get keystoneidentitybackend corp-sso -n openstack -o jsonpath='\{\.status\.identityProviders\}'`,
		`The operator's log: ` + regexp.QuoteMeta(operatorLogPath(o.LogDir)),
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if strings.Contains(got, "\x1b[") {
		t.Error("the output to a non-terminal holds ANSI escapes")
	}
	if len(keys) != 2 {
		t.Errorf("ESO synced %d keys, want 2 (the first and the rotated one)", len(keys))
	}
	if len(passwords) != 1 {
		t.Errorf("ESO synced %d admin passwords, want 1", len(passwords))
	}
	if len(clientSecrets) != 1 {
		t.Errorf("ESO synced %d client secrets, want 1", len(clientSecrets))
	}
	if len(federation) != 6 || len(keyPair[corev1.TLSPrivateKeyKey]) == 0 {
		t.Errorf("the federation Secret holds %d files (want 6) and the key pair %d bytes of private key (want some)",
			len(federation), len(keyPair[corev1.TLSPrivateKeyKey]))
	}
	if len(fernetKeys) != 3 {
		t.Errorf("the rotated fernet repository holds %d keys, want 3", len(fernetKeys))
	}
	logged, err := os.ReadFile(operatorLogPath(o.LogDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) == 0 {
		t.Error("the operator's log is empty")
	}
	for i, k := range keys {
		if strings.Contains(got, k) || bytes.Contains(logged, []byte(k)) {
			t.Errorf("SECRET_KEY #%d appears in the output or the operator's log", i+1)
		}
	}
	for i, p := range passwords {
		if strings.Contains(got, p) || bytes.Contains(logged, []byte(p)) {
			t.Errorf("admin password #%d appears in the output or the operator's log", i+1)
		}
	}
	for i, k := range fernetKeys {
		if strings.Contains(got, k) || bytes.Contains(logged, []byte(k)) {
			t.Errorf("fernet key #%d appears in the output or the operator's log", i+1)
		}
	}
	for i, c := range clientSecrets {
		if strings.Contains(got, c) || bytes.Contains(logged, []byte(c)) {
			t.Errorf("client secret #%d appears in the output or the operator's log", i+1)
		}
	}
	if len(clientSecrets) == 1 && !strings.Contains(string(federation["httpd-openid-corp-oidc.conf"]), clientSecrets[0]) {
		t.Error("the federation Secret's httpd-openid-corp-oidc.conf does not carry the synced client secret")
	}
	if key := keyPair[corev1.TLSPrivateKeyKey]; len(key) == 0 || !bytes.Equal(federation["saml2-corp-saml-sp.key"], key) {
		t.Error("the federation Secret's saml2-corp-saml-sp.key is not the issued private key")
	}
	for _, block := range pemBodies(keyPair[corev1.TLSPrivateKeyKey]) {
		if strings.Contains(got, block) || bytes.Contains(logged, []byte(block)) {
			t.Error("the SAML service provider's private key appears in the output or the operator's log")
		}
	}
	for name, v := range federation {
		if strings.Contains(got, string(v)) || bytes.Contains(logged, v) {
			t.Errorf("file %s of the federation Secret appears in the output or the operator's log", name)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", got)
	}
}

// pemBodies returns the base64 lines of the PEM document doc, each long enough that
// finding one elsewhere means the key was copied.
func pemBodies(doc []byte) []string {
	var out []string
	for l := range strings.SplitSeq(string(doc), "\n") {
		if len(l) >= 16 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// horizonWith builds a Horizon of generation gen with conds.
func horizonWith(gen int64, conds ...metav1.Condition) *v1alpha1.Horizon {
	h := &v1alpha1.Horizon{ObjectMeta: metav1.ObjectMeta{Name: "horizon", Namespace: "openstack", Generation: gen}}
	h.Status.Conditions = conds
	return h
}

func cond(t, status, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg, ObservedGeneration: gen}
}

// allTrue returns a True condition of every type in the table, for generation gen.
func allTrue(gen int64) []metav1.Condition {
	var out []metav1.Condition
	for _, t := range conditionOrder {
		out = append(out, cond(t, "True", "Fine", "fine", gen))
	}
	return out
}

func TestStuckErrorNamesTheFirstConditionNotTrue(t *testing.T) {
	key := client.ObjectKey{Namespace: "openstack", Name: "horizon"}
	conds := allTrue(2)
	conds[2] = cond("DeploymentReady", "False", "WaitingForDeployment", "waiting for Deployment openstack/horizon to roll out", 2)
	conds[4] = cond("HorizonAPIReady", "False", "APIUnhealthy", "503", 2)
	cases := map[string]struct {
		h    *v1alpha1.Horizon
		want string
	}{
		"false condition": {
			h: horizonWith(2, conds...),
			want: "first rollout: timed out after 3m0s: Horizon openstack/horizon: condition DeploymentReady is False, " +
				"reason WaitingForDeployment: waiting for Deployment openstack/horizon to roll out",
		},
		"stale condition": {
			h: horizonWith(3, allTrue(2)...),
			want: "first rollout: timed out after 3m0s: Horizon openstack/horizon: condition SecretsReady is True " +
				"(written for an older generation), reason Fine: fine",
		},
		"missing condition": {
			h: horizonWith(1),
			want: "first rollout: timed out after 3m0s: Horizon openstack/horizon: condition SecretsReady is -, " +
				"reason (none): (none)",
		},
		"all true": {
			h: horizonWith(2, allTrue(2)...),
			want: "first rollout: timed out after 3m0s: Horizon openstack/horizon: every condition is True, " +
				"but the demo still waits for Deployment openstack/horizon to roll out",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := stuckError("first rollout", "Horizon", key, rowsOf(tc.h), 3*time.Minute, "Deployment openstack/horizon to roll out")
			if !errors.Is(err, errTimeout) {
				t.Errorf("errors.Is(%v, errTimeout) = false", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %q\nwant %q", err, tc.want)
			}
		})
	}
}

func TestDisplayPrintsOneLinePerChange(t *testing.T) {
	var out bytes.Buffer
	d := newDisplay(&out, false, 0)
	start := time.Unix(1000, 0)
	d.Begin(start)
	h := horizonWith(1, cond("SecretsReady", "False", "SecretStoreNotReady", "store not ready", 1))
	d.Show(rowsOf(h), start)
	d.Show(rowsOf(h), start.Add(time.Second)) // nothing changed: nothing printed
	h.Status.Conditions[0] = cond("SecretsReady", "True", "SecretsAvailable", "synced", 1)
	d.Show(rowsOf(h), start.Add(2*time.Second))
	d.Begin(start.Add(3 * time.Second)) // a new phase prints only what changes from here
	d.Show(rowsOf(h), start.Add(4*time.Second))
	want := "    0.0s  SecretsReady        False   SecretStoreNotReady         store not ready  [0/9]\n" +
		"    2.0s  SecretsReady        True    SecretsAvailable            synced  [1/9]\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestDisplayRedrawsInPlaceWhenLive(t *testing.T) {
	var out bytes.Buffer
	d := newDisplay(&out, true, 40)
	start := time.Unix(1000, 0)
	d.Begin(start)
	h := horizonWith(1, cond("SecretsReady", "False", "SecretStoreNotReady", "store not ready", 1))
	d.Show(rowsOf(h), start)
	first := out.Len()
	lines := strings.Count(out.String(), "\n")
	if lines != len(conditionOrder)+2 {
		t.Fatalf("the live table has %d lines, want %d (header, conditions, progress)", lines, len(conditionOrder)+2)
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if n := len([]rune(l)); n >= 40 {
			t.Errorf("line %q has %d runes, want < 40 (the terminal's width)", l, n)
		}
	}
	d.Show(rowsOf(h), start.Add(100*time.Millisecond)) // same text: no redraw
	if out.Len() != first {
		t.Errorf("an unchanged table was redrawn: %q", out.String()[first:])
	}
	d.Linef("▸ event")
	redraw := out.String()[first:]
	wantPrefix := fmt.Sprintf("\x1b[%dA\r\x1b[J▸ event\n", len(conditionOrder)+2)
	if !strings.HasPrefix(redraw, wantPrefix) {
		t.Errorf("a line while the table is shown starts %q, want the erase, the line, then the table: %q", redraw, wantPrefix)
	}
	if !strings.HasSuffix(redraw, "0/9 conditions True · 0 s\n") {
		t.Errorf("the table was not drawn again below the line: %q", redraw)
	}
	d.Drop()
	if !strings.HasSuffix(out.String(), fmt.Sprintf("\x1b[%dA\r\x1b[J", len(conditionOrder)+2)) {
		t.Errorf("Drop did not erase the table: %q", out.String())
	}
}

func TestScenesOf(t *testing.T) {
	for scene, want := range map[string][]string{
		"horizon":  {"horizon"},
		"keystone": {"keystone"},
		"all":      {"horizon", "keystone"},
		"":         {"horizon", "keystone"},
	} {
		got, err := scenesOf(scene)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("scenesOf(%q) = %v, %v; want %v", scene, got, err, want)
		}
	}
	if _, err := scenesOf("nova"); !errors.Is(err, errUnknownScene) {
		t.Errorf("scenesOf(\"nova\") = %v, want errUnknownScene", err)
	}
	// run refuses an unknown scene before it starts anything.
	o := defaultOptions()
	o.Out, o.Scene = io.Discard, "nova"
	if err := run(context.Background(), o); !errors.Is(err, errUnknownScene) {
		t.Errorf("run with scene nova = %v, want errUnknownScene", err)
	}
}

func TestModuleRootHoldsTheSample(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	h, err := loadSample(root, "openstack")
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "horizon" || h.Namespace != "openstack" || h.Spec.SecretKey.RemoteKey == "" {
		t.Errorf("sample Horizon %s/%s with remote key %q, want openstack/horizon with a remote key",
			h.Namespace, h.Name, h.Spec.SecretKey.RemoteKey)
	}
	if _, err := os.Stat(filepath.Join(root, crdDir)); err != nil {
		t.Error(err)
	}
	k, err := loadKeystoneSample(root, "openstack")
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "keystone" || k.Namespace != "openstack" || k.Spec.Database.MariaDBRef.Name == "" {
		t.Errorf("sample Keystone %s/%s on MariaDB %q, want openstack/keystone on a MariaDB",
			k.Namespace, k.Name, k.Spec.Database.MariaDBRef.Name)
	}
	if _, err := os.Stat(filepath.Join(root, keystoneCRDDir)); err != nil {
		t.Error(err)
	}
}

func TestReportedPrimary(t *testing.T) {
	k := &ksv1alpha1.Keystone{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	if got := reportedPrimary(k); got != -1 {
		t.Errorf("without FernetKeysReady: %d, want -1", got)
	}
	msg := "Secret openstack/keystone-fernet-keys holds 3 active fernet keys (staged 0, primary 2, secondaries [1]), backed up"
	k.Status.Conditions = []metav1.Condition{cond("FernetKeysReady", "True", "KeysReady", msg, 2)}
	if got := reportedPrimary(k); got != 2 {
		t.Errorf("reportedPrimary = %d, want 2", got)
	}
	k.Status.Conditions = []metav1.Condition{cond("FernetKeysReady", "True", "KeysReady", msg, 1)}
	if got := reportedPrimary(k); got != -1 {
		t.Errorf("for an older generation: %d, want -1", got)
	}
	k.Status.Conditions = []metav1.Condition{cond("FernetKeysReady", "False", "KeysInvalid", "primary 7 broken", 2)}
	if got := reportedPrimary(k); got != -1 {
		t.Errorf("while False: %d, want -1", got)
	}
}

func TestStuckErrorNamesTheKeystone(t *testing.T) {
	k := &ksv1alpha1.Keystone{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	k.Status.Conditions = []metav1.Condition{
		cond("SecretsReady", "True", "SecretsAvailable", "synced", 1),
		cond("DatabaseReady", "False", "MariaDBNotReady", "waiting for MariaDB openstack/mariadb", 1),
	}
	err := stuckError("first rollout of the Keystone", "Keystone", client.ObjectKey{Namespace: "openstack", Name: "keystone"},
		rowsIn(k, keystoneConditionOrder), time.Minute, "Ready=True")
	want := "first rollout of the Keystone: timed out after 1m0s: Keystone openstack/keystone: condition DatabaseTLSReady is -, reason (none): (none)"
	if !errors.Is(err, errTimeout) || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// The table as printed when standard output is not a terminal: one line per change,
// with the seconds since the phase began and the count of True conditions.
func Example_display() {
	d := newDisplay(os.Stdout, false, 0)
	start := time.Unix(0, 0)
	d.Begin(start)
	h := horizonWith(1, cond("SecretsReady", "False", "WaitingForSecretKey", "waiting for the key", 1))
	d.Show(rowsOf(h), start.Add(1500*time.Millisecond))
	h.Status.Conditions[0] = cond("SecretsReady", "True", "SecretsAvailable", "SECRET_KEY synced", 1)
	d.Show(rowsOf(h), start.Add(3*time.Second))
	// Output:
	//     1.5s  SecretsReady        False   WaitingForSecretKey         waiting for the key  [0/9]
	//     3.0s  SecretsReady        True    SecretsAvailable            SECRET_KEY synced  [1/9]
}
