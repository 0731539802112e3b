package config_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// wantClaim is the claim, labels and annotation, of owner "identity" in ns for mgmt-a.
func wantClaim(ns string) map[string]string {
	return map[string]string{
		apply.OwnerClusterLabel:   "mgmt-a",
		apply.OwnerKindLabel:      "ConfigMap",
		apply.OwnerNamespaceLabel: ns,
		apply.OwnerNameLabel:      "identity",
		apply.OwnerAnnotation:     "ConfigMap/" + ns + "/identity",
	}
}

// claimOf returns the claim labels and the owner annotation of obj.
func claimOf(obj client.Object) map[string]string {
	out := map[string]string{}
	for _, k := range []string{apply.OwnerClusterLabel, apply.OwnerKindLabel, apply.OwnerNamespaceLabel, apply.OwnerNameLabel} {
		if v, ok := obj.GetLabels()[k]; ok {
			out[k] = v
		}
	}
	if v, ok := obj.GetAnnotations()[apply.OwnerAnnotation]; ok {
		out[apply.OwnerAnnotation] = v
	}
	return out
}

// TestRemoteCreateImmutable: through an Applier for a target cluster the immutable
// object is claimed, not owner-referenced; the next call finds it in place; another
// management cluster's call for an owner of the same name is refused and writes nothing.
func TestRemoteCreateImmutable(t *testing.T) {
	for name, k := range kinds {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			data := map[string]string{"identity.conf": "[DEFAULT]\n"}
			a := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a")

			got, err := k.create(ctx, a, owner, "identity-config", ns, data)
			if err != nil {
				t.Fatal(err)
			}
			stored := k.get(t, ns, got)
			if diff := cmp.Diff(wantClaim(ns), claimOf(stored)); diff != "" {
				t.Errorf("claim (-want +got):\n%s", diff)
			}
			if len(stored.GetOwnerReferences()) != 0 {
				t.Errorf("owner references %v on a target cluster, want none", stored.GetOwnerReferences())
			}
			if stored.GetLabels()[config.ConfigBaseLabel] != "identity-config" {
				t.Errorf("labels %v lack the config-base label", stored.GetLabels())
			}

			// Found in place: no write, same name.
			ctx2, writes := apply.WithWrites(ctx)
			if again, err := k.create(ctx2, a, owner, "identity-config", ns, data); err != nil || again != got {
				t.Fatalf("second call = %q, %v; want %q, nil", again, err, got)
			}
			if w := writes.All(); len(w) != 0 {
				t.Errorf("second call wrote %v", testenv.WriteStrings(w))
			}

			// Another management cluster, same owner name: refused, nothing written.
			_, err = k.create(ctx, testenv.TargetApplier(env.Client, "identity-operator", "mgmt-b"), owner, "identity-config", ns, data)
			var nce *apply.NotControlledError
			if !errors.Is(err, config.ErrForeignObject) || !errors.As(err, &nce) || nce.Claim == nil || nce.Claim.ManagementCluster != "mgmt-a" {
				t.Fatalf("create for mgmt-b: error = %v, want ErrForeignObject naming mgmt-a's claim", err)
			}
			if !strings.Contains(err.Error(), `management cluster "mgmt-a"`) {
				t.Errorf("error %q does not name the claiming management cluster", err)
			}
			if now := k.get(t, ns, got); now.GetResourceVersion() != stored.GetResourceVersion() {
				t.Errorf("another management cluster's call wrote the object: rv %s -> %s", stored.GetResourceVersion(), now.GetResourceVersion())
			}
		})
	}
}

// TestRemoteCreateImmutableAdoption: an unclaimed object of the name is refused, and
// adopted with its consent: the patch adds the claim and the config-base label, and
// reports those fields.
func TestRemoteCreateImmutableAdoption(t *testing.T) {
	for name, k := range kinds {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			data := map[string]string{"identity.conf": "[DEFAULT]\n"}
			objName := "identity-config-" + config.ContentHash(data)
			theirs := k.build(metav1.ObjectMeta{Name: objName, Namespace: ns}, data)
			if err := env.Client.Create(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			a := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a")

			_, err := k.create(ctx, a, owner, "identity-config", ns, data)
			if !errors.Is(err, config.ErrForeignObject) || !errors.Is(err, apply.ErrNotControlled) {
				t.Fatalf("unclaimed object: error = %v, want ErrForeignObject", err)
			}
			if !strings.Contains(err.Error(), "not claimed by any owner") || !strings.Contains(err.Error(), apply.AdoptAnnotation+"=true") {
				t.Errorf("error %q does not say the object is unclaimed and how to adopt it", err)
			}
			if now := k.get(t, ns, objName); now.GetResourceVersion() != theirs.GetResourceVersion() {
				t.Error("a refused call wrote the object")
			}

			theirs = k.get(t, ns, objName)
			theirs.SetAnnotations(map[string]string{apply.AdoptAnnotation: "true"})
			if err := env.Client.Update(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			ctx2, writes := apply.WithWrites(ctx)
			if got, err := k.create(ctx2, a, owner, "identity-config", ns, data); err != nil || got != objName {
				t.Fatalf("adoption = %q, %v; want %q, nil", got, err, objName)
			}
			now := k.get(t, ns, objName)
			if diff := cmp.Diff(wantClaim(ns), claimOf(now)); diff != "" {
				t.Errorf("claim after adoption (-want +got):\n%s", diff)
			}
			if len(now.GetOwnerReferences()) != 0 || now.GetLabels()[config.ConfigBaseLabel] != "identity-config" {
				t.Errorf("after adoption: owner references %v, labels %v", now.GetOwnerReferences(), now.GetLabels())
			}
			want := []string{k.name + " " + ns + "/" + objName + " configured " + strings.Join(append(
				[]string{"metadata.labels." + config.ConfigBaseLabel}, apply.OwnershipFields(a)...), ",")}
			if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
				t.Errorf("reported writes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRemoteCreateImmutableFaults: a failed read or adoption patch through an Applier
// for a target cluster is returned wrapped with the kind and the object's key.
func TestRemoteCreateImmutableFaults(t *testing.T) {
	ctx := context.Background()
	data := map[string]string{"identity.conf": "[DEFAULT]\n"}
	for _, verb := range []faults.Verb{faults.VerbGet, faults.VerbPatch} {
		t.Run(string(verb), func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			objName := "identity-config-" + config.ContentHash(data)
			theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: ns,
				Annotations: map[string]string{apply.AdoptAnnotation: "true"}}, Data: data, Immutable: new(true)}
			if err := env.Client.Create(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			inj := faults.NewInjector()
			inj.Arm(verb, 1, faults.Internal)
			_, err := config.CreateImmutableConfigMap(ctx, testenv.TargetApplier(inj.Client(env.Client), "identity-operator", "mgmt-a"), env.Scheme,
				owner, "identity-config", ns, data)
			if !inj.Fired() || !errors.Is(err, faults.ErrInjected) {
				t.Fatalf("error = %v, want the injected fault", err)
			}
			if !strings.Contains(err.Error(), "ConfigMap "+ns+"/"+objName) {
				t.Errorf("error %q does not name the kind and key", err)
			}
			now := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), now); err != nil {
				t.Fatal(err)
			}
			if len(claimOf(now)) != 0 {
				t.Errorf("a failed adoption left a claim: %v", claimOf(now))
			}
		})
	}
}

// TestRemotePruneImmutableConfigMaps: through an Applier for a target cluster the prune
// deletes only the stale objects claimed by the owner on this management cluster: not
// another management cluster's, not an unclaimed one, not one that merely carries an
// owner reference to the owner.
func TestRemotePruneImmutableConfigMaps(t *testing.T) {
	for name, k := range kinds {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			ours, theirs := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a"), testenv.TargetApplier(env.Client, "identity-operator", "mgmt-b")
			create := func(a *apply.Applier, content string) string {
				t.Helper()
				n, err := k.create(ctx, a, owner, base, ns, map[string]string{"content": content})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			oldOurs, current := create(ours, "old"), create(ours, "current")
			mgmtB := create(theirs, "mgmt-b")
			unclaimed := k.seed(t, ns, base+"-00000001", label).GetName()
			referenced := k.seed(t, ns, base+"-00000002", label, controllerRef(owner)).GetName()

			ctx2, writes := apply.WithWrites(ctx)
			if err := k.prune(ctx2, ours, owner, base, ns, current, 0); err != nil {
				t.Fatal(err)
			}
			want := []string{current, mgmtB, unclaimed, referenced}
			slices.Sort(want)
			left := k.existing(t, ns, oldOurs, current, mgmtB, unclaimed, referenced)
			slices.Sort(left)
			if diff := cmp.Diff(want, left); diff != "" {
				t.Errorf("left after the prune (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{k.name + " " + ns + "/" + oldOurs + " deleted"}, testenv.WriteStrings(writes.All())); diff != "" {
				t.Errorf("reported writes (-want +got):\n%s", diff)
			}
		})
	}
}
