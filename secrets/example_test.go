package secrets_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

func ExampleEffectiveStoreRef() {
	// A CR without spec.secretStoreRef uses the shared OpenBao cluster store.
	fmt.Println(secrets.EffectiveStoreRef(nil))
	// A CR that selects a SecretStore in its own namespace.
	tenant := secrets.EffectiveStoreRef(&commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"})
	fmt.Println(tenant)
	fmt.Println(secrets.ESOSecretStoreRef(tenant), secrets.PushSecretStoreRefs(tenant))
	// Output:
	// {ClusterSecretStore openbao-cluster-store}
	// {SecretStore tenant-bao}
	// {tenant-bao SecretStore} [{tenant-bao SecretStore}]
}

// ExampleGateStoreReady shows the Secrets step of a reconciler: gate on the store the
// CR selects, then on the ExternalSecret, then on the synced Secret's keys.
func ExampleGateStoreReady() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	// desiredExternalSecret (helpers_test.go) builds an ExternalSecret that syncs a Secret from ref's store.
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	store := &esov1.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-bao", Namespace: ns.Name},
		Spec:       esov1.SecretStoreSpec{Provider: openBaoProvider()},
	}
	if err := c.Create(ctx, store); err != nil {
		panic(err)
	}
	ref := secrets.EffectiveStoreRef(&commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"})
	key := client.ObjectKey{Namespace: ns.Name, Name: "app-session-key"}
	var conds []metav1.Condition

	step := func() string {
		ok, err := secrets.GateStoreReady(ctx, c, ref, ns.Name, false, &conds, 1, "SecretsReady")
		if err != nil {
			return err.Error()
		}
		if !ok {
			return "requeue: " + meta.FindStatusCondition(conds, "SecretsReady").Message
		}
		exists, synced, err := secrets.WaitForExternalSecret(ctx, c, key)
		switch {
		case err != nil:
			return err.Error()
		case !exists:
			return "requeue: ExternalSecret not found yet"
		case !synced:
			return "requeue: waiting for ESO to sync"
		}
		if ok, err := secrets.IsSecretReady(ctx, c, key, "SECRET_KEY"); err != nil || !ok {
			return "requeue: waiting for the SECRET_KEY key"
		}
		return "SecretsReady"
	}

	fmt.Println(step())
	if _, err := simulate.MarkSecretStoreReady(ctx, c, client.ObjectKeyFromObject(store)); err != nil {
		panic(err)
	}
	fmt.Println(step())
	if err := c.Create(ctx, desiredExternalSecret(ns.Name, key.Name, key.Name, ref)); err != nil {
		panic(err)
	}
	fmt.Println(step())
	// ESO syncs the key from OpenBao (simulated here).
	if _, err := simulate.MarkExternalSecretSynced(ctx, c, key, map[string][]byte{"SECRET_KEY": []byte("from-openbao")}); err != nil {
		panic(err)
	}
	fmt.Println(step())
	// Output:
	// requeue: SecretStore "tenant-bao" is not ready; upstream secret backend unreachable
	// requeue: ExternalSecret not found yet
	// requeue: waiting for ESO to sync
	// SecretsReady
}

// ExampleEnsureGeneratedSecret creates a database password once; every later pass,
// in this process or after a restart, keeps it.
func ExampleEnsureGeneratedSecret() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns.Name, Name: "app-db-password"}, "password")

	for range 3 {
		outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, owner, gs)
		fmt.Println(outcome, err)
	}
	password, err := secrets.GetSecretValue(ctx, c, gs.Key, "password")
	fmt.Println(len(password), err)
	// Output:
	// Generated <nil>
	// Kept <nil>
	// Kept <nil>
	// 32 <nil>
}

// ExampleEnsureGeneratedSecret_restore is a Secrets step whose credential can be
// restored from the backend: while the ExternalSecret that reads the backend has not
// answered, no credential is generated; once ESO reports that the backend does not
// hold one (a first install), it is generated and pushed without replacing anything.
func ExampleEnsureGeneratedSecret_restore() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	// desiredExternalSecret (helpers_test.go) builds an ExternalSecret that syncs a Secret from ref's store.
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	// The ExternalSecret that brings the credential back from the backend. With
	// deletionPolicy Merge (or Delete) ESO reports a key the backend lacks as a
	// completed sync, so the first install needs no manual step.
	synced := client.ObjectKey{Namespace: ns.Name, Name: "app-admin"}
	es := desiredExternalSecret(ns.Name, synced.Name, synced.Name, secrets.EffectiveStoreRef(nil))
	es.Spec.Target.DeletionPolicy = esov1.DeletionPolicyMerge
	if err := c.Create(ctx, es); err != nil {
		panic(err)
	}
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns.Name, Name: "app-admin-source"}, "password")
	gs.RestoreFrom = &synced

	step := func() string {
		outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, owner, gs)
		if err != nil {
			return err.Error()
		}
		if !outcome.Ready() {
			return fmt.Sprintf("%s: requeue after %s", secrets.ReasonRestorePending, secrets.PollInterval)
		}
		ps, err := secrets.GeneratedPushSecret(gs, secrets.GeneratedPush{RemoteKey: "app/admin", Property: "password"})
		if err != nil {
			return err.Error()
		}
		if err := secrets.EnsurePushSecret(ctx, c, env.Scheme, owner, ps); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%s, pushed with updatePolicy %s", outcome, ps.Spec.UpdatePolicy)
	}

	fmt.Println(step())
	// ESO finds nothing in the backend (simulated): Ready=True, target without the key.
	if _, err := simulate.MarkExternalSecretSynced(ctx, c, synced, map[string][]byte{}); err != nil {
		panic(err)
	}
	fmt.Println(step())
	fmt.Println(step())
	// Output:
	// RestorePending: requeue after 15s
	// Generated, pushed with updatePolicy IfNotExists
	// Kept, pushed with updatePolicy IfNotExists
}

// ExampleStoreRefFanOut builds the map function of a SecretStore watch for a CR kind
// (ConfigMaps stand in for it here) and maps one store event.
func ExampleStoreRefFanOut() {
	cr := func(ns, name, store string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{annStoreKind: "SecretStore", annStoreName: store}}}
	}
	c := fake.NewClientBuilder().WithObjects(
		cr("tenant-a", "web", "tenant-bao"),
		cr("tenant-a", "identity", "other-bao"),
		cr("tenant-b", "web", "tenant-bao"),
	).Build()

	mapper := secrets.StoreRefFanOut(
		func() client.ObjectList { return &corev1.ConfigMapList{} },
		configMapStoreRef, // func(*corev1.ConfigMap) *commonv1.SecretStoreRefSpec
	)
	mapFunc := mapper(c, commonv1.SecretStoreKind) // pass to handler.EnqueueRequestsFromMapFunc
	changed := &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "tenant-bao"}}
	fmt.Println(mapFunc(context.Background(), changed))
	// Output:
	// [tenant-a/web]
}

// ExampleConfirmPush backs a Secret up before using it: every pass applies the
// PushSecret stamped with the Secret's version, and goes ahead only once External
// Secrets Operator has confirmed a push of that version.
func ExampleConfirmPush() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	// desiredPushSecret (helpers_test.go) builds a PushSecret of the named Secret.
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-db", Namespace: ns.Name},
		Data: map[string][]byte{"password": []byte("Staged0Password0Not0Yet0Backed0Up")}}
	if err := c.Create(ctx, source); err != nil {
		panic(err)
	}

	step := func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(source), source); err != nil {
			return err.Error()
		}
		ps := desiredPushSecret(ns.Name, source.Name, secrets.EffectiveStoreRef(nil))
		got, err := secrets.ConfirmPush(ctx, c, env.Scheme, owner, ps, source)
		switch {
		case err != nil:
			return err.Error()
		case !got.Confirmed:
			return fmt.Sprintf("requeue after %s: PushSecret %s", secrets.PollInterval, got.Pending)
		}
		return "backed up: use the password"
	}

	fmt.Println(step())
	fmt.Println(step())
	// ESO pushes the Secret to the backend (simulated).
	if _, err := simulate.MarkPushSecretSynced(ctx, c, client.ObjectKey{Namespace: ns.Name, Name: source.Name}); err != nil {
		panic(err)
	}
	fmt.Println(step())
	// Output:
	// requeue after 15s: PushSecret has just been asked to push the Secret's current version
	// requeue after 15s: PushSecret has not pushed yet
	// backed up: use the password
}

// ExampleSync is the Secrets step of a CR in one call: the store gate, the CR's
// ExternalSecret, the wait for ESO and the read. A reconciler returns
// reconcile.Settle(cr, got.Outcome, err) and hands got.Digest to its pod template.
func ExampleSync() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	store := &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Name: "tenant-bao", Namespace: ns.Name},
		Spec: esov1.SecretStoreSpec{Provider: openBaoProvider()}}
	if err := c.Create(ctx, store); err != nil {
		panic(err)
	}
	if _, err := simulate.MarkSecretStoreReady(ctx, c, client.ObjectKeyFromObject(store)); err != nil {
		panic(err)
	}
	backend := simulate.NewSecretBackend(c) // plays OpenBao behind ESO
	backend.Set("app/session", map[string][]byte{"key": []byte("held-by-the-backend")})

	params := secrets.SyncParams{
		ConditionType: "SecretsReady",
		StoreRef:      &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
		Name:          "app-session",
		Data: []esov1.ExternalSecretData{{SecretKey: "session-key",
			RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "app/session", Property: "key"}}},
	}
	step := func() string {
		got, err := secrets.Sync(ctx, c, env.Scheme, owner, params)
		switch {
		case err != nil:
			return err.Error()
		case !got.Continue():
			return fmt.Sprintf("%s: requeue after %s", got.Condition.Reason, got.Result.RequeueAfter)
		}
		return fmt.Sprintf("%s: %d value, digest of %d hex digits", got.Condition.Reason, len(got.Values), len(got.Digest))
	}

	fmt.Println(step())
	// ESO syncs the ExternalSecret from the backend (simulated).
	if err := backend.Sync(ctx, client.ObjectKey{Namespace: ns.Name, Name: "app-session"}); err != nil {
		panic(err)
	}
	fmt.Println(step())
	// Output:
	// WaitingForSecret: requeue after 15s
	// SecretsAvailable: 1 value, digest of 16 hex digits
}
