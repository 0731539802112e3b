package database_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// appGV is the group and version of the App CRD in testdata/crd.
var appGV = schema.GroupVersion{Group: "dbtest.reconciler-sdk.c5c3.io", Version: "v1alpha1"}

// App is the custom resource of the conformance test's operator: it gets a database.
type App struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            AppStatus `json:"status,omitempty"`
}

// AppStatus is the App's status.
type AppStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *App) DeepCopyObject() runtime.Object {
	c := *a
	a.DeepCopyInto(&c.ObjectMeta)
	c.Status.Conditions = slices.Clone(a.Status.Conditions)
	return &c
}

// Conditions implements reconcile.Object.
func (a *App) Conditions() *[]metav1.Condition { return &a.Status.Conditions }

// AppList is a list of Apps.
type AppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []App `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *AppList) DeepCopyObject() runtime.Object {
	c := *l
	l.DeepCopyInto(&c.ListMeta)
	c.Items = make([]App, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*App)
	}
	return &c
}

func addAppToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(appGV, &App{}, &AppList{})
	metav1.AddToGroupVersion(s, appGV)
	return nil
}

// appFieldManager is the field manager of the App operator.
const appFieldManager = "app-operator"

// appReconciler provisions each App's database with ReconcileProvision and a generated
// password, writing through an apply.Applier over the manager's cache and recording
// events through the manager's recorder, as an operator built with the SDK does.
type appReconciler struct {
	c        client.Client
	scheme   *runtime.Scheme
	recorder events.EventRecorder
}

func (r *appReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &App{}
	if err := r.c.Get(ctx, req.NamespacedName, app); err != nil || app.DeletionTimestamp != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := app.DeepCopyObject().(*App)
	p := params(app.Namespace, true)
	p.Recorder = r.recorder
	cond, res, err := database.ReconcileProvision(ctx, r.c, r.scheme, app, p)
	reconcile.ApplyCondition(app, cond)
	app.Status.ObservedGeneration = app.Generation
	reconcile.AggregateReady(app, reconcile.ConditionReady, []string{database.ConditionType})
	if !equality.Semantic.DeepEqual(before.Status, app.Status) {
		if serr := r.c.Status().Update(ctx, app); serr != nil && err == nil {
			return ctrl.Result{}, serr
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return res, nil
}

// startAppOperator runs the App operator on cfg, on the suite's namespace and logger.
func startAppOperator(ctx context.Context, cfg *rest.Config, run conformance.RunOptions) error {
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
	r := &appReconciler{
		c:        apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: appFieldManager}),
		scheme:   mgr.GetScheme(),
		recorder: mgr.GetEventRecorder(appFieldManager),
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named(run.Name).For(&App{}).Complete(run.Wrap(r)); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// makeAppReady plays mariadb-operator: the MariaDB server exists and is Ready, and so
// is every Database, User and Grant of the App once the operator applied it.
func makeAppReady(ctx context.Context, c client.Client, cr client.Object) error {
	ns := cr.GetNamespace()
	if err := createMariaDB(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := simulate.MarkMariaDBReady(ctx, c, objectKey(ns, "mariadb")); err != nil {
		return err
	}
	k := objectKey(ns, "identity")
	for _, mark := range []func() error{
		func() error { _, err := simulate.MarkDatabaseReady(ctx, c, k); return err },
		func() error { _, err := simulate.MarkUserReady(ctx, c, k); return err },
		func() error { _, err := simulate.MarkGrantReady(ctx, c, k); return err },
	} {
		if err := mark(); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// isPasswordSecret declares the generated password Secret write-once
// (conformance.Options.WriteOnce): ReconcileProvision never writes it again.
func isPasswordSecret(obj client.Object) bool {
	return obj.GetObjectKind().GroupVersionKind().Kind == "Secret" && obj.GetName() == passwordSecret
}

// appOptions are the suite's options for the App operator.
func appOptions() conformance.Options {
	return conformance.Options{
		Env:          env,
		FieldManager: appFieldManager,
		Start:        startAppOperator,
		Samples: []client.Object{&App{
			TypeMeta:   metav1.TypeMeta{APIVersion: appGV.String(), Kind: "App"},
			ObjectMeta: metav1.ObjectMeta{Name: "app"},
		}},
		MakeReady:     makeAppReady,
		WriteOnce:     isPasswordSecret,
		SubConditions: []string{database.ConditionType},
		Timeout:       time.Minute,
	}
}

// TestConformanceDriftGeneratedPassword runs the conformance suite's Drift check
// against an operator whose database step is ReconcileProvision with GeneratePassword:
// every child deleted by another client comes back, and the password Secret, deleted
// while the User exists, comes back with a new password that the operator reported (a
// log line and an Event naming the Secret), not one minted silently.
func TestConformanceDriftGeneratedPassword(t *testing.T) {
	if err := conformance.RunCheck(t, appOptions(), conformance.CheckDrift); err != nil {
		t.Fatal(err)
	}
}
