package config_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
)

func TestCreateImmutable(t *testing.T) {
	for name, k := range kinds {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			data := map[string]string{"identity.conf": "[DEFAULT]\ndebug = false\n", "policy.yaml": "{}"}
			before := map[string]string{"identity.conf": "[DEFAULT]\ndebug = false\n", "policy.yaml": "{}"}

			got, err := k.create(ctx, env.Client, owner, "identity-config", ns, data)
			if err != nil {
				t.Fatal(err)
			}
			if want := "identity-config-" + config.ContentHash(data); got != want {
				t.Errorf("name = %q, want %q", got, want)
			}
			if diff := cmp.Diff(before, data); diff != "" {
				t.Errorf("input data modified (-before +after):\n%s", diff)
			}
			stored := k.get(t, ns, got)
			if stored == nil {
				t.Fatalf("%s %s/%s not stored", k.name, ns, got)
			}
			if diff := cmp.Diff(data, k.read(stored)); diff != "" {
				t.Errorf("stored data (-want +got):\n%s", diff)
			}
			if !k.immutable(stored) {
				t.Error("stored object is not immutable")
			}
			if diff := cmp.Diff(map[string]string{config.ConfigBaseLabel: "identity-config"}, stored.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			ref := metav1.GetControllerOf(stored)
			if ref == nil || ref.UID != owner.UID || ref.Kind != "ConfigMap" || ref.Name != "identity" ||
				ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
				t.Errorf("controller reference = %+v, want a blocking one to ConfigMap identity %s", ref, owner.UID)
			}
			if s, ok := stored.(*corev1.Secret); ok && s.Type != corev1.SecretTypeOpaque {
				t.Errorf("Secret type = %q, want Opaque", s.Type)
			}

			// The API server enforces immutability.
			k.read(stored)["identity.conf"] = "changed"
			if s, ok := stored.(*corev1.Secret); ok {
				s.Data["identity.conf"] = []byte("changed")
			}
			if err := env.Client.Update(ctx, stored); !apierrors.IsInvalid(err) {
				t.Errorf("update of the immutable object: err = %v, want Invalid", err)
			}
		})
	}
}

func TestCreateImmutableIsIdempotent(t *testing.T) {
	for name, k := range kinds {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			data := map[string]string{"a": "1"}
			first, err := k.create(ctx, env.Client, owner, "cfg", ns, data)
			if err != nil {
				t.Fatal(err)
			}
			rv := k.get(t, ns, first).GetResourceVersion()

			c, counter := warmClient(t, ns)
			second, err := k.create(ctx, c, owner, "cfg", ns, map[string]string{"a": "1"})
			if err != nil {
				t.Fatalf("second create: %v", err)
			}
			if second != first {
				t.Errorf("second create returned %q, want %q", second, first)
			}
			// The object is read first and found: one GET, no create.
			if got, gets := counter.Total(), counter.Method("GET"); got != 1 || gets != 1 {
				t.Errorf("requests = %d (%d GET), want one GET and no write", got, gets)
			}
			if got := k.get(t, ns, first).GetResourceVersion(); got != rv {
				t.Errorf("resourceVersion moved %s -> %s", rv, got)
			}

			other, err := k.create(ctx, env.Client, owner, "cfg", ns, map[string]string{"a": "2"})
			if err != nil {
				t.Fatal(err)
			}
			if other == first {
				t.Errorf("different data produced the same name %q", other)
			}
			if got := k.existing(t, ns, first, other); len(got) != 2 {
				t.Errorf("existing = %v, want both %s and %s", got, first, other)
			}
		})
	}
}

func TestCreateImmutableRefusesSomeoneElsesObject(t *testing.T) {
	for name, k := range kinds {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			stranger := newOwner(t, ns, "stranger")
			data := map[string]string{"password": "hunter2-s3cr3t"}
			target := "cfg-" + config.ContentHash(data)

			cases := map[string]struct {
				refs    []metav1.OwnerReference
				data    map[string]string
				mutable bool
				want    error
				wantMsg []string
			}{
				"controlled by another owner": {
					refs: []metav1.OwnerReference{controllerRef(stranger)}, data: data, want: config.ErrForeignObject,
					wantMsg: []string{k.name + " " + ns + "/" + target, "ConfigMap stranger", string(stranger.UID), "ConfigMap " + ns + "/identity"},
				},
				"owned but not controlled": {
					refs: []metav1.OwnerReference{func() metav1.OwnerReference {
						r := controllerRef(owner)
						r.Controller = nil
						return r
					}()},
					data: data, want: config.ErrForeignObject, wantMsg: []string{"no controller"},
				},
				"without any owner": {data: data, want: config.ErrForeignObject, wantMsg: []string{"no controller"}},
				"ours, other data (hash collision)": {
					refs: []metav1.OwnerReference{controllerRef(owner)}, data: map[string]string{"password": "other"},
					want: config.ErrContentMismatch, wantMsg: []string{k.name + " " + ns + "/" + target},
				},
				"ours, same data, but mutable": {
					refs: []metav1.OwnerReference{controllerRef(owner)}, data: data, mutable: true,
					want: config.ErrContentMismatch,
				},
			}
			for name, tc := range cases {
				t.Run(name, func(t *testing.T) {
					obj := k.build(metav1.ObjectMeta{Name: target, Namespace: ns, OwnerReferences: tc.refs}, tc.data)
					if tc.mutable {
						switch o := obj.(type) {
						case *corev1.ConfigMap:
							o.Immutable = nil
						case *corev1.Secret:
							o.Immutable = nil
						}
					}
					if err := env.Client.Create(ctx, obj); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })

					got, err := k.create(ctx, env.Client, owner, "cfg", ns, data)
					if !errors.Is(err, tc.want) {
						t.Fatalf("create = %q, %v; want errors.Is %v", got, err, tc.want)
					}
					if got != "" {
						t.Errorf("name %q returned with an error", got)
					}
					if errors.Is(tc.want, config.ErrForeignObject) {
						var nce *apply.NotControlledError
						if !errors.Is(err, apply.ErrNotControlled) || !errors.As(err, &nce) {
							t.Errorf("error %v does not match apply.ErrNotControlled with a *apply.NotControlledError", err)
						} else if want := metav1.GetControllerOf(obj); !cmp.Equal(nce.Controller, want) {
							t.Errorf("error names controller %+v, want %+v", nce.Controller, want)
						}
					}
					if now := k.get(t, ns, target); now == nil || now.GetResourceVersion() != obj.GetResourceVersion() {
						t.Errorf("the existing object was changed or removed")
					}
					for _, m := range tc.wantMsg {
						if !strings.Contains(err.Error(), m) {
							t.Errorf("error %q does not name %q", err, m)
						}
					}
					if strings.Contains(err.Error(), "hunter2") {
						t.Errorf("error leaks data: %v", err)
					}
				})
			}
		})
	}
}

func TestCreateImmutableRejectsBadInputBeforeAnyRequest(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	otherNS := env.Namespace(t)
	cases := map[string]struct {
		owner    client.Object
		base, ns string
		want     error
		wantMsg  string
	}{
		"empty base name":          {owner: owner, base: "", ns: ns, want: config.ErrInvalidBaseName, wantMsg: "baseName"},
		"upper-case base name":     {owner: owner, base: "Identity", ns: ns, want: config.ErrInvalidBaseName, wantMsg: `baseName "Identity"`},
		"underscore in base name":  {owner: owner, base: "key_stone", ns: ns, want: config.ErrInvalidBaseName, wantMsg: `"key_stone"`},
		"base name ending in dash": {owner: owner, base: "identity-", ns: ns, want: config.ErrInvalidBaseName},
		"base name with slash":     {owner: owner, base: "a/b", ns: ns, want: config.ErrInvalidBaseName},
		"base name over 63 characters (label value)": {
			owner: owner, base: strings.Repeat("a", 64), ns: ns, want: config.ErrInvalidBaseName, wantMsg: config.ConfigBaseLabel,
		},
		"empty namespace":          {owner: owner, base: "cfg", ns: "", want: config.ErrInvalidNamespace},
		"nil owner":                {owner: nil, base: "cfg", ns: ns, want: apply.ErrNilOwner},
		"typed nil owner":          {owner: (*corev1.ConfigMap)(nil), base: "cfg", ns: ns, want: apply.ErrNilOwner},
		"owner never persisted":    {owner: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns}}, base: "cfg", ns: ns, want: apply.ErrOwnerNotPersisted, wantMsg: ns + "/ghost"},
		"owner in other namespace": {owner: owner, base: "cfg", ns: otherNS, want: apply.ErrInvalidOwner, wantMsg: otherNS + "/cfg-"},
	}
	for kname, k := range kinds {
		for name, tc := range cases {
			t.Run(kname+"/"+name, func(t *testing.T) {
				c, counter, err := env.CountingClient()
				if err != nil {
					t.Fatal(err)
				}
				got, err := k.create(ctx, c, tc.owner, tc.base, tc.ns, map[string]string{"a": "b"})
				if !errors.Is(err, tc.want) {
					t.Fatalf("create = %q, %v; want errors.Is %v", got, err, tc.want)
				}
				if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
					t.Errorf("error %q does not mention %q", err, tc.wantMsg)
				}
				if n := counter.Total(); n != 0 {
					t.Errorf("refused input still sent %d API requests", n)
				}
			})
		}
	}
}

func TestCreateImmutableAcceptsLongestBaseName(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	base := strings.Repeat("a", 30) + "." + strings.Repeat("b", 32) // 63 characters
	for name, k := range kinds {
		t.Run(name, func(t *testing.T) {
			got, err := k.create(ctx, env.Client, owner, base, ns, map[string]string{"k": "v"})
			if err != nil {
				t.Fatal(err)
			}
			if k.get(t, ns, got) == nil {
				t.Errorf("%s %s not stored", k.name, got)
			}
		})
	}
}

func TestCreateImmutableWrapsAPIErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("rbac says no"))
	cases := map[string]interceptor.Funcs{
		"create fails": {Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return forbidden
		}},
		"reading the existing object fails": {
			Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
				return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, obj.GetName())
			},
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return forbidden
			},
		},
	}
	for kname, k := range kinds {
		for name, funcs := range cases {
			t.Run(kname+"/"+name, func(t *testing.T) {
				base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
				if err != nil {
					t.Fatal(err)
				}
				data := map[string]string{"a": "b"}
				_, err = k.create(ctx, interceptor.NewClient(base, funcs), owner, "cfg", ns, data)
				if !apierrors.IsForbidden(err) {
					t.Fatalf("error %v does not unwrap to Forbidden", err)
				}
				if want := k.name + " " + ns + "/cfg-" + config.ContentHash(data); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			})
		}
	}
}

func TestCreateImmutableRejectsSchemeWithoutCoreKinds(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	_, err = config.CreateImmutableConfigMap(ctx, c, runtime.NewScheme(), owner, "cfg", ns, nil)
	if !errors.Is(err, apply.ErrUnknownKind) {
		t.Errorf("ConfigMap: error = %v, want errors.Is apply.ErrUnknownKind", err)
	}
	_, err = config.CreateImmutableSecret(ctx, c, runtime.NewScheme(), owner, "cfg", ns, nil)
	if !errors.Is(err, apply.ErrUnknownKind) {
		t.Errorf("Secret: error = %v, want errors.Is apply.ErrUnknownKind", err)
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("refused input still sent %d API requests", n)
	}
}

// TestCreateImmutableWaitsForObjectBeingDeleted: an object of the name being deleted
// (held by a finalizer) is refused with apply.ErrBeingDeleted and left alone, whoever
// controls it; once it is gone the next call creates it again, so the configuration
// is not lost.
func TestCreateImmutableWaitsForObjectBeingDeleted(t *testing.T) {
	for kname, k := range kinds {
		for _, controller := range []string{"owner", "stranger", "none"} {
			t.Run(kname+"/controlled by "+controller, func(t *testing.T) {
				ctx := context.Background()
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "identity")
				data := map[string]string{"identity.conf": "[DEFAULT]\n"}
				target := "cfg-" + config.ContentHash(data)
				var refs []metav1.OwnerReference
				switch controller {
				case "owner":
					refs = []metav1.OwnerReference{controllerRef(owner)}
				case "stranger":
					refs = []metav1.OwnerReference{controllerRef(newOwner(t, ns, "stranger"))}
				}
				obj := k.build(metav1.ObjectMeta{Name: target, Namespace: ns, OwnerReferences: refs,
					Labels: map[string]string{config.ConfigBaseLabel: "cfg"}, Finalizers: []string{"example.com/hold"}}, data)
				if err := env.Client.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}
				if err := env.Client.Delete(ctx, obj); err != nil {
					t.Fatal(err)
				}
				held := k.get(t, ns, target)
				if held == nil || held.GetDeletionTimestamp() == nil {
					t.Fatal("object not held in deletion")
				}

				got, err := k.create(ctx, env.Client, owner, "cfg", ns, data)
				if !errors.Is(err, apply.ErrBeingDeleted) || got != "" {
					t.Fatalf("create = %q, %v; want an error matching apply.ErrBeingDeleted", got, err)
				}
				if !strings.Contains(err.Error(), k.name+" "+ns+"/"+target) {
					t.Errorf("error %q does not name the object", err)
				}
				if now := k.get(t, ns, target); now == nil || now.GetResourceVersion() != held.GetResourceVersion() {
					t.Fatal("the object being deleted was changed")
				}

				held.SetFinalizers(nil)
				if err := env.Client.Update(ctx, held); err != nil {
					t.Fatal(err)
				}
				if k.get(t, ns, target) != nil {
					t.Fatal("object still there after its finalizer was removed")
				}
				if got, err = k.create(ctx, env.Client, owner, "cfg", ns, data); err != nil || got != target {
					t.Fatalf("create after the deletion = %q, %v; want %q", got, err, target)
				}
				now := k.get(t, ns, target)
				if now == nil || !metav1.IsControlledBy(now, owner) || !cmp.Equal(k.read(now), data) {
					t.Errorf("re-created object = %+v, want the owner's with the data", now)
				}
			})
		}
	}
}

// TestCreateImmutableAdoptsOnlyOnOptIn: an existing object without a controller is
// adopted only when it carries apply.AdoptAnnotation = "true" and holds the data
// immutably; it then gets the owner as controller and the base label, and its data is
// untouched. Everything else is refused and left as it is.
func TestCreateImmutableAdoptsOnlyOnOptIn(t *testing.T) {
	data := map[string]string{"identity.conf": "[DEFAULT]\n"}
	cases := map[string]struct {
		annotation  string
		stranger    bool
		data        map[string]string
		mutable     bool
		want        error
		wantAdopted bool
	}{
		"opted in, same data":              {annotation: "true", data: data, wantAdopted: true},
		"opted in, other data":             {annotation: "true", data: map[string]string{"identity.conf": "other"}, want: config.ErrContentMismatch},
		"opted in, mutable":                {annotation: "true", data: data, mutable: true, want: config.ErrContentMismatch},
		"annotation not true":              {annotation: "yes", data: data, want: config.ErrForeignObject},
		"opted in, but another controller": {annotation: "true", stranger: true, data: data, want: config.ErrForeignObject},
	}
	for kname, k := range kinds {
		for name, tc := range cases {
			t.Run(kname+"/"+name, func(t *testing.T) {
				ctx := context.Background()
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "identity")
				target := "cfg-" + config.ContentHash(data)
				var refs []metav1.OwnerReference
				if tc.stranger {
					refs = []metav1.OwnerReference{controllerRef(newOwner(t, ns, "stranger"))}
				}
				obj := k.build(metav1.ObjectMeta{Name: target, Namespace: ns, OwnerReferences: refs,
					Labels: map[string]string{"app": "identity"}, Annotations: map[string]string{apply.AdoptAnnotation: tc.annotation}}, tc.data)
				if tc.mutable {
					switch o := obj.(type) {
					case *corev1.ConfigMap:
						o.Immutable = nil
					case *corev1.Secret:
						o.Immutable = nil
					}
				}
				if err := env.Client.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}

				got, err := k.create(ctx, env.Client, owner, "cfg", ns, data)
				now := k.get(t, ns, target)
				if !tc.wantAdopted {
					if !errors.Is(err, tc.want) || got != "" {
						t.Fatalf("create = %q, %v; want errors.Is %v", got, err, tc.want)
					}
					if now.GetResourceVersion() != obj.GetResourceVersion() {
						t.Error("the refused object was changed")
					}
					return
				}
				if err != nil || got != target {
					t.Fatalf("create = %q, %v; want %q adopted", got, err, target)
				}
				if !metav1.IsControlledBy(now, owner) {
					t.Errorf("owner references = %+v, want the owner as controller", now.GetOwnerReferences())
				}
				wantLabels := map[string]string{"app": "identity", config.ConfigBaseLabel: "cfg"}
				if diff := cmp.Diff(wantLabels, now.GetLabels()); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(data, k.read(now)); diff != "" {
					t.Errorf("data (-want +got):\n%s", diff)
				}
				// Adopted, it is the owner's like any other: a second call is a no-op.
				if again, err := k.create(ctx, env.Client, owner, "cfg", ns, data); err != nil || again != target {
					t.Errorf("second create = %q, %v", again, err)
				}
			})
		}
	}
}

// TestNilSchemeIsAnError: every exported function of the package that takes a
// *runtime.Scheme returns an error matching apply.ErrNilScheme and naming the object
// for a nil scheme, before any API call, and never panics.
func TestNilSchemeIsAnError(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	data := map[string]string{"a": "b"}
	funcs := map[string]struct {
		call func(c client.Client) (string, error)
		what string
	}{
		"CreateImmutableConfigMap": {
			call: func(c client.Client) (string, error) {
				return config.CreateImmutableConfigMap(ctx, c, nil, owner, "cfg", ns, data)
			},
			what: "ConfigMap " + ns + "/cfg-" + config.ContentHash(data),
		},
		"CreateImmutableSecret": {
			call: func(c client.Client) (string, error) {
				return config.CreateImmutableSecret(ctx, c, nil, owner, "cfg", ns, toBytes(data))
			},
			what: "Secret " + ns + "/cfg-" + config.ContentHash(data),
		},
	}
	for name, fn := range funcs {
		t.Run(name, func(t *testing.T) {
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			var got string
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked on a nil scheme: %v", r)
					}
				}()
				got, err = fn.call(c)
			}()
			if !errors.Is(err, apply.ErrNilScheme) || got != "" {
				t.Fatalf("= %q, %v; want an error matching apply.ErrNilScheme", got, err)
			}
			if !strings.Contains(err.Error(), fn.what) {
				t.Errorf("error %q does not name %s", err, fn.what)
			}
			if n := counter.Total(); n != 0 {
				t.Errorf("sent %d API requests", n)
			}
		})
	}
}
