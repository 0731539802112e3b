package apply_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// configMapGVK is the kind of the ConfigMaps the tests use as owners and children.
var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// readChild reads the ConfigMap "child" of ns past any cache.
func readChild(t *testing.T, ns string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "child"}, cm); err != nil {
		t.Fatalf("read child: %v", err)
	}
	return cm
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

func TestRemoteOwnershipValidate(t *testing.T) {
	cases := map[string]struct {
		cluster string
		valid   bool
	}{
		"a name":                     {cluster: "mgmt-a", valid: true},
		"63 characters":              {cluster: strings.Repeat("m", 63), valid: true},
		"dots and underscores":       {cluster: "eu-de-1.mgmt_a", valid: true},
		"empty":                      {cluster: ""},
		"64 characters":              {cluster: strings.Repeat("m", 64)},
		"a space":                    {cluster: "mgmt a"},
		"a slash":                    {cluster: "region/mgmt"},
		"starts with a hyphen":       {cluster: "-mgmt"},
		"ends with a dot":            {cluster: "mgmt."},
		"non-ASCII":                  {cluster: "mgmt-ä"},
		"trailing newline":           {cluster: "mgmt-a\n"},
		"upper case is a label, too": {cluster: "MGMT-A", valid: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := apply.RemoteOwnership{ManagementCluster: tc.cluster}.Validate()
			if tc.valid {
				if err != nil {
					t.Fatalf("Validate(%q) = %v, want nil", tc.cluster, err)
				}
				return
			}
			if !errors.Is(err, apply.ErrInvalidRemoteOwnership) {
				t.Fatalf("Validate(%q) = %v, want ErrInvalidRemoteOwnership", tc.cluster, err)
			}
		})
	}
}

// TestRemoteInvalidOwnershipRefusedBeforeAnyCall: an Applier with an invalid
// RemoteOwnership makes EnsureObject and SetOwnership fail before any request, and
// writes nothing on obj.
func TestRemoteInvalidOwnershipRefusedBeforeAnyCall(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	for name, cluster := range map[string]string{
		"empty":         "",
		"64 characters": strings.Repeat("m", 64),
		"bad character": "mgmt/a",
	} {
		t.Run(name, func(t *testing.T) {
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			a := testenv.TargetApplier(c, "identity-operator", cluster)
			counter.Reset()
			err = apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager)
			if !errors.Is(err, apply.ErrInvalidRemoteOwnership) {
				t.Fatalf("EnsureObject: error = %v, want ErrInvalidRemoteOwnership", err)
			}
			if !strings.Contains(err.Error(), "ConfigMap "+ns+"/child") {
				t.Errorf("error %q does not name the object", err)
			}
			if n := counter.Total(); n != 0 {
				t.Errorf("an invalid RemoteOwnership sent %d requests, want 0", n)
			}
			obj := desiredConfigMap(ns)
			if err := apply.SetOwnership(a, env.Scheme, owner, obj); !errors.Is(err, apply.ErrInvalidRemoteOwnership) {
				t.Fatalf("SetOwnership: error = %v, want ErrInvalidRemoteOwnership", err)
			}
			if got := claimOf(obj); len(got) != 0 || len(obj.OwnerReferences) != 0 {
				t.Errorf("a refused SetOwnership wrote %v, owner references %v", got, obj.OwnerReferences)
			}
		})
	}
}

func TestApplierRemoteIsACopy(t *testing.T) {
	if r := apply.NewApplier(env.Client, apply.ApplierOptions{}).Remote(); r != nil {
		t.Errorf("Remote() of an Applier without remote ownership = %+v, want nil", r)
	}
	remote := &apply.RemoteOwnership{ManagementCluster: "mgmt-a"}
	a := apply.NewApplier(env.Client, apply.ApplierOptions{Remote: remote})
	remote.ManagementCluster = "changed-after-NewApplier"
	got := a.Remote()
	if got == nil || got.ManagementCluster != "mgmt-a" {
		t.Fatalf("Remote() = %+v, want mgmt-a", got)
	}
	got.ManagementCluster = "changed-through-Remote"
	if again := a.Remote(); again.ManagementCluster != "mgmt-a" {
		t.Errorf("changing the result of Remote() changed the Applier: %+v", again)
	}
}

// TestRemoteEnsureObjectClaimsChild: on a target cluster the child carries the four
// claim labels and the owner annotation, no owner reference, and a converged pass
// through an Applier over a cached client sends nothing.
func TestRemoteEnsureObjectClaimsChild(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a, counter := cachedApplier(t, apply.ApplierOptions{
		FieldManager: "identity-operator",
		Remote:       &apply.RemoteOwnership{ManagementCluster: "mgmt-a"},
	})

	got := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, got, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	stored := readChild(t, ns)
	want := map[string]string{
		apply.OwnerClusterLabel:   "mgmt-a",
		apply.OwnerKindLabel:      "ConfigMap",
		apply.OwnerNamespaceLabel: ns,
		apply.OwnerNameLabel:      "owner",
		apply.OwnerAnnotation:     "ConfigMap/" + ns + "/owner",
	}
	if diff := cmp.Diff(want, claimOf(stored)); diff != "" {
		t.Errorf("claim of the child (-want +got):\n%s", diff)
	}
	if len(stored.OwnerReferences) != 0 {
		t.Errorf("child on a target cluster has owner references %v, want none", stored.OwnerReferences)
	}
	if stored.Labels["app"] != "demo" || stored.Labels[apply.ManagedByLabel] != "identity-operator" {
		t.Errorf("child labels %v lost the desired or managed-by label", stored.Labels)
	}
	if diff := cmp.Diff(want, claimOf(got)); diff != "" {
		t.Errorf("the object passed in does not hold the server's answer (-want +got):\n%s", diff)
	}
	claim, ok := apply.ClaimOf(stored)
	wantClaim := apply.Claim{ManagementCluster: "mgmt-a", GroupKind: configMapGVK.GroupKind(), Namespace: ns, Name: "owner"}
	if !ok || claim != wantClaim {
		t.Errorf("ClaimOf = %+v, %v; want %+v, true", claim, ok, wantClaim)
	}
	if !apply.IsControlled(a, owner, stored) {
		t.Error("IsControlled through the remote Applier is false for the owner's child")
	}
	if apply.IsControlled(env.Client, owner, stored) {
		t.Error("IsControlled through a plain client is true for a child without owner reference")
	}
	if apply.IsControlled(testenv.TargetApplier(env.Client, "identity-operator", "mgmt-b"), owner, stored) {
		t.Error("IsControlled is true for the same owner name on another management cluster")
	}

	settle(ctx, t, a, owner, func() client.Object { return desiredConfigMap(ns) })
	counter.Reset()
	for range 3 {
		ctxN, writes := apply.WithWrites(ctx)
		if err := apply.EnsureObject(ctxN, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		if w := writes.All(); len(w) != 1 || w[0].Action != apply.ActionSkipped {
			t.Fatalf("converged apply on a target cluster reported %v, want one Skipped", w)
		}
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("3 converged applies on a target cluster sent %d requests, want 0", n)
	}
}

// TestRemoteEnsureObjectStrippedClaim: a child whose claim labels someone removed is
// unclaimed: it is refused (the field manager's earlier apply does not count on a target
// cluster) until it is annotated for adoption, and adopted then.
func TestRemoteEnsureObjectStrippedClaim(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a")
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	stripped := readChild(t, ns)
	for _, k := range []string{apply.OwnerClusterLabel, apply.OwnerKindLabel, apply.OwnerNamespaceLabel, apply.OwnerNameLabel} {
		delete(stripped.Labels, k)
	}
	if err := env.Client.Update(ctx, stripped); err != nil {
		t.Fatal(err)
	}

	err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager)
	var nce *apply.NotControlledError
	if !errors.As(err, &nce) || !errors.Is(err, apply.ErrNotControlled) {
		t.Fatalf("stripped claim: error = %v, want a *NotControlledError", err)
	}
	if !nce.Remote || nce.Claim != nil || nce.Controller != nil || nce.PartialClaim {
		t.Errorf("NotControlledError = %+v, want Remote without claim or controller", nce)
	}
	for _, s := range []string{"ConfigMap " + ns + "/child", "not claimed by any owner", apply.AdoptAnnotation + "=true"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if now := readChild(t, ns); now.ResourceVersion != stripped.ResourceVersion {
		t.Errorf("the refused object was written: resourceVersion %s -> %s", stripped.ResourceVersion, now.ResourceVersion)
	}

	stripped = readChild(t, ns)
	stripped.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
	if err := env.Client.Update(ctx, stripped); err != nil {
		t.Fatal(err)
	}
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatalf("stripped claim with the adopt annotation: %v", err)
	}
	if claim, ok := apply.ClaimOf(readChild(t, ns)); !ok || claim.ManagementCluster != "mgmt-a" || claim.Name != "owner" {
		t.Errorf("after adoption ClaimOf = %+v, %v; want the owner's claim", claim, ok)
	}
}

func TestRemoteEnsureObjectNeverTakesWhatIsNotOurs(t *testing.T) {
	ctx := context.Background()
	adopt := func(cm *corev1.ConfigMap) {
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[apply.AdoptAnnotation] = "true"
	}
	// claimedBy makes the child as the Applier of cluster does for the owner named
	// ownerName, then annotates it with annotate (when not nil).
	claimedBy := func(cluster, ownerName string, annotate func(*corev1.ConfigMap)) func(t *testing.T, ns string) client.Object {
		return func(t *testing.T, ns string) client.Object {
			owner := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ownerName}, owner); apierrors.IsNotFound(err) {
				owner = newNamedOwner(t, ns, ownerName)
			} else if err != nil {
				t.Fatal(err)
			}
			theirs := desiredConfigMap(ns)
			theirs.Data = map[string]string{"key": "theirs"}
			if err := apply.EnsureObject(ctx, testenv.TargetApplier(env.Client, "identity-operator", cluster), env.Scheme, owner, theirs, apply.FieldManager); err != nil {
				t.Fatal(err)
			}
			if annotate != nil {
				cm := readChild(t, ns)
				annotate(cm)
				if err := env.Client.Update(ctx, cm); err != nil {
					t.Fatal(err)
				}
			}
			return readChild(t, ns)
		}
	}
	cases := map[string]struct {
		reason    string
		existing  func(t *testing.T, ns string) client.Object
		want      error
		wantMsg   []string
		wantClaim *apply.Claim // with Namespace "NS" for the test's namespace
		partial   bool
	}{
		"claimed by another management cluster": {
			reason:    "two management clusters sharing a target cluster never take each other's children",
			existing:  claimedBy("mgmt-b", "owner", nil),
			want:      apply.ErrNotControlled,
			wantMsg:   []string{"ConfigMap NS/child is claimed by ConfigMap/NS/owner of management cluster \"mgmt-b\", not by ConfigMap NS/owner"},
			wantClaim: &apply.Claim{ManagementCluster: "mgmt-b", GroupKind: configMapGVK.GroupKind(), Namespace: "NS", Name: "owner"},
		},
		"claimed by another management cluster, with the adopt annotation": {
			reason:    "the annotation never hands over a claimed object",
			existing:  claimedBy("mgmt-b", "owner", adopt),
			want:      apply.ErrNotControlled,
			wantMsg:   []string{`management cluster "mgmt-b"`},
			wantClaim: &apply.Claim{ManagementCluster: "mgmt-b", GroupKind: configMapGVK.GroupKind(), Namespace: "NS", Name: "owner"},
		},
		"claimed by another owner of the same management cluster": {
			reason:    "a claim names one owner",
			existing:  claimedBy("mgmt-a", "other", adopt),
			want:      apply.ErrNotControlled,
			wantMsg:   []string{"claimed by ConfigMap/NS/other of management cluster \"mgmt-a\""},
			wantClaim: &apply.Claim{ManagementCluster: "mgmt-a", GroupKind: configMapGVK.GroupKind(), Namespace: "NS", Name: "other"},
		},
		"unclaimed": {
			reason:   "an object made by kubectl on the target cluster is not adopted silently",
			existing: func(t *testing.T, ns string) client.Object { return existingChild(t, ns, nil) },
			want:     apply.ErrNotControlled,
			wantMsg:  []string{"ConfigMap NS/child exists and is not claimed by any owner", apply.AdoptAnnotation + "=true"},
		},
		"unclaimed, adopt annotation not true": {
			reason: "only the value true is consent",
			existing: func(t *testing.T, ns string) client.Object {
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					cm.Annotations = map[string]string{apply.AdoptAnnotation: "yes"}
				})
			},
			want: apply.ErrNotControlled,
		},
		"controlled by an object of the target cluster, with the adopt annotation": {
			reason: "a controller of the target cluster owns it: it is not unclaimed",
			existing: func(t *testing.T, ns string) client.Object {
				other := newNamedOwner(t, ns, "helm-release")
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					adopt(cm)
					if err := controllerutil.SetControllerReference(other, cm, env.Scheme); err != nil {
						t.Fatal(err)
					}
				})
			},
			want:    apply.ErrNotControlled,
			wantMsg: []string{"controlled by ConfigMap helm-release"},
		},
		"incomplete claim, with the adopt annotation": {
			reason: "some claim labels without a consistent annotation are nobody's claim, and not unclaimed either",
			existing: func(t *testing.T, ns string) client.Object {
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					adopt(cm)
					cm.Labels = map[string]string{apply.OwnerClusterLabel: "mgmt-a", apply.OwnerNameLabel: "owner"}
				})
			},
			want:    apply.ErrNotControlled,
			wantMsg: []string{"incomplete owner claim", apply.OwnerAnnotation},
			partial: true,
		},
		"claim labels disagreeing with the annotation": {
			reason: "a label edited to our owner's name does not make the object ours",
			existing: func(t *testing.T, ns string) client.Object {
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					cm.Labels = map[string]string{apply.OwnerClusterLabel: "mgmt-a", apply.OwnerKindLabel: "ConfigMap",
						apply.OwnerNamespaceLabel: ns, apply.OwnerNameLabel: "owner"}
					cm.Annotations = map[string]string{apply.OwnerAnnotation: "ConfigMap/" + ns + "/other"}
				})
			},
			want:    apply.ErrNotControlled,
			partial: true,
		},
		"applied by the same field manager before, without a claim": {
			reason: "the operators of two management clusters share a field manager name",
			existing: func(t *testing.T, ns string) client.Object {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(configMapGVK)
				u.SetName("child")
				u.SetNamespace(ns)
				if err := unstructured.SetNestedStringMap(u.Object, map[string]string{"key": "theirs"}, "data"); err != nil {
					t.Fatal(err)
				}
				if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
					client.FieldOwner("identity-operator"), client.ForceOwnership); err != nil {
					t.Fatal(err)
				}
				return readChild(t, ns)
			},
			want:    apply.ErrNotControlled,
			wantMsg: []string{"not claimed by any owner"},
		},
		"being deleted, claimed by the owner": {
			reason: "an apply to an object on its way out is lost with it",
			existing: func(t *testing.T, ns string) client.Object {
				owner := &corev1.ConfigMap{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "owner"}, owner); err != nil {
					t.Fatal(err)
				}
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}, Data: map[string]string{"key": "theirs"}}
				if err := apply.SetOwnership(testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a"), env.Scheme, owner, cm); err != nil {
					t.Fatal(err)
				}
				return env.CreateBeingDeleted(t, cm)
			},
			want: apply.ErrBeingDeleted,
		},
		"being deleted, unclaimed": {
			reason: "an object on its way out is not adopted either",
			existing: func(t *testing.T, ns string) client.Object {
				return env.CreateBeingDeleted(t, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns,
						Annotations: map[string]string{apply.AdoptAnnotation: "true"}},
					Data: map[string]string{"key": "theirs"}})
			},
			want: apply.ErrBeingDeleted,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			before := tc.existing(t, ns)
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}

			err = apply.EnsureObject(ctx, testenv.TargetApplier(c, "identity-operator", "mgmt-a"), env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager)
			if !errors.Is(err, tc.want) {
				t.Fatalf("%s: error = %v, want errors.Is %v", tc.reason, err, tc.want)
			}
			for _, m := range tc.wantMsg {
				if m = strings.ReplaceAll(m, "NS", ns); !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
			if errors.Is(tc.want, apply.ErrNotControlled) {
				var nce *apply.NotControlledError
				if !errors.As(err, &nce) {
					t.Fatalf("error %v is not a *NotControlledError", err)
				}
				if nce.Owner != "ConfigMap "+ns+"/owner" || !nce.Remote || nce.PartialClaim != tc.partial {
					t.Errorf("NotControlledError = %+v, want owner ConfigMap %s/owner, Remote, PartialClaim %v", nce, ns, tc.partial)
				}
				var wantClaim *apply.Claim
				if tc.wantClaim != nil {
					cl := *tc.wantClaim
					cl.Namespace = ns
					wantClaim = &cl
				}
				if diff := cmp.Diff(wantClaim, nce.Claim); diff != "" {
					t.Errorf("NotControlledError.Claim (-want +got):\n%s", diff)
				}
			}
			if w := counter.Writes(); w != 0 {
				t.Errorf("a refused apply sent %d writes", w)
			}
			after := readChild(t, ns)
			if after.ResourceVersion != before.GetResourceVersion() || after.Data["key"] != "theirs" {
				t.Errorf("existing object was changed: rv %s -> %s, data %v", before.GetResourceVersion(), after.ResourceVersion, after.Data)
			}
		})
	}
}

// TestRemoteEnsureObjectAdoptsOnConsent: an unclaimed object annotated for adoption gets
// the claim and the desired content, and no owner reference.
func TestRemoteEnsureObjectAdoptsOnConsent(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	theirs := existingChild(t, ns, func(cm *corev1.ConfigMap) {
		cm.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
	})
	a := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a")
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatalf("annotated unclaimed object not adopted: %v", err)
	}
	now := readChild(t, ns)
	if now.UID != theirs.UID || now.Data["key"] != "value" || len(now.OwnerReferences) != 0 {
		t.Errorf("adopted object: uid %s (was %s), data %v, owner references %v; want the same object, desired data, none",
			now.UID, theirs.UID, now.Data, now.OwnerReferences)
	}
	if !apply.IsControlled(a, owner, now) {
		t.Errorf("adopted object does not carry the owner's claim: %v", claimOf(now))
	}
	// Once adopted, the object is the owner's: the consent may go.
	delete(now.Annotations, apply.AdoptAnnotation)
	if err := env.Client.Update(ctx, now); err != nil {
		t.Fatal(err)
	}
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Errorf("apply after adoption: %v", err)
	}
}

// TestRemoteLongOwnerName: an owner name longer than a label value is shortened in the
// label and kept exact in the annotation; the claim round-trips and selects the child.
func TestRemoteLongOwnerName(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	longName := "identity-" + strings.Repeat("x", 60) + "-owner" // 75 characters
	owner := newNamedOwner(t, ns, longName)
	a := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a")
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	stored := readChild(t, ns)
	label := stored.Labels[apply.OwnerNameLabel]
	if label != apply.ClaimLabelValue(longName) || len(label) != 63 || !strings.HasPrefix(label, longName[:52]+"-") {
		t.Errorf("owner name label = %q (%d characters), want the first 52 characters, '-' and 10 hex digits", label, len(label))
	}
	if problems := validation.IsValidLabelValue(label); len(problems) > 0 {
		t.Errorf("owner name label %q is no valid label value: %v", label, problems)
	}
	if got := stored.Annotations[apply.OwnerAnnotation]; got != "ConfigMap/"+ns+"/"+longName {
		t.Errorf("owner annotation = %q, want the exact owner", got)
	}
	claim, ok := apply.ClaimOf(stored)
	if !ok || claim.Name != longName {
		t.Errorf("ClaimOf = %+v, %v; want the exact long name", claim, ok)
	}
	// The claim holds on the next pass, and selects the child.
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Errorf("second apply for the long-named owner: %v", err)
	}
	list := &corev1.ConfigMapList{}
	sel := apply.ClaimLabels(apply.RemoteOwnership{ManagementCluster: "mgmt-a"}, configMapGVK, owner)
	if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(sel)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "child" {
		t.Errorf("ClaimLabels selected %d objects, want the child only", len(list.Items))
	}
}

func TestClaimOf(t *testing.T) {
	ns := "openstack"
	long := strings.Repeat("n", 70)
	claimed := func(name string) *corev1.ConfigMap {
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child"}}
		if err := apply.SetOwnership(testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a"), env.Scheme, owner, obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	cases := map[string]struct {
		obj  func() *corev1.ConfigMap
		want *apply.Claim
	}{
		"complete": {
			obj:  func() *corev1.ConfigMap { return claimed("owner") },
			want: &apply.Claim{ManagementCluster: "mgmt-a", GroupKind: configMapGVK.GroupKind(), Namespace: ns, Name: "owner"},
		},
		"long owner name": {
			obj:  func() *corev1.ConfigMap { return claimed(long) },
			want: &apply.Claim{ManagementCluster: "mgmt-a", GroupKind: configMapGVK.GroupKind(), Namespace: ns, Name: long},
		},
		"no annotation": {obj: func() *corev1.ConfigMap {
			o := claimed("owner")
			o.Annotations = nil
			return o
		}},
		"malformed annotation": {obj: func() *corev1.ConfigMap {
			o := claimed("owner")
			o.Annotations[apply.OwnerAnnotation] = "ConfigMap/owner"
			return o
		}},
		"annotation names another owner": {obj: func() *corev1.ConfigMap {
			o := claimed("owner")
			o.Annotations[apply.OwnerAnnotation] = "ConfigMap/" + ns + "/other"
			return o
		}},
		"annotation names another kind": {obj: func() *corev1.ConfigMap {
			o := claimed("owner")
			o.Annotations[apply.OwnerAnnotation] = "Secret/" + ns + "/owner"
			return o
		}},
		"hashed name label of another long name": {obj: func() *corev1.ConfigMap {
			o := claimed(long)
			o.Labels[apply.OwnerNameLabel] = apply.ClaimLabelValue(long + "x")
			return o
		}},
		"no labels at all": {obj: func() *corev1.ConfigMap {
			o := claimed("owner")
			o.Labels = nil
			return o
		}},
	}
	for _, k := range []string{apply.OwnerClusterLabel, apply.OwnerKindLabel, apply.OwnerNamespaceLabel, apply.OwnerNameLabel} {
		cases["without "+k] = struct {
			obj  func() *corev1.ConfigMap
			want *apply.Claim
		}{obj: func() *corev1.ConfigMap {
			o := claimed("owner")
			delete(o.Labels, k)
			return o
		}}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := apply.ClaimOf(tc.obj())
			if tc.want == nil {
				if ok {
					t.Errorf("ClaimOf = %+v, true; want no claim", got)
				}
				return
			}
			if !ok || got != *tc.want {
				t.Errorf("ClaimOf = %+v, %v; want %+v, true", got, ok, *tc.want)
			}
		})
	}
}

func TestClaimLabelValue(t *testing.T) {
	cases := map[string]struct {
		in, want string
	}{
		"valid value":      {in: "identity", want: "identity"},
		"empty":            {in: "", want: ""},
		"63 characters":    {in: strings.Repeat("a", 63), want: strings.Repeat("a", 63)},
		"kind with group":  {in: "Dashboard.dashboard.example", want: "Dashboard.dashboard.example"},
		"64 characters":    {in: strings.Repeat("a", 64), want: strings.Repeat("a", 52) + "-"},
		"cut at a hyphen":  {in: strings.Repeat("a", 51) + "-" + strings.Repeat("b", 20), want: strings.Repeat("a", 51) + "-"},
		"colon":            {in: "system:auth", want: "system-auth-"},
		"only bad":         {in: ":::", want: ""},
		"leading hyphen":   {in: "-abc", want: "abc-"},
		"trailing newline": {in: "abc\n", want: "abc-"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := apply.ClaimLabelValue(tc.in)
			if problems := validation.IsValidLabelValue(got); len(problems) > 0 {
				t.Fatalf("ClaimLabelValue(%q) = %q, no valid label value: %v", tc.in, got, problems)
			}
			if got != apply.ClaimLabelValue(tc.in) {
				t.Fatalf("ClaimLabelValue(%q) is not deterministic", tc.in)
			}
			if len(validation.IsValidLabelValue(tc.in)) == 0 {
				if got != tc.want {
					t.Errorf("ClaimLabelValue(%q) = %q, want it unchanged", tc.in, got)
				}
				return
			}
			// A shortened value: the expected prefix, then 10 hex digits of the SHA-256
			// of the whole value.
			sum := sha256.Sum256([]byte(tc.in))
			if want := tc.want + hex.EncodeToString(sum[:])[:10]; got != want {
				t.Errorf("ClaimLabelValue(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
	if apply.ClaimLabelValue(strings.Repeat("a", 64)) == apply.ClaimLabelValue(strings.Repeat("a", 65)) {
		t.Error("two long values with the same prefix shorten to the same label value")
	}
}

// TestSetOwnershipOnTheManagementCluster: through a client without remote ownership
// SetOwnership sets the controller reference and no claim, and OwnershipFields says so.
func TestSetOwnershipOnTheManagementCluster(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	for name, c := range map[string]client.Client{
		"plain client":                 env.Client,
		"Applier without remote owner": apply.NewApplier(env.Client, apply.ApplierOptions{}),
	} {
		t.Run(name, func(t *testing.T) {
			obj := desiredConfigMap(ns)
			if err := apply.SetOwnership(c, env.Scheme, owner, obj); err != nil {
				t.Fatal(err)
			}
			if !metav1.IsControlledBy(obj, owner) || len(claimOf(obj)) != 0 {
				t.Errorf("owner references %v, claim %v; want the owner as controller and no claim", obj.OwnerReferences, claimOf(obj))
			}
			if !apply.IsControlled(c, owner, obj) || apply.Unclaimed(c, obj) {
				t.Error("IsControlled/Unclaimed disagree with the controller reference")
			}
			if got := apply.OwnershipFields(c); !cmp.Equal(got, []string{"metadata.ownerReferences"}) {
				t.Errorf("OwnershipFields = %v", got)
			}
		})
	}
	remote := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a")
	want := []string{"metadata.labels." + apply.OwnerClusterLabel, "metadata.labels." + apply.OwnerKindLabel,
		"metadata.labels." + apply.OwnerNamespaceLabel, "metadata.labels." + apply.OwnerNameLabel,
		"metadata.annotations." + apply.OwnerAnnotation}
	if got := apply.OwnershipFields(remote); !cmp.Equal(got, want) {
		t.Errorf("OwnershipFields on a target cluster = %v, want %v", got, want)
	}
	// On a target cluster a namespaced owner may claim a child elsewhere.
	elsewhere := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "child",
		Labels: map[string]string{"app": "demo"}, Annotations: map[string]string{"note": "kept"}}}
	if err := apply.SetOwnership(remote, env.Scheme, owner, elsewhere); err != nil {
		t.Fatalf("claim in another namespace: %v", err)
	}
	if elsewhere.Labels["app"] != "demo" || elsewhere.Annotations["note"] != "kept" || !apply.IsControlled(remote, owner, elsewhere) {
		t.Errorf("claimed object: labels %v, annotations %v", elsewhere.Labels, elsewhere.Annotations)
	}
	if err := apply.SetOwnership(env.Client, env.Scheme, owner, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "child"}}); !errors.Is(err, apply.ErrInvalidOwner) {
		t.Errorf("owner reference across namespaces: error = %v, want ErrInvalidOwner", err)
	}
	for name, err := range map[string]error{
		"nil scheme": apply.SetOwnership(remote, nil, owner, desiredConfigMap(ns)),
		"nil owner":  apply.SetOwnership(remote, env.Scheme, nil, desiredConfigMap(ns)),
		"nil object": apply.SetOwnership(remote, env.Scheme, owner, (*corev1.ConfigMap)(nil)),
		"unknown owner kind": apply.SetOwnership(remote, env.Scheme,
			&unregistered{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}}, desiredConfigMap(ns)),
	} {
		want := map[string]error{"nil scheme": apply.ErrNilScheme, "nil owner": apply.ErrNilOwner,
			"nil object": apply.ErrNilObject, "unknown owner kind": apply.ErrInvalidOwner}[name]
		if !errors.Is(err, want) {
			t.Errorf("%s: error = %v, want %v", name, err, want)
		}
	}
}

// TestRemoteDeleteControlled: on a target cluster DeleteControlled deletes the owner's
// child, reports and keeps another management cluster's and an unclaimed one, and the
// owner's children are exactly what ClaimLabels selects.
func TestRemoteDeleteControlled(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	ours, theirs := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a"), testenv.TargetApplier(env.Client, "identity-operator", "mgmt-b")
	named := func(name string) *corev1.ConfigMap {
		cm := desiredConfigMap(ns)
		cm.Name = name
		return cm
	}
	for _, name := range []string{"mine-1", "mine-2"} {
		if err := apply.EnsureObject(ctx, ours, env.Scheme, owner, named(name), apply.FieldManager); err != nil {
			t.Fatal(err)
		}
	}
	if err := apply.EnsureObject(ctx, theirs, env.Scheme, owner, named("mgmt-b"), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, named("unclaimed")); err != nil {
		t.Fatal(err)
	}

	list := &corev1.ConfigMapList{}
	sel := apply.ClaimLabels(apply.RemoteOwnership{ManagementCluster: "mgmt-a"}, configMapGVK, owner)
	if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(sel)); err != nil {
		t.Fatal(err)
	}
	var selected []string
	for _, cm := range list.Items {
		selected = append(selected, cm.Name)
	}
	if diff := cmp.Diff([]string{"mine-1", "mine-2"}, selected); diff != "" {
		t.Errorf("ClaimLabels selected (-want +got):\n%s", diff)
	}

	rvs := map[string]string{}
	for _, name := range []string{"mgmt-b", "unclaimed"} {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			t.Fatal(err)
		}
		rvs[name] = cm.ResourceVersion
	}
	for name, wantForeign := range map[string]bool{"mine-1": false, "mgmt-b": true, "unclaimed": true} {
		foreign, err := apply.DeleteControlled(ctx, ours, owner, &corev1.ConfigMap{}, client.ObjectKey{Namespace: ns, Name: name})
		if err != nil || foreign != wantForeign {
			t.Errorf("DeleteControlled(%s) = %v, %v; want foreign=%v, nil", name, foreign, err, wantForeign)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mine-1"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the owner's child was not deleted: %v", err)
	}
	for name, rv := range rvs {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			t.Errorf("%s was deleted: %v", name, err)
		} else if cm.ResourceVersion != rv {
			t.Errorf("%s was written: resourceVersion %s -> %s", name, rv, cm.ResourceVersion)
		}
	}
}

// TestRemoteFaultsNameKindAndKey: a failed read, create, take-over patch or apply on
// the remote path is returned wrapped with the object's kind and key, and the injected
// error stays visible. The patch and the apply fail on the first change after the create.
func TestRemoteFaultsNameKindAndKey(t *testing.T) {
	ctx := context.Background()
	for _, verb := range []faults.Verb{faults.VerbGet, faults.VerbCreate, faults.VerbPatch, faults.VerbApply} {
		t.Run(string(verb), func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			inj := faults.NewInjector()
			a := testenv.TargetApplier(inj.Client(env.Client), "identity-operator", "mgmt-a")
			desired := desiredConfigMap(ns)
			if verb == faults.VerbPatch || verb == faults.VerbApply {
				if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
					t.Fatal(err)
				}
				desired.Data["key"] = "changed"
			}
			inj.Arm(verb, 1, faults.Internal)
			err := apply.EnsureObject(ctx, a, env.Scheme, owner, desired, apply.FieldManager)
			if !inj.Fired() || !errors.Is(err, faults.ErrInjected) || !apierrors.IsInternalError(err) {
				t.Fatalf("error = %v, want the injected 500", err)
			}
			if !strings.Contains(err.Error(), "ConfigMap "+ns+"/child") {
				t.Errorf("error %q does not name the kind and key", err)
			}
		})
	}
}

// TestRemoteFaultMatrix fails each API call of a remote pass in turn (apply the owner's
// child, then remove a child the owner no longer wants and try to remove another
// management cluster's): the claim is written, the other cluster's object is never
// touched, whatever fails.
func TestRemoteFaultMatrix(t *testing.T) {
	ctx := context.Background()
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			stale := desiredConfigMap(ns)
			stale.Name = "stale"
			if err := apply.EnsureObject(ctx, testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a"), env.Scheme, owner, stale, apply.FieldManager); err != nil {
				t.Fatal(err)
			}
			theirs := desiredConfigMap(ns)
			theirs.Name = "theirs"
			if err := apply.EnsureObject(ctx, testenv.TargetApplier(env.Client, "identity-operator", "mgmt-b"), env.Scheme, owner, theirs, apply.FieldManager); err != nil {
				t.Fatal(err)
			}
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					a := testenv.TargetApplier(c, "identity-operator", "mgmt-a")
					if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
						return ctrl.Result{}, err
					}
					for _, name := range []string{"stale", "theirs"} {
						if _, err := apply.DeleteControlled(ctx, a, owner, &corev1.ConfigMap{}, client.ObjectKey{Namespace: ns, Name: name}); err != nil {
							return ctrl.Result{}, err
						}
					}
					return ctrl.Result{}, nil
				},
				Check: func(t *testing.T) {
					cm := &corev1.ConfigMap{}
					if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "theirs"}, cm); err != nil {
						t.Fatalf("another management cluster's object: %v", err)
					}
					if cm.ResourceVersion != theirs.ResourceVersion {
						t.Fatalf("another management cluster's object was written")
					}
				},
				State: func(t *testing.T) any {
					err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stale"}, &corev1.ConfigMap{})
					child := readChild(t, ns)
					claim := claimOf(child)
					claim[apply.OwnerNamespaceLabel] = "NS"
					claim[apply.OwnerAnnotation] = strings.ReplaceAll(claim[apply.OwnerAnnotation], ns, "NS")
					return map[string]any{"stale gone": apierrors.IsNotFound(err), "data": child.Data,
						"claim": claim, "owner references": len(child.OwnerReferences)}
				},
			}
		},
	}.Run(t)
}

// unregistered is a kind no scheme knows.
type unregistered struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func (u *unregistered) DeepCopyObject() runtime.Object {
	c := *u
	u.DeepCopyInto(&c.ObjectMeta)
	return &c
}
