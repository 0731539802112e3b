package secrets_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// operatorName is the field manager the Applier tests name the operator with.
const operatorName = "my-operator"

// generatedPass is a reconciler's credential step: generate the Secret, push it.
func generatedPass(c client.Client, owner client.Object, gs secrets.GeneratedSecret) func(context.Context) error {
	return func(ctx context.Context) error {
		outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, owner, gs)
		if err != nil {
			return err
		}
		if !outcome.Ready() {
			return nil
		}
		ps, err := secrets.GeneratedPushSecret(gs, secrets.GeneratedPush{RemoteKey: "identity/admin", Property: "password"})
		if err != nil {
			return err
		}
		return secrets.EnsurePushSecret(ctx, c, env.Scheme, owner, ps)
	}
}

// TestConvergedPassThroughApplierSendsNothing: once the informers have caught up, a
// pass of EnsureGeneratedSecret and EnsurePushSecret through an Applier over a
// manager's cache sends no request at all; with Secrets read past the cache
// (client.CacheOptions.DisableFor), it sends exactly one GET.
func TestConvergedPassThroughApplierSendsNothing(t *testing.T) {
	cases := map[string]struct {
		uncached []client.Object
		gets     int
	}{
		"Secrets cached":   {gets: 0},
		"Secrets uncached": {uncached: []client.Object{&corev1.Secret{}}, gets: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			a, counter := env.StartApplier(t, ns, operatorName, tc.uncached...)
			gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
			pass := generatedPass(a, owner, gs)

			ctx, writes := apply.WithWrites(context.Background())
			if err := pass(ctx); err != nil {
				t.Fatal(err)
			}
			want := []string{"Secret " + gs.Key.String() + " created", "PushSecret " + gs.Key.String() + " created"}
			if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
				t.Errorf("first pass writes (-want +got):\n%s", diff)
			}
			value, rv := readValue(t, gs.Key, "password")
			testenv.ExpectQuiet(t, counter, tc.gets, pass)
			if v, r := readValue(t, gs.Key, "password"); v != value || r != rv {
				t.Errorf("the converged passes changed the Secret (rv %s -> %s)", rv, r)
			}
		})
	}
}

// TestEnsureGeneratedSecretRecordsWrites: the create, the patch that adds a missing key
// and the patch that adopts a Secret are reported through apply.Record; a pass that
// keeps the Secret records nothing.
func TestEnsureGeneratedSecretRecordsWrites(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	ctx, writes := apply.WithWrites(context.Background())
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "generated"}, "password")
	createOwnedSecret(t, owner, "without-key", map[string][]byte{"other": []byte("x")})
	adoptable := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "adoptable", Namespace: ns,
		Annotations: map[string]string{apply.AdoptAnnotation: "true"}}, Data: map[string][]byte{"password": []byte("kept-value-0123456789")}}
	if err := env.Client.Create(ctx, adoptable); err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"generated", "generated", "without-key", "adoptable", "adoptable"} {
		gs.Key.Name = name
		if _, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	want := []string{
		"Secret " + ns + "/generated created",
		"Secret " + ns + "/without-key configured data.password",
		"Secret " + ns + "/adoptable configured metadata.ownerReferences",
	}
	if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	for _, w := range writes.All() {
		if w.GVK != corev1.SchemeGroupVersion.WithKind("Secret") {
			t.Errorf("write %s has GVK %v", w, w.GVK)
		}
	}
}

// TestEnsureGeneratedSecretThroughApplierWritesUnderTheOperatorsName: the create and
// the patch of EnsureGeneratedSecret, and the PushSecret's apply, made through an
// Applier carry the operator's field manager.
func TestEnsureGeneratedSecretThroughApplierWritesUnderTheOperatorsName(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
	createOwnedSecret(t, owner, "without-key", map[string][]byte{"other": []byte("x")})

	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "generated"}, "password")
	if err := generatedPass(a, owner, gs)(ctx); err != nil {
		t.Fatal(err)
	}
	patched := gs
	patched.Key.Name = "without-key"
	if _, err := secrets.EnsureGeneratedSecret(ctx, a, env.Scheme, owner, patched); err != nil {
		t.Fatal(err)
	}
	generated, withKey := &corev1.Secret{}, &corev1.Secret{}
	for key, s := range map[client.ObjectKey]*corev1.Secret{gs.Key: generated, patched.Key: withKey} {
		if err := env.Client.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{operatorName + "/Update"}, testenv.FieldManagers(generated)); diff != "" {
		t.Errorf("managers of the generated Secret (-want +got):\n%s", diff)
	}
	if got := testenv.FieldManagers(withKey); len(got) != 2 || !slices.Contains(got, operatorName+"/Update") {
		t.Errorf("managers of the patched Secret = %v, want the creator's and %s/Update", got, operatorName)
	}
	ps := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, gs.Key, ps); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{apply.CreateFieldManager(operatorName) + "/Update"}, testenv.FieldManagers(ps)); diff != "" {
		t.Errorf("managers of the PushSecret (-want +got):\n%s", diff)
	}
}

// TestEnsureGeneratedSecretReadsPastAStaleCache: when the read misses a Secret that
// exists (a cache that has not seen it yet), the create meets AlreadyExists and the
// Secret is read again past the cache and kept: no error, no second value.
func TestEnsureGeneratedSecretReadsPastAStaleCache(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "generated"}, "password")
	if _, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs); err != nil {
		t.Fatal(err)
	}
	value, rv := readValue(t, gs.Key, "password")
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	stale := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, typed := obj.(*corev1.Secret); typed {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	ctx, writes := apply.WithWrites(ctx)
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, stale, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretKept {
		t.Fatalf("past a stale cache = %v, %v; want Kept", outcome, err)
	}
	if v, r := readValue(t, gs.Key, "password"); v != value || r != rv {
		t.Errorf("the Secret changed (rv %s -> %s)", rv, r)
	}
	if w := writes.All(); len(w) != 0 {
		t.Errorf("recorded %v, want nothing", w)
	}
}
