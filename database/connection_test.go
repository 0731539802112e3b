package database_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// hostilePassword has every character the URL must escape, and "$", which oslo.config
// would substitute.
const hostilePassword = "p@ss/w:rd?$x%y #z"

// leaks reports whether s quotes the password, raw or percent-encoded.
func leaks(s string) bool {
	return strings.Contains(s, hostilePassword) || strings.Contains(s, url.QueryEscape(hostilePassword)) ||
		strings.Contains(s, "p%40ss")
}

func TestConnectionURL(t *testing.T) {
	base := database.Connection{Host: "mariadb.db.svc", Name: "app", User: "app"}
	with := func(f func(c *database.Connection)) database.Connection {
		c := base
		f(&c)
		return c
	}
	type want struct {
		url string
		// errs are fragments of the error; every one must be there.
		errs []string
	}
	cases := map[string]struct {
		reason   string
		conn     database.Connection
		password string
		want     want
	}{
		"Plain": {
			reason: "Host, the default port, the database and the account.", conn: base, password: "s3cret",
			want: want{url: "mysql+pymysql://app:s3cret@mariadb.db.svc:3306/app"},
		},
		"Escaped": {
			reason: "User and password are percent-encoded, so no @ / : ? $ % or space of theirs reaches the URL.",
			conn:   with(func(c *database.Connection) { c.User = "a@b c" }), password: hostilePassword,
			want: want{url: "mysql+pymysql://a%40b%20c:p%40ss%2Fw%3Ard%3F%24x%25y%20%23z@mariadb.db.svc:3306/app"},
		},
		"IPv6": {
			reason: "An IPv6 host is bracketed.", conn: with(func(c *database.Connection) { c.Host, c.Port = "fd00::1", 3307 }),
			password: "pw", want: want{url: "mysql+pymysql://app:pw@[fd00::1]:3307/app"},
		},
		"IPv4": {
			reason: "An IPv4 host is taken as it is.", conn: with(func(c *database.Connection) { c.Host = "10.0.0.7" }),
			password: "pw", want: want{url: "mysql+pymysql://app:pw@10.0.0.7:3306/app"},
		},
		"DashInName": {
			reason: "A database named after a Kubernetes object may carry a dash.", conn: with(func(c *database.Connection) { c.Name = "my-app_1" }),
			password: "pw", want: want{url: "mysql+pymysql://app:pw@mariadb.db.svc:3306/my-app_1"},
		},
		"CA": {
			reason: "A CA file turns TLS on; the path is query-encoded.",
			conn:   with(func(c *database.Connection) { c.CAFile = "/etc/db tls/ca.crt" }), password: "pw",
			want: want{url: "mysql+pymysql://app:pw@mariadb.db.svc:3306/app?ssl_ca=%2Fetc%2Fdb+tls%2Fca.crt"},
		},
		"ClientCertificate": {
			reason: "A client certificate and key go with the CA, in that order.",
			conn: with(func(c *database.Connection) {
				c.CAFile, c.CertFile, c.KeyFile = "/tls/ca.crt", "/tls/tls.crt", "/tls/tls.key"
			}), password: "pw",
			want: want{url: "mysql+pymysql://app:pw@mariadb.db.svc:3306/app?ssl_ca=%2Ftls%2Fca.crt&ssl_cert=%2Ftls%2Ftls.crt&ssl_key=%2Ftls%2Ftls.key"},
		},
		"Empty": {
			reason: "Every problem is reported at once, naming its field.", conn: database.Connection{},
			want: want{errs: []string{"Host is empty", "Name is empty", "User is empty", "the password is empty"}},
		},
		"BadHost": {
			reason: "A host is an IP address or a DNS name.", conn: with(func(c *database.Connection) { c.Host = "db.svc/x" }),
			password: hostilePassword, want: want{errs: []string{`Host "db.svc/x" is neither an IP address nor a DNS name`}},
		},
		"BadPort": {
			reason: "A port is within 1 to 65535.", conn: with(func(c *database.Connection) { c.Port = 70000 }),
			password: hostilePassword, want: want{errs: []string{"Port 70000 is not a TCP port"}},
		},
		"BadName": {
			reason: "A database name is letters, digits, _ and -: no $ for oslo.config to substitute, no path.",
			conn:   with(func(c *database.Connection) { c.Name = "app$x/y" }), password: hostilePassword,
			want: want{errs: []string{`Name "app$x/y" contains a character other than`}},
		},
		"LongName": {
			reason: "MySQL limits a database name to 64 characters.", conn: with(func(c *database.Connection) { c.Name = strings.Repeat("a", 65) }),
			password: hostilePassword, want: want{errs: []string{"is longer than 64 characters"}},
		},
		"InvalidUTF8": {
			reason: "User and password are UTF-8.", conn: with(func(c *database.Connection) { c.User = "\xff" }), password: "\xfe",
			want: want{errs: []string{"User", "is not valid UTF-8", "the password is not valid UTF-8"}},
		},
		"RelativeCA": {
			reason: "TLS paths are absolute, without control characters.",
			conn: with(func(c *database.Connection) {
				c.CAFile, c.CertFile, c.KeyFile = "ca.crt", "/tls/\ncrt", "/tls/tls.key"
			}), password: hostilePassword,
			want: want{errs: []string{`CAFile "ca.crt" is not an absolute path`, "CertFile", "contains a control character"}},
		},
		"CertWithoutKey": {
			reason: "A client certificate needs its key.",
			conn:   with(func(c *database.Connection) { c.CAFile, c.CertFile = "/tls/ca.crt", "/tls/tls.crt" }), password: hostilePassword,
			want: want{errs: []string{"CertFile and KeyFile go together"}},
		},
		"CertWithoutCA": {
			reason: "A client certificate is only presented to a server the client verifies.",
			conn:   with(func(c *database.Connection) { c.CertFile, c.KeyFile = "/tls/tls.crt", "/tls/tls.key" }), password: hostilePassword,
			want: want{errs: []string{"CertFile needs CAFile"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := database.ConnectionURL(tc.conn, tc.password)
			if diff := cmp.Diff(tc.want.url, got); diff != "" {
				t.Errorf("%s\nURL (-want +got):\n%s", tc.reason, diff)
			}
			if len(tc.want.errs) == 0 {
				if err != nil {
					t.Fatalf("%s\nerr = %v", tc.reason, err)
				}
				u, perr := url.Parse(got)
				if perr != nil {
					t.Fatalf("%s\nthe URL does not parse: %v", tc.reason, perr)
				}
				if pw, _ := u.User.Password(); pw != tc.password || u.User.Username() != tc.conn.User {
					t.Errorf("%s\nthe URL decodes to user %q password %q, want %q %q", tc.reason, u.User.Username(), pw, tc.conn.User, tc.password)
				}
				if strings.ContainsAny(got, "$\n") {
					t.Errorf("%s\nthe URL %q carries a $ or a newline", tc.reason, got)
				}
				return
			}
			if !errors.Is(err, database.ErrInvalidParams) {
				t.Fatalf("%s\nerr = %v, want ErrInvalidParams", tc.reason, err)
			}
			for _, frag := range tc.want.errs {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("%s\nerr %q does not contain %q", tc.reason, err, frag)
				}
			}
			if leaks(err.Error()) {
				t.Errorf("%s\nerr %q quotes the password", tc.reason, err)
			}
		})
	}
}

// connectionParams is the connection Secret of the tests.
func connectionParams() database.ConnectionSecretParams {
	return database.ConnectionSecretParams{
		Name: "app-db-connection", ConfigKey: "database.conf", Labels: map[string]string{"app": "demo"},
		Connection: database.Connection{Host: "mariadb.db.svc", Name: "app", User: "app"},
	}
}

// TestEnsureConnectionSecret: the Secret holds the URL and the oslo.config file, is
// controlled by the owner, is not rewritten while converged, and is rewritten (a new
// Version) when the password changes.
func TestEnsureConnectionSecret(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	got, err := database.EnsureConnectionSecret(ctx, env.Client, env.Scheme, owner, connectionParams(), hostilePassword)
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, objectKey(ns, "app-db-connection"), s); err != nil {
		t.Fatal(err)
	}
	u, _ := database.ConnectionURL(connectionParams().Connection, hostilePassword)
	type secret struct {
		Data       map[string]string
		Labels     string
		Type       corev1.SecretType
		Controller string
	}
	ref := metav1.GetControllerOf(s)
	if ref == nil {
		t.Fatal("the Secret has no controller")
	}
	want := secret{
		Data:   map[string]string{database.ConnectionDataKey: u, "database.conf": "[database]\nconnection = " + u + "\n"},
		Labels: "demo", Type: corev1.SecretTypeOpaque, Controller: "ConfigMap " + owner.Name + " " + string(owner.UID),
	}
	data := map[string]string{}
	for k, v := range s.Data {
		data[k] = string(v)
	}
	if diff := cmp.Diff(want, secret{Data: data, Labels: s.Labels["app"], Type: s.Type,
		Controller: ref.Kind + " " + ref.Name + " " + string(ref.UID)}); diff != "" {
		t.Errorf("connection Secret (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(database.Connected{Key: objectKey(ns, "app-db-connection"), Version: s.ResourceVersion}, got); diff != "" {
		t.Errorf("Connected (-want +got):\n%s", diff)
	}

	again, err := database.EnsureConnectionSecret(ctx, env.Client, env.Scheme, owner, connectionParams(), hostilePassword)
	if err != nil || again.Version != got.Version {
		t.Errorf("converged call = %+v, %v; want the same Version %s (no write)", again, err, got.Version)
	}

	rotated, err := database.EnsureConnectionSecret(ctx, env.Client, env.Scheme, owner, connectionParams(), "new-password")
	if err != nil || rotated.Version == got.Version {
		t.Fatalf("call with a new password = %+v, %v; want a new Version", rotated, err)
	}
	if err := env.Client.Get(ctx, objectKey(ns, "app-db-connection"), s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s.Data[database.ConnectionDataKey]), ":new-password@") || s.ResourceVersion != rotated.Version {
		t.Errorf("Secret after the new password: version %s (want %s), URL with the new password: %t",
			s.ResourceVersion, rotated.Version, strings.Contains(string(s.Data[database.ConnectionDataKey]), ":new-password@"))
	}
}

// TestEnsureConnectionSecretRefusesOthers: a Secret of the name without a controller,
// controlled by someone else, or being deleted is refused, named, left untouched, and
// the error does not quote the password.
func TestEnsureConnectionSecretRefusesOthers(t *testing.T) {
	for name, tc := range takeoverCases() {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-db-connection", Namespace: ns},
				Data: map[string][]byte{"connection": []byte("theirs")}}
			before := createExisting(t, tc, ns, owner, existing)
			_, err := database.EnsureConnectionSecret(context.Background(), env.Client, env.Scheme, owner, connectionParams(), hostilePassword)
			checkRefused(t, tc, err, "Secret "+ns+"/app-db-connection")
			if leaks(err.Error()) {
				t.Errorf("err %q quotes the password", err)
			}
			untouched(t, before)
		})
	}
}

// TestEnsureConnectionSecretInvalid: bad input is refused before any API call, with
// the field named and without the password.
func TestEnsureConnectionSecretInvalid(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "uid-1"}}
	cases := map[string]struct {
		reason string
		owner  client.Object
		scheme *runtime.Scheme
		mutate func(p *database.ConnectionSecretParams)
		want   error
		text   string
	}{
		"NilOwner":  {reason: "The Secret is the owner's.", owner: (*corev1.ConfigMap)(nil), want: apply.ErrNilOwner},
		"NilScheme": {reason: "A nil scheme is an error, never a panic.", want: apply.ErrNilScheme, text: "Secret ns/app-db-connection"},
		"NoName": {reason: "The Secret needs a name.", mutate: func(p *database.ConnectionSecretParams) { p.Name = "" },
			want: database.ErrInvalidParams, text: "Name is empty"},
		"BadName": {reason: "The name is a DNS subdomain.", mutate: func(p *database.ConnectionSecretParams) { p.Name = "Bad_Name" },
			want: database.ErrInvalidParams, text: `Name "Bad_Name"`},
		"BadDataKey": {reason: "Keys are Secret keys.", mutate: func(p *database.ConnectionSecretParams) { p.DataKey = "a key" },
			want: database.ErrInvalidParams, text: `DataKey "a key"`},
		"SameKeys": {reason: "The file and the URL cannot share a key.", mutate: func(p *database.ConnectionSecretParams) { p.ConfigKey = "connection" },
			want: database.ErrInvalidParams, text: `ConfigKey "connection" is the DataKey`},
		"BadConnection": {reason: "The URL is validated first.", mutate: func(p *database.ConnectionSecretParams) { p.Connection.Host = "" },
			want: database.ErrInvalidParams, text: "connection Secret ns/app-db-connection: invalid database parameters: connection: Host is empty"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			calls := 0
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(env.Scheme).Build(), interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					calls++
					return errors.New("unexpected call")
				},
				Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
					calls++
					return errors.New("unexpected call")
				},
			})
			o, scheme := tc.owner, env.Scheme
			if o == nil {
				o = owner
			}
			if name == "NilScheme" {
				scheme = nil
			}
			p := connectionParams()
			if tc.mutate != nil {
				tc.mutate(&p)
			}
			got, err := database.EnsureConnectionSecret(context.Background(), c, scheme, o, p, hostilePassword)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("%s\nerr = %v, want %v containing %q", tc.reason, err, tc.want, tc.text)
			}
			if leaks(err.Error()) || got != (database.Connected{}) || calls != 0 {
				t.Errorf("%s\nerr %q, Connected %+v, %d calls; want no password, a zero answer and no API call", tc.reason, err, got, calls)
			}
		})
	}
}

// TestEnsureConnectionSecretFaultMatrix fails every API call of EnsureConnectionSecret
// once (Get and Apply, each fault): the error names the Secret and never quotes the
// password, and every run converges to the Secret of the run that never failed.
func TestEnsureConnectionSecretFaultMatrix(t *testing.T) {
	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
		ns := env.Namespace(t)
		owner := newOwner(t, ns)
		var last error
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				_, err := database.EnsureConnectionSecret(ctx, c, env.Scheme, owner, connectionParams(), hostilePassword)
				last = err
				return ctrl.Result{}, err
			},
			Check: func(t *testing.T) {
				if last != nil && (leaks(last.Error()) || !strings.Contains(last.Error(), "connection Secret "+ns+"/app-db-connection")) {
					t.Errorf("err %q quotes the password or does not name the Secret", last)
				}
			},
			State: func(t *testing.T) any {
				s := &corev1.Secret{}
				if err := env.Client.Get(context.Background(), objectKey(ns, "app-db-connection"), s); err != nil {
					t.Fatal(err)
				}
				return map[string]string{"connection": string(s.Data["connection"]), "controller": controllerOf(s)}
			},
		}
	}}.Run(t)
}

// TestConnectionEnvVar: the variable oslo.config reads, from the Secret's key.
func TestConnectionEnvVar(t *testing.T) {
	want := corev1.EnvVar{Name: "OS_DATABASE__CONNECTION", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app-db-connection"}, Key: "connection"}}}
	if diff := cmp.Diff(want, database.ConnectionEnvVar("app-db-connection", "")); diff != "" {
		t.Errorf("ConnectionEnvVar (-want +got):\n%s", diff)
	}
	want.ValueFrom.SecretKeyRef.Key = "url"
	if diff := cmp.Diff(want, database.ConnectionEnvVar("app-db-connection", "url")); diff != "" {
		t.Errorf("ConnectionEnvVar with a key (-want +got):\n%s", diff)
	}
}

// TestProvisionFlowConnection: with ProvisionParams.Connection the flow writes the
// connection Secret once everything is ready: the MariaDB's Service and port, the
// Database's and the User's names and the password of the password Secret; the True
// message names the Secret and Provisioned carries its Version. Explicit fields win.
func TestProvisionFlowConnection(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		reason string
		conn   database.Connection
		want   string // the URL, with PASSWORD for the password and NS for the namespace
	}{
		"Derived": {
			reason: "Empty fields come from the provisioned objects.",
			want:   "mysql+pymysql://identity:PASSWORD@mariadb.NS.svc:3306/identity",
		},
		"Explicit": {
			reason: "Fields the caller sets are kept.",
			conn:   database.Connection{Host: "proxy.db.svc", Port: 6033, CAFile: "/tls/ca.crt"},
			want:   "mysql+pymysql://identity:PASSWORD@proxy.db.svc:6033/identity?ssl_ca=%2Ftls%2Fca.crt",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			markAllReady(ctx, t, ns, owner)
			p := params(ns, true)
			p.Connection = &database.ConnectionSecretParams{Name: "identity-db-connection", Connection: tc.conn}
			out, err := database.ProvisionFlow(ctx, env.Client, env.Scheme, owner, p)
			if err != nil || out.Condition.Reason != database.ReasonDatabaseProvisioned || !out.Continue() {
				t.Fatalf("%s\nProvisionFlow = %+v, %v; want DatabaseProvisioned", tc.reason, out, err)
			}
			if !strings.Contains(out.Condition.Message, "connection Secret "+ns+"/identity-db-connection") || leaks(out.Condition.Message) {
				t.Errorf("%s\nmessage %q does not name the connection Secret", tc.reason, out.Condition.Message)
			}
			s := &corev1.Secret{}
			if err := env.Client.Get(ctx, objectKey(ns, "identity-db-connection"), s); err != nil {
				t.Fatal(err)
			}
			password := string(getSecret(t, ns).Data["password"])
			got := strings.ReplaceAll(strings.ReplaceAll(string(s.Data[database.ConnectionDataKey]), password, "PASSWORD"), ns, "NS")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nconnection URL (-want +got):\n%s", tc.reason, diff)
			}
			if out.Connection.Version != s.ResourceVersion || out.Connection.Key != objectKey(ns, "identity-db-connection") {
				t.Errorf("%s\nProvisioned.Connection = %+v, want key and version %s", tc.reason, out.Connection, s.ResourceVersion)
			}
			if strings.Contains(out.Condition.Message, password) {
				t.Errorf("%s\nthe message quotes the password", tc.reason)
			}
		})
	}
}

// TestProvisionFlowConnectionWaits: the connection Secret is written only once the
// database is provisioned; before, the flow answers the not-ready state and writes none.
func TestProvisionFlowConnectionWaits(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
	p := params(ns, true)
	p.Connection = &database.ConnectionSecretParams{Name: "identity-db-connection"}
	out, err := database.ProvisionFlow(ctx, env.Client, env.Scheme, owner, p)
	if err != nil || out.Condition.Reason != database.ReasonDatabaseNotReady || out.Connection != (database.Connected{}) {
		t.Fatalf("ProvisionFlow = %+v, %v; want DatabaseNotReady and no connection", out, err)
	}
	absent(t, ns, "identity-db-connection", &corev1.Secret{})
}

// TestProvisionFlowConnectionAfterRegeneration: a password Secret deleted while the
// User and Grant stay Ready is created again, and the same pass reads it back and
// writes the connection Secret with the new password (never with the lost one).
func TestProvisionFlowConnectionAfterRegeneration(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	markAllReady(ctx, t, ns, owner)
	p := func() database.ProvisionParams {
		p := params(ns, true)
		p.Connection = &database.ConnectionSecretParams{Name: "identity-db-connection"}
		return p
	}
	if _, err := database.ProvisionFlow(ctx, env.Client, env.Scheme, owner, p()); err != nil {
		t.Fatal(err)
	}
	old := string(getSecret(t, ns).Data["password"])
	if err := env.Client.Delete(ctx, getSecret(t, ns)); err != nil {
		t.Fatal(err)
	}
	out, err := database.ProvisionFlow(ctx, env.Client, env.Scheme, owner, p())
	if err != nil || out.Condition.Reason != database.ReasonDatabaseProvisioned {
		t.Fatalf("pass after the loss = %+v, %v; want DatabaseProvisioned", out, err)
	}
	renewed := string(getSecret(t, ns).Data["password"])
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, objectKey(ns, "identity-db-connection"), s); err != nil {
		t.Fatal(err)
	}
	if u := string(s.Data[database.ConnectionDataKey]); renewed == old || !strings.Contains(u, ":"+renewed+"@") {
		t.Errorf("connection URL after the regeneration does not carry the new password (new one differs: %t)", renewed != old)
	}
}

// TestProvisionFlowMatchesReconcileProvision: the (condition, result, error) form
// answers what the Outcome form does, state by state.
func TestProvisionFlowMatchesReconcileProvision(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	type answer struct {
		Condition metav1.Condition
		Result    ctrl.Result
		Err       bool
	}
	compare := func(what string) {
		t.Helper()
		out, ferr := database.ProvisionFlow(ctx, env.Client, env.Scheme, owner, params(ns, true))
		cond, res, rerr := database.ReconcileProvision(ctx, env.Client, env.Scheme, owner, params(ns, true))
		if diff := cmp.Diff(answer{out.Condition, out.Result, ferr != nil}, answer{cond, res, rerr != nil}); diff != "" {
			t.Errorf("%s: ReconcileProvision differs from ProvisionFlow (-flow +reconcile):\n%s", what, diff)
		}
	}
	compare("no server")
	need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
	compare("Database not ready")
	need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
	compare("User not ready")
	need(t)(simulate.MarkUserReady(ctx, env.Client, objectKey(ns, "identity")))
	need(t)(simulate.MarkGrantReady(ctx, env.Client, objectKey(ns, "identity")))
	compare("provisioned")
}

// TestSyncJobsFlowMatchesReconcileSyncJobs: the same for the db-sync flow, through a
// running Job, a completed one and a failed one (the terminal error with its False
// condition).
func TestSyncJobsFlowMatchesReconcileSyncJobs(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	type answer struct {
		Condition metav1.Condition
		Result    ctrl.Result
		Err       string
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	jobs := func() []database.SyncJob {
		return []database.SyncJob{{Job: simulated(syncJob(ns, "db-sync", "app:1"))}}
	}
	compare := func(what, reason string) {
		t.Helper()
		out, ferr := database.SyncJobsFlow(ctx, env.Client, env.Scheme, owner, jobs()...)
		cond, res, rerr := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, owner, jobs()...)
		flow, old := answer{out.Condition, out.Result, errText(ferr)}, answer{cond, res, errText(rerr)}
		if diff := cmp.Diff(flow, old); diff != "" {
			t.Errorf("%s: ReconcileSyncJobs differs from SyncJobsFlow (-flow +reconcile):\n%s", what, diff)
		}
		if out.Condition.Reason != reason {
			t.Errorf("%s: reason %q, want %q", what, out.Condition.Reason, reason)
		}
		if ferr != nil && !out.Result.IsZero() {
			t.Errorf("%s: a requeue together with an error", what)
		}
	}
	compare("running", database.ReasonDBSyncInProgress)
	need(t)(simulate.MarkJobComplete(ctx, env.Client, objectKey(ns, "db-sync")))
	compare("completed", database.ReasonDatabaseSynced)

	failed := env.Namespace(t)
	fowner := newOwner(t, failed)
	fjobs := func() []database.SyncJob {
		return []database.SyncJob{{Job: simulated(syncJob(failed, "db-sync", "app:1"))}}
	}
	if _, err := database.SyncJobsFlow(ctx, env.Client, env.Scheme, fowner, fjobs()...); err != nil {
		t.Fatal(err)
	}
	need(t)(simulate.MarkJobFailed(ctx, env.Client, objectKey(failed, "db-sync")))
	out, err := database.SyncJobsFlow(ctx, env.Client, env.Scheme, fowner, fjobs()...)
	_, _, rerr := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, fowner, fjobs()...)
	if err == nil || rerr == nil || err.Error() != rerr.Error() {
		t.Errorf("failed Job: SyncJobsFlow err %v, ReconcileSyncJobs err %v; want the same terminal error", err, rerr)
	}
	if out.Condition.Reason != database.ReasonDBSyncFailed || err == nil || !out.Result.IsZero() {
		t.Errorf("failed Job: %+v, %v; want DBSyncFailed with the terminal error and no requeue", out, err)
	}
}
