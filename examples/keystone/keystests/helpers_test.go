package keystests

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/multicluster"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

const (
	// fieldManager is the operator's field manager in the tests.
	fieldManager = "keystone-operator"
	// operatorImage is the operator image the rotation CronJobs run.
	operatorImage = "registry.example/keystone-operator:v1"
	// rotateSA is the rotation pods' ServiceAccount.
	rotateSA = "keystone-key-rotation"
)

// t0 is the tests' clock at the start of every world.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// kind is one of the two repositories.
type kind struct {
	name    string
	newStep func(keystone.KeyStepOptions) *keystone.KeyRepositoryStep
	// spec returns the Keystone field that configures the repository.
	spec func(*v1alpha1.Keystone) *v1alpha1.KeyRepositorySpec
}

var (
	fernet = kind{name: "fernet", newStep: keystone.NewFernetKeysStep,
		spec: func(k *v1alpha1.Keystone) *v1alpha1.KeyRepositorySpec { return &k.Spec.Fernet }}
	credential = kind{name: "credential", newStep: keystone.NewCredentialKeysStep,
		spec: func(k *v1alpha1.Keystone) *v1alpha1.KeyRepositorySpec { return &k.Spec.Credential }}
	kinds = []kind{fernet, credential}
)

// world is one namespace with a Keystone, one key repository step, the step's Applier
// and a backend. Every condition message, error text and log line of its passes is
// kept, and checked for key material when the test ends.
type world struct {
	t       *testing.T
	ns      string
	kind    kind
	k       *v1alpha1.Keystone
	step    *keystone.KeyRepositoryStep
	applier *apply.Applier
	bao     *backend
	now     time.Time

	mu    sync.Mutex
	texts []string
	seen  map[string]bool // every key the test has seen
}

// newWorld creates the namespace and the Keystone (with mutate applied before the
// create; the API server fills in the defaults).
func newWorld(t *testing.T, kd kind, mutate func(*v1alpha1.Keystone)) *world {
	t.Helper()
	ns := env.Namespace(t)
	k := &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns},
		Spec: v1alpha1.KeystoneSpec{
			Image:     "registry.example/keystone:2025.1",
			Database:  v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
			Bootstrap: v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
		},
	}
	if mutate != nil {
		mutate(k)
	}
	if err := env.Client.Create(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, ns: ns, kind: kd, k: k, bao: newBackend(), now: t0, seen: map[string]bool{}}
	w.step = kd.newStep(keystone.KeyStepOptions{
		FieldManager: fieldManager, OperatorImage: operatorImage, ServiceAccountName: rotateSA,
		Now: func() time.Time { return w.now },
	})
	w.applier = apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: fieldManager})
	t.Cleanup(w.checkNoKeyMaterial)
	return w
}

// secretKey, restoreKey, pushKey and cronKey name the step's children.
func (w *world) secretKey() client.ObjectKey {
	return client.ObjectKey{Namespace: w.ns, Name: w.step.SecretName(w.k)}
}

func (w *world) restoreKey() client.ObjectKey {
	return client.ObjectKey{Namespace: w.ns, Name: w.step.RestoreName(w.k)}
}

func (w *world) pushKey() client.ObjectKey {
	return client.ObjectKey{Namespace: w.ns, Name: w.step.PushSecretName(w.k)}
}

func (w *world) cronKey() client.ObjectKey {
	return client.ObjectKey{Namespace: w.ns, Name: w.step.CronJobName(w.k)}
}

// record keeps a text a pass produced.
func (w *world) record(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// remember keeps the keys of data, so checkNoKeyMaterial looks for them.
func (w *world) remember(data map[string][]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range data {
		w.seen[string(v)] = true
	}
}

// pass runs the step once through the world's Applier.
func (w *world) pass() (ctrl.Result, error) {
	res, _, err := w.passVia(w.applier)
	return res, err
}

// passWrites runs the step once through the world's Applier and returns the writes it
// reported.
func (w *world) passWrites() (ctrl.Result, []apply.Write, error) {
	return w.passVia(w.applier)
}

// passWith runs the step once through a new Applier over c, as the pass of an
// operator whose client is c.
func (w *world) passWith(ctx context.Context, c client.Client) (ctrl.Result, error) {
	res, _, err := w.passCtx(ctx, apply.NewApplier(c, apply.ApplierOptions{FieldManager: fieldManager}))
	return res, err
}

func (w *world) passVia(c client.Client) (ctrl.Result, []apply.Write, error) {
	return w.passCtx(context.Background(), c)
}

// passCtx runs the step with a context that carries the target (c), a writes
// collection and a logger that records every line the operator logs (verbosity 1;
// client-go's own request and response dumps at verbosity 8 are its debugging aid,
// not the operator's log).
func (w *world) passCtx(ctx context.Context, c client.Client) (ctrl.Result, []apply.Write, error) {
	ctx, writes := apply.WithWrites(ctx)
	ctx = logr.NewContext(ctx, funcr.New(func(prefix, args string) { w.record(prefix + " " + args) },
		funcr.Options{Verbosity: 1}))
	ctx = multicluster.WithTarget(ctx, &multicluster.Target{Client: c, APIReader: env.Client})
	res, err := w.step.Reconcile(ctx, w.k)
	if err != nil {
		w.record(err.Error())
	}
	if res.RequeueAfter != 0 && err != nil {
		w.t.Errorf("the step returned a result (%v) together with an error: %v", res, err)
	}
	for _, c := range w.k.Status.Conditions {
		w.record(c.Message)
	}
	return res, writes.Changed(), err
}

// condition returns the step's condition on the Keystone, failing when it is missing.
func (w *world) condition() metav1.Condition {
	w.t.Helper()
	c := meta.FindStatusCondition(w.k.Status.Conditions, w.step.Condition())
	if c == nil {
		w.t.Fatalf("no %s condition; conditions: %+v", w.step.Condition(), w.k.Status.Conditions)
	}
	if c.ObservedGeneration != w.k.Generation {
		w.t.Errorf("%s has observedGeneration %d, want %d", c.Type, c.ObservedGeneration, w.k.Generation)
	}
	return *c
}

// expectCondition asserts the step's condition's status and reason and that its
// message contains every one of parts.
func (w *world) expectCondition(status metav1.ConditionStatus, reason string, parts ...string) metav1.Condition {
	w.t.Helper()
	c := w.condition()
	if c.Status != status || c.Reason != reason {
		w.t.Fatalf("%s = %s/%s (%s), want %s/%s", c.Type, c.Status, c.Reason, c.Message, status, reason)
	}
	for _, p := range parts {
		if !strings.Contains(c.Message, p) {
			w.t.Errorf("%s message %q does not contain %q", c.Type, c.Message, p)
		}
	}
	return c
}

// secret reads the repository Secret; found is false when it does not exist.
func (w *world) secret() (s *corev1.Secret, found bool) {
	w.t.Helper()
	s = &corev1.Secret{}
	err := env.Client.Get(context.Background(), w.secretKey(), s)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		w.t.Fatal(err)
	}
	w.remember(s.Data)
	return s, true
}

// repo reads the repository from the Secret, which must exist and be valid.
func (w *world) repo() keys.Repository {
	w.t.Helper()
	s, found := w.secret()
	if !found {
		w.t.Fatalf("Secret %s does not exist", w.secretKey())
	}
	repo, err := keys.FromSecretData(s.Data)
	if err != nil {
		w.t.Fatalf("Secret %s: %v", w.secretKey(), err)
	}
	return repo
}

// logged reports whether a pass logged a line containing text.
func (w *world) logged(text string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.ContainsFunc(w.texts, func(s string) bool { return strings.Contains(s, text) })
}

// expectAbsent asserts that obj's kind has no object at key.
func expectAbsent(t *testing.T, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), key, obj); !apierrors.IsNotFound(err) {
		t.Errorf("%T %s exists (get: %v), want none", obj, key, err)
	}
}

// converge runs the first install: a pass that creates the restore ExternalSecret and
// waits, ESO's answer that the backend holds nothing, a pass that generates the
// repository, then ESO pushing and syncing it back.
func (w *world) converge() keys.Repository {
	w.t.Helper()
	if res, err := w.pass(); err != nil || res.RequeueAfter == 0 {
		w.t.Fatalf("first pass = %v, %v; want a requeue while the restore is pending", res, err)
	}
	w.bao.sync(w.t, w.restoreKey())
	if res, err := w.pass(); err != nil || !res.IsZero() {
		w.t.Fatalf("second pass = %v, %v; want done", res, err)
	}
	w.eso()
	return w.repo()
}

// eso runs External Secrets Operator once over the world: the PushSecret, then the
// restore ExternalSecret.
func (w *world) eso() {
	w.t.Helper()
	w.bao.push(w.t, w.pushKey())
	w.bao.sync(w.t, w.restoreKey())
}

// checkNoKeyMaterial fails the test when a condition message, error text or log line
// of a pass contains a key (or its first 16 characters) the test has seen: in the
// Secret, the restore copy or the backend.
func (w *world) checkNoKeyMaterial() {
	ctx := context.Background()
	for _, key := range []client.ObjectKey{w.secretKey(), w.restoreKey()} {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, key, s); err == nil {
			w.remember(s.Data)
		}
	}
	for _, v := range w.bao.all() {
		for _, key := range v {
			w.remember(map[string][]byte{"": []byte(key)})
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for key := range w.seen {
		if len(key) < 16 {
			continue
		}
		for _, text := range w.texts {
			if strings.Contains(text, key[:16]) {
				w.t.Errorf("key material in %q", text)
			}
		}
	}
}

// backend is the kit's simulate.SecretBackend over env.Client, which stands in for
// OpenBao behind External Secrets Operator v0.20 (envtest runs no ESO): the key
// repositories are pushed as whole Secrets (property maps at a remote key) and
// restored with dataFrom extract. A failed call fails the test.
type backend struct{ *simulate.SecretBackend }

func newBackend() *backend { return &backend{simulate.NewSecretBackend(env.Client)} }

// all returns every provider secret the backend holds.
func (b *backend) all() []map[string]string { return slices.Collect(maps.Values(b.Values())) }

// push runs ESO's PushSecret reconcile for the PushSecret at key
// (simulate.SecretBackend.Push), failing the test when the PushSecret pushes a single
// key: the key repositories push whole Secrets.
func (b *backend) push(t testing.TB, key client.ObjectKey) {
	t.Helper()
	ctx := context.Background()
	ps := &esov1alpha1.PushSecret{}
	err := env.Client.Get(ctx, key, ps)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("backend: get PushSecret %s: %v", key, err)
	}
	for _, d := range ps.Spec.Data {
		if d.Match.SecretKey != "" {
			t.Fatalf("backend: PushSecret %s pushes the single key %q; the key repositories push whole Secrets", key, d.Match.SecretKey)
		}
	}
	if err := b.Push(ctx, key); err != nil {
		t.Fatal(err)
	}
}

// sync runs ESO's ExternalSecret reconcile for the ExternalSecret at key
// (simulate.SecretBackend.Sync): a provider secret that does not exist fails the sync
// under deletionPolicy Retain (the default) and, under Delete with no data left,
// deletes the target with Ready=True SecretDeleted.
func (b *backend) sync(t testing.TB, key client.ObjectKey) {
	t.Helper()
	if err := b.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
}

// setESStatus writes the Ready condition of the ExternalSecret at key as ESO does, with
// syncedResourceVersion "<generation>-<hash>" where generation is the object's own
// plus genOffset (a negative offset makes the status older than the object), and
// refreshTime at refreshed.
func setESStatus(t testing.TB, key client.ObjectKey, status corev1.ConditionStatus, reason string, genOffset int64, refreshed time.Time) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		es := &esov1.ExternalSecret{}
		if err := env.Client.Get(context.Background(), key, es); err != nil {
			return err
		}
		es.Status.Conditions = []esov1.ExternalSecretStatusCondition{{
			Type: esov1.ExternalSecretReady, Status: status, Reason: reason,
			Message: "set by the test", LastTransitionTime: metav1.Now(),
		}}
		if status == corev1.ConditionTrue {
			es.Status.RefreshTime = metav1.NewTime(refreshed)
			es.Status.SyncedResourceVersion = fmt.Sprintf("%d-%s", es.Generation+genOffset,
				"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4")
		}
		return env.Client.Status().Update(context.Background(), es)
	})
	if err != nil {
		t.Fatalf("set ExternalSecret %s status: %v", key, err)
	}
}

// newRepository returns a fresh repository rotated n times.
func newRepository(t testing.TB, n, maxActiveKeys int) keys.Repository {
	t.Helper()
	repo, err := keys.Setup(nil)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if repo, err = repo.Rotate(nil, maxActiveKeys); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// sameData reports whether two Secret data maps are equal.
func sameData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}
