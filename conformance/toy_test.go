package conformance_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	"github.com/c5c3/reconciler-sdk/shard"
)

// toyGV is the group and version of the Toy CRD in testdata/crd.
var toyGV = schema.GroupVersion{Group: "conformance.reconciler-sdk.c5c3.io", Version: "v1alpha1"}

// Toy is the CR of the package's toy operator.
type Toy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ToySpec   `json:"spec,omitempty"`
	Status            ToyStatus `json:"status,omitempty"`
}

// ToySpec is what the toy renders into its ConfigMap.
type ToySpec struct {
	Message  string `json:"message,omitempty"`
	Replicas *int32 `json:"replicas,omitempty"`
}

// ToyStatus is the toy's status.
type ToyStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (t *Toy) DeepCopyObject() runtime.Object {
	c := *t
	t.DeepCopyInto(&c.ObjectMeta)
	if t.Spec.Replicas != nil {
		c.Spec.Replicas = new(*t.Spec.Replicas)
	}
	c.Status.Conditions = slices.Clone(t.Status.Conditions)
	return &c
}

// Conditions implements reconcile.Object.
func (t *Toy) Conditions() *[]metav1.Condition { return &t.Status.Conditions }

// ToyList is a list of Toys.
type ToyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Toy `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *ToyList) DeepCopyObject() runtime.Object {
	c := *l
	l.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Toy, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Toy)
	}
	return &c
}

func addToyToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(toyGV, &Toy{}, &ToyList{})
	metav1.AddToGroupVersion(s, toyGV)
	return nil
}

// The toy's names.
const (
	toyFieldManager = "toy-operator"
	toyFinalizer    = "conformance.reconciler-sdk.c5c3.io/toy"
	toyNameLabel    = "toy.example/name"
	// condCredentials is True once the credentials Secret exists; condConfig once the
	// ConfigMap is applied.
	condCredentials = "CredentialsReady"
	condConfig      = "ConfigReady"
	// toyPassword is the credentials Secret's value MakeReady writes.
	toyPassword = "toy-password-0123456789"
	// toyTokenKey is the key of the token the toy generates into <name>-token.
	toyTokenKey = "token"
)

// mode breaks the toy operator in one way; the zero mode keeps every promise.
type mode string

// The ways the toy can be broken, each against one check.
const (
	modeNeverReady      mode = "never-ready"       // Convergence
	modeStalled         mode = "stalled"           // Convergence: Ready True, and Stalled True as well
	modeWriteEveryPass  mode = "write-every-pass"  // Quiescence
	modeNoOwner         mode = "no-owner"          // Ownership, Deletion
	modeOtherNamespace  mode = "other-namespace"   // Ownership
	modeNoGeneration    mode = "no-generation"     // Conditions
	modeBadReason       mode = "bad-reason"        // Conditions
	modeReadyMismatch   mode = "ready-mismatch"    // Conditions
	modePassCounter     mode = "pass-counter"      // Conditions (flapping)
	modeResultWithError mode = "result-with-error" // Errors
	modeSwallowError    mode = "swallow-error"
	modeDeleteOnError   mode = "delete-on-error"
	modeCreateOnly      mode = "create-only"    // Drift
	modeSilentToken     mode = "silent-token"   // Drift: a token minted anew without a word
	modeRewriteToken    mode = "rewrite-token"  // Drift: a write-once token rewritten over a label
	modeKeepFinalizer   mode = "keep-finalizer" // Deletion
	modeLeakSecret      mode = "leak-secret"    // Secrets: in an event
	modeLogSecretV7     mode = "log-secret-v7"  // Secrets: in a log line at V(7)
	modeInstanceName    mode = "instance-name"  // TwoReplicas
	modeUnsharded       mode = "unsharded"      // Sharded: ignores RunOptions.Sharded
	modeNoWrap          mode = "no-wrap"        // every check: ErrStart
)

// toyReconciler is the toy operator: it waits for the Secret <name>-credentials,
// generates a token into the Secret <name>-token once (secrets.EnsureGeneratedSecret),
// applies the ConfigMap <name>-config with spec.message and the Secret <name>-login with
// the password from the credentials (server-side apply: the request body is JSON, with
// the data base64-encoded), with a finalizer it removes on deletion. It writes through an apply.Applier over the manager's cache.
type toyReconciler struct {
	c        client.Client // the Applier
	raw      client.Client // the manager's client, for the broken writes
	scheme   *runtime.Scheme
	recorder events.EventRecorder
	mode     mode
	instance string
	passes   atomic.Int64
}

// Reconcile runs one pass.
func (r *toyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	toy := &Toy{}
	if err := r.c.Get(ctx, req.NamespacedName, toy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if toy.DeletionTimestamp != nil {
		if r.mode == modeKeepFinalizer {
			return ctrl.Result{}, nil
		}
		_, err := reconcile.RemoveFinalizer(ctx, r.c, toy, toyFinalizer)
		return ctrl.Result{}, err
	}
	if _, err := reconcile.AddFinalizer(ctx, r.c, toy, toyFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	before := toy.DeepCopyObject().(*Toy)
	res, err := r.steps(ctx, toy)
	toy.Status.ObservedGeneration = toy.Generation
	reconcile.AggregateReady(toy, reconcile.ConditionReady, []string{condCredentials, condConfig})
	if r.mode == modeNoGeneration && reconcile.IsTrue(toy, condCredentials) &&
		meta.IsStatusConditionTrue(toy.Status.Conditions, condConfig) {
		reconcile.MarkTrue(toy, reconcile.ConditionReady, reconcile.ReasonAllReady, "") // overlooks the stale ConfigReady
	}
	if r.mode == modeReadyMismatch {
		reconcile.MarkFalse(toy, "Audited", "AuditPending", "no audit has run")
	}
	if r.mode == modeStalled {
		reconcile.MarkTrue(toy, "Stalled", "QuotaExhausted", "gave up: the quota is exhausted")
	}
	if !equality.Semantic.DeepEqual(before.Status, toy.Status) {
		if serr := r.c.Status().Update(ctx, toy); serr != nil {
			return ctrl.Result{}, errors.Join(err, serr)
		}
	}
	if err != nil {
		if r.mode == modeResultWithError {
			return ctrl.Result{RequeueAfter: time.Second}, err
		}
		return ctrl.Result{}, err
	}
	return res, nil
}

// steps waits for the credentials, then applies the ConfigMap.
func (r *toyReconciler) steps(ctx context.Context, toy *Toy) (ctrl.Result, error) {
	secret := &corev1.Secret{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: toy.Namespace, Name: toy.Name + "-credentials"}, secret); err != nil {
		if !apierrors.IsNotFound(err) {
			reconcile.MarkFalse(toy, condCredentials, "ReadFailed", err.Error())
			return ctrl.Result{}, err
		}
		reconcile.MarkFalse(toy, condCredentials, "SecretMissing", "waiting for Secret "+toy.Name+"-credentials")
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	switch r.mode {
	case modeLeakSecret:
		r.recorder.Eventf(toy, nil, corev1.EventTypeNormal, "CredentialsFound", "Reconcile", "logging in with %s", secret.Data["password"])
	case modeLogSecretV7:
		log.FromContext(ctx).V(7).Info("logging in", "password", string(secret.Data["password"]))
	}
	if err := r.ensureToken(ctx, toy); err != nil {
		reconcile.MarkFalse(toy, condCredentials, "TokenFailed", err.Error())
		return ctrl.Result{}, err
	}
	reconcile.MarkTrue(toy, condCredentials, "SecretFound", "Secret "+secret.Name+" found, token generated")

	if err := r.applyConfig(ctx, toy, secret.Data["password"]); err != nil {
		if r.mode == modeSwallowError {
			return ctrl.Result{}, nil // "it will work next time": the failure dropped
		}
		reconcile.MarkFalse(toy, condConfig, "ApplyFailed", err.Error())
		return ctrl.Result{}, err
	}
	pass := r.passes.Add(1)
	switch r.mode {
	case modeNeverReady:
		reconcile.MarkFalse(toy, condConfig, "Waiting", "waiting for something that never comes")
	case modeBadReason:
		reconcile.MarkTrue(toy, condConfig, "Applied", "ConfigMap applied")
		meta.FindStatusCondition(toy.Status.Conditions, condConfig).Reason = "config applied"
	case modeNoGeneration:
		reconcile.MarkTrue(toy, condConfig, "Applied", "ConfigMap applied")
		meta.FindStatusCondition(toy.Status.Conditions, condConfig).ObservedGeneration = 0
	case modePassCounter:
		reconcile.MarkTrue(toy, condConfig, "Applied", fmt.Sprintf("applied on pass %d", pass))
	case modeInstanceName:
		reconcile.MarkTrue(toy, condConfig, "Applied", "applied by "+r.instance)
	default:
		reconcile.MarkTrue(toy, condConfig, "Applied", "ConfigMap applied")
	}
	return ctrl.Result{}, nil
}

// ensureToken generates the token Secret once, the way the mode says.
func (r *toyReconciler) ensureToken(ctx context.Context, toy *Toy) error {
	key := client.ObjectKey{Namespace: toy.Namespace, Name: toy.Name + "-token"}
	labels := map[string]string{toyNameLabel: toy.Name}
	switch r.mode {
	case modeSilentToken: // mints a token whenever the Secret is missing, and tells no one
		err := r.c.Get(ctx, key, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			return err
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: labels},
			Data: map[string][]byte{toyTokenKey: []byte(rand.Text())}}
		if err := controllerutil.SetControllerReference(toy, s, r.scheme); err != nil {
			return err
		}
		return r.c.Create(ctx, s)
	case modeRewriteToken: // treats the token like any child: a drifted label gets a new one
		s := &corev1.Secret{}
		if err := r.c.Get(ctx, key, s); err == nil && s.Labels[toyNameLabel] != toy.Name {
			base := s.DeepCopy()
			s.Labels[toyNameLabel] = toy.Name
			s.Data[toyTokenKey] = []byte(rand.Text())
			return r.c.Patch(ctx, s, client.MergeFrom(base))
		}
	}
	gs := secrets.DefaultGeneratedSecret(key, toyTokenKey)
	gs.Labels = labels
	_, err := secrets.EnsureGeneratedSecret(ctx, r.c, r.scheme, toy, gs)
	return err
}

// isToyToken declares the toy's token Secret write-once (Options.WriteOnce).
func isToyToken(obj client.Object) bool {
	return obj.GetObjectKind().GroupVersionKind().Kind == "Secret" && strings.HasSuffix(obj.GetName(), "-token")
}

// applyConfig writes the ConfigMap, the way the mode says, and then the login Secret.
func (r *toyReconciler) applyConfig(ctx context.Context, toy *Toy, password []byte) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: toy.Name + "-config", Namespace: toy.Namespace,
			Labels: map[string]string{toyNameLabel: toy.Name}},
		Data: map[string]string{"message": toy.Spec.Message},
	}
	switch r.mode {
	case modeWriteEveryPass:
		cm.Annotations = map[string]string{"toy.example/written-at": time.Now().Format(time.RFC3339Nano)}
	case modeNoOwner:
		cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		return client.IgnoreAlreadyExists(r.raw.Create(ctx, cm, client.FieldOwner(toyFieldManager)))
	case modeCreateOnly:
		err := r.c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			return err
		}
		if err := controllerutil.SetControllerReference(toy, cm, r.scheme); err != nil {
			return err
		}
		return r.raw.Create(ctx, cm, client.FieldOwner(toyFieldManager))
	case modeOtherNamespace:
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "toy-" + toy.Namespace + "-" + toy.Name, Namespace: "default"},
			Data: map[string]string{"message": toy.Spec.Message}}
		if err := r.raw.Create(ctx, other, client.FieldOwner(toyFieldManager)); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	err := apply.EnsureObject(ctx, r.c, r.scheme, toy, cm, toyFieldManager)
	if err == nil {
		login := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: toy.Name + "-login", Namespace: toy.Namespace, Labels: map[string]string{toyNameLabel: toy.Name}},
			Data:       map[string][]byte{"login": append([]byte("toy:"), password...)},
		}
		err = apply.EnsureObject(ctx, r.c, r.scheme, toy, login, toyFieldManager)
	}
	if err != nil && r.mode == modeDeleteOnError {
		// "Start over": the broken recovery this mode stands for.
		_ = r.raw.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace}})
	}
	return err
}

// startToy returns the Start of a toy operator broken in mode m.
func startToy(m mode) func(ctx context.Context, cfg *rest.Config, run conformance.RunOptions) error {
	return func(ctx context.Context, cfg *rest.Config, run conformance.RunOptions) error {
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{
			Scheme:                 env.Scheme,
			Logger:                 run.Logger,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{run.Namespace: {}}},
			Controller:             config.Controller{SkipNameValidation: new(true)},
		})
		if err != nil {
			return err
		}
		r := &toyReconciler{
			c:        apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: toyFieldManager}),
			raw:      mgr.GetClient(),
			scheme:   mgr.GetScheme(),
			recorder: mgr.GetEventRecorder(toyFieldManager),
			mode:     m,
			instance: run.Name,
		}
		var rec crreconcile.Reconciler = r
		if m != modeNoWrap {
			rec = run.Wrap(r)
		}
		b := ctrl.NewControllerManagedBy(mgr).Named(run.Name).For(&Toy{}).Owns(&corev1.ConfigMap{})
		if run.Sharded && m != modeUnsharded {
			// A plain controller-runtime operator joins a shard ring in three calls: the
			// member runs in the manager, gates the reconciler, and requeues what it gains.
			member, err := toyMember(cfg, run)
			if err != nil {
				return err
			}
			if err := mgr.Add(manager.RunnableFunc(member.Run)); err != nil {
				return err
			}
			rec = shard.Gate(member, mgr.GetClient(), func() *Toy { return &Toy{} }, rec)
			b = b.WatchesRawSource(shard.Requeue(member, mgr.GetClient(), func() client.ObjectList { return &ToyList{} }))
		}
		if err := b.Complete(rec); err != nil {
			return err
		}
		return mgr.Start(ctx)
	}
}

// toyMember is the shard member of the toy instance run describes.
func toyMember(cfg *rest.Config, run conformance.RunOptions) (*shard.Member, error) {
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	return shard.NewMember(c, shard.Options{Namespace: run.Namespace, Ring: "toy", Identity: run.Name,
		LeaseDuration: conformance.ShardLeaseDuration, RenewPeriod: conformance.ShardLeaseDuration / 8})
}

// makeToyReady plays the credentials' provider: it creates the Secret the toy waits for.
func makeToyReady(ctx context.Context, c client.Client, cr client.Object) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: cr.GetName() + "-credentials", Namespace: cr.GetNamespace()},
		Data:       map[string][]byte{"password": []byte(toyPassword)},
	}
	return client.IgnoreAlreadyExists(c.Create(ctx, s))
}

// newToy returns a valid Toy.
func newToy(name string) *Toy {
	return &Toy{
		TypeMeta:   metav1.TypeMeta{APIVersion: toyGV.String(), Kind: "Toy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       ToySpec{Message: "hello", Replicas: new(int32(1))},
	}
}

// toyOptions are the suite's options for the toy broken in mode m.
func toyOptions(m mode) conformance.Options {
	bad := newToy("too-many")
	bad.Spec.Replicas = new(int32(9))
	return conformance.Options{
		Env:              env,
		FieldManager:     toyFieldManager,
		Start:            startToy(m),
		Samples:          []client.Object{newToy("first"), newToy("second")},
		Invalid:          []conformance.InvalidSample{{Object: bad, Field: "spec.replicas"}},
		MakeReady:        makeToyReady,
		WriteOnce:        isToyToken,
		SubConditions:    []string{condCredentials, condConfig},
		ClusterRolePaths: []string{"testdata/rbac/role.yaml"},
		ExpectNoRequests: true,
		MaxPasses:        20,
		Timeout:          30 * time.Second,
	}
}
