package world_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// password is the value the tests' backend holds.
const password = "world-test-password-0123456789"

// cr stands for the custom resource whose dependencies are played: only its namespace
// counts.
func cr(ns string) client.Object {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cr", Namespace: ns}}
}

// mariaDBRef is the mariaDbRef of the test's Database, User and Grant.
var mariaDBRef = mariadbv1alpha1.MariaDBRef{ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"}}

func externalSecret(ns, name string, deletion esov1.ExternalSecretDeletionPolicy, data ...esov1.ExternalSecretData) *esov1.ExternalSecret {
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Kind: "ClusterSecretStore", Name: world.DefaultClusterSecretStore},
			Target:         esov1.ExternalSecretTarget{DeletionPolicy: deletion},
			Data:           data,
		},
	}
}

func adminPassword() esov1.ExternalSecretData {
	return esov1.ExternalSecretData{SecretKey: "password",
		RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "app/admin", Property: "password"}}
}

func deployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": "api"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "registry.example/api:1"}}},
			},
		},
	}
}

func get(t *testing.T, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), key, obj); err != nil {
		t.Fatal(err)
	}
}

func readyTrue(conds []metav1.Condition, generation int64) string {
	c := meta.FindStatusCondition(conds, "Ready")
	switch {
	case c == nil:
		return "no Ready"
	case c.ObservedGeneration != generation:
		return "stale Ready"
	}
	return string(c.Status)
}

func storeReady(st esov1.SecretStoreStatus) string {
	for _, c := range st.Conditions {
		if c.Type == esov1.SecretStoreReady {
			return string(c.Status) + " " + c.Reason + " " + string(st.Capabilities)
		}
	}
	return "no Ready"
}

func esReady(t *testing.T, key client.ObjectKey) string {
	t.Helper()
	es := &esov1.ExternalSecret{}
	get(t, key, es)
	for _, c := range es.Status.Conditions {
		if c.Type == esov1.ExternalSecretReady {
			return string(c.Status) + " " + c.Reason
		}
	}
	return "no Ready"
}

// writes counts the write calls an injector saw.
func writes(inj *faults.Injector) int {
	n := 0
	for _, v := range faults.Verbs() {
		if v.IsWrite() {
			n += inj.Calls(v)
		}
	}
	return n
}

// Each kind of dependency turns Ready through Play, and a second Play writes nothing.
func TestPlayMakesEachKindReady(t *testing.T) {
	for name, tc := range map[string]struct {
		reason  string
		opts    func(ns string) []world.Option
		objects func(ns string) []client.Object
		// want reads what Play made of the objects, as text.
		want     func(t *testing.T, ns string) string
		wantText string
	}{
		"named ClusterSecretStore": {
			reason: "the World creates the stores it names and makes them Ready",
			opts:   func(ns string) []world.Option { return []world.Option{world.WithClusterSecretStores("store-" + ns)} },
			want: func(t *testing.T, ns string) string {
				s := &esov1.ClusterSecretStore{}
				get(t, client.ObjectKey{Name: "store-" + ns}, s)
				return storeReady(s.Status)
			},
			wantText: "True Valid ReadWrite",
		},
		"default ClusterSecretStore": {
			reason: "without WithClusterSecretStores the SDK's shared store is played",
			want: func(t *testing.T, _ string) string {
				s := &esov1.ClusterSecretStore{}
				get(t, client.ObjectKey{Name: world.DefaultClusterSecretStore}, s)
				return storeReady(s.Status)
			},
			wantText: "True Valid ReadWrite",
		},
		"SecretStore": {
			reason: "a SecretStore of the namespace is made Ready",
			objects: func(ns string) []client.Object {
				return []client.Object{&esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Name: "bao", Namespace: ns},
					Spec: esov1.SecretStoreSpec{Provider: &apiextensionsv1.JSON{Raw: []byte(`{"vault":{"server":"http://bao:8200"}}`)}}}}
			},
			want: func(t *testing.T, ns string) string {
				s := &esov1.SecretStore{}
				get(t, client.ObjectKey{Namespace: ns, Name: "bao"}, s)
				return storeReady(s.Status)
			},
			wantText: "True Valid ReadWrite",
		},
		"ExternalSecret with its value": {
			reason: "the target Secret holds the backend's value and the ExternalSecret is synced",
			opts: func(string) []world.Option {
				return []world.Option{world.WithSecret("app/admin", map[string][]byte{"password": []byte(password)})}
			},
			objects: func(ns string) []client.Object {
				return []client.Object{externalSecret(ns, "admin", "", adminPassword())}
			},
			want: func(t *testing.T, ns string) string {
				s := &corev1.Secret{}
				get(t, client.ObjectKey{Namespace: ns, Name: "admin"}, s)
				return esReady(t, client.ObjectKey{Namespace: ns, Name: "admin"}) + " " + string(s.Data["password"])
			},
			wantText: "True SecretSynced " + password,
		},
		"ExternalSecret without a backup": {
			reason: "a restore ExternalSecret (deletionPolicy Delete) learns that the backend holds nothing",
			objects: func(ns string) []client.Object {
				return []client.Object{externalSecret(ns, "restore", esov1.DeletionPolicyDelete, adminPassword())}
			},
			want: func(t *testing.T, ns string) string {
				err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "restore"}, &corev1.Secret{})
				return esReady(t, client.ObjectKey{Namespace: ns, Name: "restore"}) + " " + string(apierrors.ReasonForError(err))
			},
			wantText: "True SecretDeleted NotFound",
		},
		"PushSecret": {
			reason: "the source Secret is pushed into the backend and the PushSecret is synced",
			objects: func(ns string) []client.Object {
				return []client.Object{
					&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: ns}, Data: map[string][]byte{"0": []byte("key-0")}},
					&esov1alpha1.PushSecret{
						ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: ns},
						Spec: esov1alpha1.PushSecretSpec{
							SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Kind: "ClusterSecretStore", Name: world.DefaultClusterSecretStore}},
							Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: "keys"}},
							Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
								RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: "app/keys-" + ns}}}},
						},
					},
				}
			},
			want: func(t *testing.T, ns string) string {
				ps := &esov1alpha1.PushSecret{}
				get(t, client.ObjectKey{Namespace: ns, Name: "keys"}, ps)
				return string(ps.Status.Conditions[0].Status) + " " + ps.Status.Conditions[0].Reason
			},
			wantText: "True Synced",
		},
		"MariaDB created": {
			reason: "WithMariaDB creates the server the Databases name, Ready",
			opts:   func(string) []world.Option { return []world.Option{world.WithMariaDB("mariadb")} },
			want: func(t *testing.T, ns string) string {
				m := &mariadbv1alpha1.MariaDB{}
				get(t, client.ObjectKey{Namespace: ns, Name: "mariadb"}, m)
				return readyTrue(m.Status.Conditions, m.Generation)
			},
			wantText: "True",
		},
		"Database, User and Grant": {
			reason: "mariadb-operator's three kinds are Ready for their generation, the Grant's privileges current",
			objects: func(ns string) []client.Object {
				return []client.Object{
					&mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
						Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariaDBRef}},
					&mariadbv1alpha1.User{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
						Spec: mariadbv1alpha1.UserSpec{MariaDBRef: mariaDBRef, Host: "%"}},
					&mariadbv1alpha1.Grant{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
						Spec: mariadbv1alpha1.GrantSpec{MariaDBRef: mariaDBRef, Privileges: []string{"ALL PRIVILEGES"},
							Database: "app", Username: "app", Host: new("%")}},
				}
			},
			want: func(t *testing.T, ns string) string {
				key := client.ObjectKey{Namespace: ns, Name: "app"}
				db, u, g := &mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}
				get(t, key, db)
				get(t, key, u)
				get(t, key, g)
				return strings.Join([]string{readyTrue(db.Status.Conditions, db.Generation), readyTrue(u.Status.Conditions, u.Generation),
					readyTrue(g.Status.Conditions, g.Generation), strings.Join(g.Status.CurrentPrivileges, ",")}, " ")
			},
			wantText: "True True True ALL PRIVILEGES",
		},
		"Certificate": {
			reason: "the Certificate is Ready and its TLS Secret issued",
			objects: func(ns string) []client.Object {
				return []client.Object{&certmanagerv1.Certificate{
					ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
					Spec: certmanagerv1.CertificateSpec{CommonName: "api", DNSNames: []string{"api." + ns + ".svc"},
						SecretName: "api-tls", IssuerRef: cmmeta.IssuerReference{Name: "ca"}},
				}}
			},
			want: func(t *testing.T, ns string) string {
				c := &certmanagerv1.Certificate{}
				get(t, client.ObjectKey{Namespace: ns, Name: "api"}, c)
				s := &corev1.Secret{}
				get(t, client.ObjectKey{Namespace: ns, Name: "api-tls"}, s)
				return string(c.Status.Conditions[0].Status) + " " + string(s.Type)
			},
			wantText: "True kubernetes.io/tls",
		},
		"HTTPRoute": {
			reason: "every parentRef accepts the route for its generation",
			objects: func(ns string) []client.Object {
				return []client.Object{&gatewayv1.HTTPRoute{
					ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
					Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{
						{Name: "public"}, {Name: "internal"}}}},
				}}
			},
			want: func(t *testing.T, ns string) string {
				r := &gatewayv1.HTTPRoute{}
				get(t, client.ObjectKey{Namespace: ns, Name: "api"}, r)
				var out []string
				for _, p := range r.Status.Parents {
					out = append(out, string(p.ParentRef.Name)+"="+readyAccepted(p.Conditions, r.Generation))
				}
				return strings.Join(out, " ")
			},
			wantText: "public=True internal=True",
		},
		"Deployment with WithWorkloads": {
			reason: "on a control plane without controllers the Deployment is rolled out",
			opts:   func(string) []world.Option { return []world.Option{world.WithWorkloads()} },
			objects: func(ns string) []client.Object {
				return []client.Object{deployment(ns)}
			},
			want: func(t *testing.T, ns string) string {
				d := &appsv1.Deployment{}
				get(t, client.ObjectKey{Namespace: ns, Name: "api"}, d)
				return fmt.Sprintf("%d available", d.Status.AvailableReplicas)
			},
			wantText: "2 available",
		},
		"Deployment without WithWorkloads": {
			reason: "by default Deployments are the real controllers' business",
			objects: func(ns string) []client.Object {
				return []client.Object{deployment(ns)}
			},
			want: func(t *testing.T, ns string) string {
				d := &appsv1.Deployment{}
				get(t, client.ObjectKey{Namespace: ns, Name: "api"}, d)
				return fmt.Sprintf("%d available", d.Status.AvailableReplicas)
			},
			wantText: "0 available",
		},
		"Job with WithWorkloads": {
			reason: "on a control plane without controllers the Job completes",
			opts:   func(string) []world.Option { return []world.Option{world.WithWorkloads()} },
			objects: func(ns string) []client.Object {
				return []client.Object{&batchv1.Job{
					ObjectMeta: metav1.ObjectMeta{Name: "db-sync", Namespace: ns},
					Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "sync", Image: "registry.example/sync:1"}},
					}}},
				}}
			},
			want: func(t *testing.T, ns string) string {
				j := &batchv1.Job{}
				get(t, client.ObjectKey{Namespace: ns, Name: "db-sync"}, j)
				for _, c := range j.Status.Conditions {
					if c.Type == batchv1.JobComplete {
						return "Complete=" + string(c.Status)
					}
				}
				return "not complete"
			},
			wantText: "Complete=True",
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			var opts []world.Option
			if tc.opts != nil {
				opts = tc.opts(ns)
			}
			w := world.New(env.Client, opts...)
			if tc.objects != nil {
				for _, obj := range tc.objects(ns) {
					if err := env.Client.Create(ctx, obj); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Play(ctx, env.Client, cr(ns)); err != nil {
				t.Fatalf("%s: Play: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.wantText, tc.want(t, ns)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
			inj := faults.NewInjector()
			if err := w.Play(ctx, inj.Client(env.Client), cr(ns)); err != nil {
				t.Fatalf("second Play: %v", err)
			}
			if n := writes(inj); n != 0 {
				t.Errorf("the second Play sent %d writes, want none (idempotent)", n)
			}
		})
	}
}

func readyAccepted(conds []metav1.Condition, generation int64) string {
	c := meta.FindStatusCondition(conds, string(gatewayv1.RouteConditionAccepted))
	if c == nil || c.ObservedGeneration != generation {
		return "no current Accepted"
	}
	return string(c.Status)
}

// A changed world is played again: a rotated value, a lost target Secret, a new
// generation of a Database.
func TestPlayFollowsChanges(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	w := world.New(env.Client, world.WithClusterSecretStores(),
		world.WithSecret("app/admin", map[string][]byte{"password": []byte(password)}))
	es := externalSecret(ns, "admin", "", adminPassword())
	db := &mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariaDBRef}}
	for _, obj := range []client.Object{es, db} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	secretValue := func() string {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "admin"}, s); err != nil {
			return err.Error()
		}
		return string(s.Data["password"])
	}
	play := func() {
		t.Helper()
		if err := w.Play(ctx, nil, cr(ns)); err != nil {
			t.Fatal(err)
		}
	}
	play()

	w.Backend().Set("app/admin", map[string][]byte{"password": []byte("rotated-" + password)})
	play()
	if got := secretValue(); got != "rotated-"+password {
		t.Errorf("after a rotation in the backend: %q", got)
	}
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "admin", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	play()
	if got := secretValue(); got != "rotated-"+password {
		t.Errorf("after the target Secret was deleted: %q", got)
	}
	get(t, client.ObjectKeyFromObject(db), db)
	db.Spec.CharacterSet = "latin1"
	if err := env.Client.Update(ctx, db); err != nil {
		t.Fatal(err)
	}
	play()
	get(t, client.ObjectKeyFromObject(db), db)
	if got := readyTrue(db.Status.Conditions, db.Generation); got != "True" || db.Generation != 2 {
		t.Errorf("after a spec change: Ready %s at generation %d, want True at 2", got, db.Generation)
	}
}

// Play leaves alone what is not its business and says why it cannot play.
func TestPlayLeavesAlone(t *testing.T) {
	ctx := context.Background()

	t.Run("being deleted", func(t *testing.T) {
		ns := env.Namespace(t)
		db := env.CreateBeingDeleted(t, &mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: ns},
			Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariaDBRef}})
		if err := world.New(env.Client, world.WithClusterSecretStores()).Play(ctx, nil, cr(ns)); err != nil {
			t.Fatal(err)
		}
		got := &mariadbv1alpha1.Database{}
		get(t, client.ObjectKeyFromObject(db), got)
		if len(got.Status.Conditions) != 0 {
			t.Errorf("a Database being deleted was played: %+v", got.Status.Conditions)
		}
	})

	t.Run("someone else's target Secret", func(t *testing.T) {
		ns := env.Namespace(t)
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
		if err := env.Client.Create(ctx, owner); err != nil {
			t.Fatal(err)
		}
		theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "admin", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: new(true)}}},
			Data: map[string][]byte{"password": []byte("theirs")}}
		if err := env.Client.Create(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, externalSecret(ns, "admin", "", adminPassword())); err != nil {
			t.Fatal(err)
		}
		w := world.New(env.Client, world.WithClusterSecretStores(),
			world.WithSecret("app/admin", map[string][]byte{"password": []byte(password)}))
		err := w.Play(ctx, nil, cr(ns))
		if err == nil || !strings.Contains(err.Error(), "ExternalSecret "+ns+"/admin") || strings.Contains(err.Error(), password) {
			t.Errorf("Play = %v; want an error naming the ExternalSecret, without the value", err)
		}
		s := &corev1.Secret{}
		get(t, client.ObjectKeyFromObject(theirs), s)
		if string(s.Data["password"]) != "theirs" {
			t.Errorf("someone else's Secret was overwritten")
		}
	})

	t.Run("value missing from the backend", func(t *testing.T) {
		ns := env.Namespace(t)
		if err := env.Client.Create(ctx, externalSecret(ns, "admin", "", adminPassword())); err != nil {
			t.Fatal(err)
		}
		w := world.New(env.Client, world.WithClusterSecretStores(),
			world.WithSecret("app/admin", map[string][]byte{"user": []byte("admin")}))
		err := w.Play(ctx, nil, cr(ns))
		if !errors.Is(err, world.ErrNoValue) || !strings.Contains(err.Error(), ns+"/admin") || !strings.Contains(err.Error(), "app/admin property password") {
			t.Errorf("Play = %v; want ErrNoValue naming the ExternalSecret and the remote key", err)
		}
		if got := esReady(t, client.ObjectKey{Namespace: ns, Name: "admin"}); got != "False SecretSyncedError" {
			t.Errorf("ExternalSecret Ready = %s, want ESO's failed sync", got)
		}
	})

	t.Run("API not installed", func(t *testing.T) {
		ns := env.Namespace(t)
		ww, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		notInstalled := interceptor.NewClient(ww, interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*certmanagerv1.CertificateList); ok {
					return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"}}
				}
				return c.List(ctx, list, opts...)
			},
		})
		if err := world.New(env.Client, world.WithClusterSecretStores()).Play(ctx, notInstalled, cr(ns)); err != nil {
			t.Errorf("Play without cert-manager installed = %v, want nil", err)
		}
	})

	t.Run("cluster-scoped custom resource", func(t *testing.T) {
		err := world.New(env.Client).Play(ctx, nil, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}})
		if !errors.Is(err, world.ErrClusterScoped) {
			t.Errorf("Play = %v, want ErrClusterScoped", err)
		}
	})
}

// Every failed call of Play is reported (a conflict may be retried away), and the next
// Play converges to the world of a run that never failed.
func TestPlayFaults(t *testing.T) {
	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
		ns := env.Namespace(t)
		for _, obj := range []client.Object{
			externalSecret(ns, "admin", "", adminPassword()),
			&mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
				Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariaDBRef}},
		} {
			if err := env.Client.Create(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
		}
		w := world.New(env.Client, world.Playing(world.ExternalSecrets, world.Databases),
			world.WithSecret("app/admin", map[string][]byte{"password": []byte(password)}))
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				return ctrl.Result{}, w.Play(ctx, c, cr(ns))
			},
			State: func(t *testing.T) any {
				s := &corev1.Secret{}
				get(t, client.ObjectKey{Namespace: ns, Name: "admin"}, s)
				db := &mariadbv1alpha1.Database{}
				get(t, client.ObjectKey{Namespace: ns, Name: "app"}, db)
				return []string{esReady(t, client.ObjectKey{Namespace: ns, Name: "admin"}), string(s.Data["password"]),
					readyTrue(db.Status.Conditions, db.Generation)}
			},
		}
	}}.RunWritesAndReads(t)
}

// The condition wait runs the World while it waits: the Database turns Ready only
// because the hook plays it.
func TestExpectConditionWhilePlaying(t *testing.T) {
	ns := env.Namespace(t)
	db := &mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariaDBRef}}
	if err := env.Client.Create(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	w := world.New(env.Client, world.Playing(world.Databases))
	testenv.ExpectConditionWhile(t, env.Client, db, "Ready", metav1.ConditionTrue, w.Hook(db))
}

// Kinds lists what the World plays in Play's order.
func TestKinds(t *testing.T) {
	for name, tc := range map[string]struct {
		reason string
		opts   []world.Option
		want   []world.Kind
	}{
		"default": {reason: "every kind but the workloads", want: world.DefaultKinds()},
		"with workloads": {reason: "Deployments and Jobs added", opts: []world.Option{world.WithWorkloads()},
			want: append(world.DefaultKinds(), world.Deployments, world.Jobs)},
		"playing": {reason: "exactly the kinds named, in Play's order", opts: []world.Option{world.Playing(world.Jobs, world.SecretStores)},
			want: []world.Kind{world.SecretStores, world.Jobs}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, world.New(env.Client, tc.opts...).Kinds()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// The default store is the secrets package's shared store.
func TestDefaultClusterSecretStore(t *testing.T) {
	if world.DefaultClusterSecretStore != secrets.OpenBaoClusterStoreName {
		t.Errorf("DefaultClusterSecretStore = %q, want secrets.OpenBaoClusterStoreName %q", world.DefaultClusterSecretStore, secrets.OpenBaoClusterStoreName)
	}
}
