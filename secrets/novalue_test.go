package secrets_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// logSink records every log line, at every verbosity, except client-go's wire dumps:
// at V(8) and above client-go logs request and response bodies through the context's
// logger, and those carry whatever Secret data goes over the wire. They are client-go's
// debugging output, not the package's log lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) context(ctx context.Context) context.Context {
	return log.IntoContext(ctx, funcr.New(func(prefix, args string) {
		if strings.Contains(args, `"msg"="Request Body"`) || strings.Contains(args, `"msg"="Response Body"`) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lines = append(s.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10}))
}

func (s *logSink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// TestNoSecretValueLeaks runs a full Secrets step (store gate, generated credential,
// PushSecret, ExternalSecret wait, synced Secret read) through every outcome, failures
// included, and looks for the credential, raw and base64-encoded, in every log line,
// error text and condition message the package produced. The package emits no events.
func TestNoSecretValueLeaks(t *testing.T) {
	sink := &logSink{}
	ctx := sink.context(context.Background())
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	storeName := clusterName("leak")
	ref := commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: storeName}
	synced := client.ObjectKey{Namespace: ns, Name: "identity-admin"}
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	gs.RestoreFrom = &synced

	var errs []error
	var conds []metav1.Condition
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	gate := func(c client.Client, namespaceScoped bool) bool {
		ok, err := secrets.GateStoreReady(ctx, c, ref, ns, namespaceScoped, &conds, 1, condSecretsReady)
		note(err)
		return ok
	}

	// The store is missing, then not ready, then refused in namespace-scoped mode.
	if gate(env.Client, false) {
		t.Fatal("gate passed on a missing store")
	}
	createClusterStore(t, storeName, false)
	if _, err := simulate.MarkClusterSecretStoreNotReady(ctx, env.Client, storeName, esov1.ReasonValidationFailed); err != nil {
		t.Fatal(err)
	}
	gate(env.Client, false)
	messages := []string{secretsCond(conds).Message}
	gate(env.Client, true)
	messages = append(messages, secretsCond(conds).Message)
	if _, err := simulate.MarkClusterSecretStoreReady(ctx, env.Client, storeName); err != nil {
		t.Fatal(err)
	}
	if !gate(env.Client, false) {
		t.Fatal("gate failed on a ready store")
	}

	// Generate the credential and push it.
	outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs)
	if err != nil || outcome != secrets.SecretGenerated {
		t.Fatalf("generate: %v, %v", outcome, err)
	}
	value, err := secrets.GetSecretValue(ctx, env.Client, gs.Key, "password")
	if err != nil {
		t.Fatal(err)
	}
	note(secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, desiredPushSecret(ns, gs.Key.Name, ref)))

	// Wait for the ExternalSecret, then read the synced copy.
	_, _, err = secrets.WaitForExternalSecret(ctx, env.Client, synced)
	note(err)
	if err := env.Client.Create(ctx, desiredExternalSecret(ns, synced.Name, synced.Name, ref)); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, synced, map[string][]byte{"password": []byte(value)}); err != nil {
		t.Fatal(err)
	}
	if _, ready, err := secrets.WaitForExternalSecret(ctx, env.Client, synced); !ready || err != nil {
		t.Fatalf("ExternalSecret not ready: %v", err)
	}
	if ok, err := secrets.IsSecretReady(ctx, env.Client, synced, "password"); !ok || err != nil {
		t.Fatalf("synced Secret not ready: %v", err)
	}
	got, err := secrets.GetSecretValue(ctx, env.Client, synced, "password")
	if err != nil || got != value {
		t.Fatalf("synced value differs: %v", err)
	}
	_, err = secrets.GetSecretValue(ctx, env.Client, synced, "token")
	note(err)

	// Restore after loss, and the failure paths.
	if err := env.Client.Delete(ctx, secretObject(gs.Key)); err != nil {
		t.Fatal(err)
	}
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretRestored {
		t.Fatalf("restore: %v, %v", outcome, err)
	}
	// Both Secrets lost while the ExternalSecret reports its last sync: pending.
	for _, key := range []client.ObjectKey{gs.Key, synced} {
		if err := env.Client.Delete(ctx, secretObject(key)); err != nil {
			t.Fatal(err)
		}
	}
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretRestorePending {
		t.Fatalf("pending restore: %v, %v", outcome, err)
	}
	messages = append(messages, fmt.Sprintf(secrets.MessageRestorePending, synced))
	denied := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, gs.Key.Name, errors.New("denied"))
	failing := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return denied
		},
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return denied },
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return denied
		},
	})
	gate(failing, false)
	_, err = secrets.EnsureGeneratedSecret(ctx, failing, env.Scheme, owner, gs)
	note(err)
	_, err = secrets.GetSecretValue(ctx, failing, synced, "password")
	note(err)
	note(secrets.EnsurePushSecret(ctx, failing, env.Scheme, owner, desiredPushSecret(ns, gs.Key.Name, ref)))
	configMapFanOut(env.Client, commonv1.ClusterSecretStoreKind)(ctx,
		&esov1.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: storeName}})

	logs := sink.text()
	if !strings.Contains(logs, "generated credential Secret") || !strings.Contains(logs, "secret store not ready") ||
		!strings.Contains(logs, "restored credential Secret") || !strings.Contains(logs, "waiting for an ExternalSecret") {
		t.Fatalf("the pass did not log what it did; captured:\n%s", logs)
	}
	if len(errs) < 5 {
		t.Fatalf("only %d errors collected, the failure paths did not run: %v", len(errs), errs)
	}
	for _, m := range conds {
		messages = append(messages, m.Message)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(value))
	for _, leak := range []string{value, encoded} {
		if strings.Contains(logs, leak) {
			t.Errorf("a log line carries the credential:\n%s", logs)
		}
		for _, err := range errs {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("error %q carries the credential", err)
			}
		}
		for _, m := range messages {
			if strings.Contains(m, leak) {
				t.Errorf("condition message %q carries the credential", m)
			}
		}
	}
}

func secretsCond(conds []metav1.Condition) metav1.Condition {
	for _, c := range conds {
		if c.Type == condSecretsReady {
			return c
		}
	}
	return metav1.Condition{}
}
