package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/secrets"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// TestEnsureGeneratedSecretOnATargetCluster: through an Applier for a target cluster
// the generated Secret is claimed, not owner-referenced; another management cluster
// and a caller without owner are refused the claimed Secret; an unclaimed Secret is
// adopted on consent, with the claim fields reported.
func TestEnsureGeneratedSecretOnATargetCluster(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a")
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")

	if outcome, err := secrets.EnsureGeneratedSecret(ctx, a, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretGenerated {
		t.Fatalf("first pass = %v, %v; want Generated", outcome, err)
	}
	created := &corev1.Secret{}
	if err := env.Client.Get(ctx, gs.Key, created); err != nil {
		t.Fatal(err)
	}
	if len(created.OwnerReferences) != 0 || !apply.IsControlled(a, owner, created) {
		t.Fatalf("generated Secret: owner references %v, labels %v; want the claim only", created.OwnerReferences, created.Labels)
	}
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, a, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretKept {
		t.Fatalf("second pass = %v, %v; want Kept", outcome, err)
	}

	for name, call := range map[string]func() error{
		"another management cluster": func() error {
			_, err := secrets.EnsureGeneratedSecret(ctx, testenv.TargetApplier(env.Client, "identity-operator", "mgmt-b"), env.Scheme, owner, gs)
			return err
		},
		"a caller without owner": func() error {
			_, err := secrets.EnsureGeneratedSecret(ctx, a, env.Scheme, nil, gs)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			var nce *apply.NotControlledError
			if !errors.As(err, &nce) || nce.Claim == nil || nce.Claim.ManagementCluster != "mgmt-a" {
				t.Fatalf("error = %v, want a *NotControlledError naming mgmt-a's claim", err)
			}
			if strings.Contains(err.Error(), string(created.Data["password"])) {
				t.Error("the error carries the credential")
			}
			now := &corev1.Secret{}
			if err := env.Client.Get(ctx, gs.Key, now); err != nil {
				t.Fatal(err)
			}
			if now.ResourceVersion != created.ResourceVersion {
				t.Errorf("the refused call wrote the Secret: rv %s -> %s", created.ResourceVersion, now.ResourceVersion)
			}
		})
	}

	t.Run("unclaimed, adopted on consent", func(t *testing.T) {
		key := client.ObjectKey{Namespace: ns, Name: "made-by-kubectl"}
		theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}}
		if err := env.Client.Create(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		gs := secrets.DefaultGeneratedSecret(key, "password")
		if _, err := secrets.EnsureGeneratedSecret(ctx, a, env.Scheme, owner, gs); !errors.Is(err, apply.ErrNotControlled) ||
			!strings.Contains(err.Error(), "not claimed by any owner") {
			t.Fatalf("unclaimed Secret: error = %v, want ErrNotControlled saying it is unclaimed", err)
		}
		theirs.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
		if err := env.Client.Update(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		wctx, writes := apply.WithWrites(ctx)
		if outcome, err := secrets.EnsureGeneratedSecret(wctx, a, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretGenerated {
			t.Fatalf("adoption = %v, %v; want Generated", outcome, err)
		}
		now := &corev1.Secret{}
		if err := env.Client.Get(ctx, key, now); err != nil {
			t.Fatal(err)
		}
		if !apply.IsControlled(a, owner, now) || len(now.OwnerReferences) != 0 {
			t.Errorf("adopted Secret: labels %v, owner references %v", now.Labels, now.OwnerReferences)
		}
		want := []string{"Secret " + key.String() + " configured " + strings.Join(append([]string{"data.password"}, apply.OwnershipFields(a)...), ",")}
		if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
			t.Errorf("reported writes (-want +got):\n%s", diff)
		}
	})
}
