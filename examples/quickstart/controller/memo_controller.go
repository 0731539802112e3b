package controller

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// FieldManager is the quick-start operator's own field-manager name: its Applier writes
// under it and its cache holds only the ConfigMaps labelled with it.
const FieldManager = "memo-operator"

// retainConfigMaps is how many older ConfigMaps of a Memo the prune keeps for a rollback.
const retainConfigMaps = 1

// readme:start

// +kubebuilder:rbac:groups=quickstart.reconciler-sdk.c5c3.io,resources=memos,verbs=get;list;watch
// +kubebuilder:rbac:groups=quickstart.reconciler-sdk.c5c3.io,resources=memos/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=quickstart.reconciler-sdk.c5c3.io,resources=memos/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch

// MemoReconciler renders a Memo's settings into an immutable ConfigMap and runs a
// Deployment that mounts it, with a Service in front.
type MemoReconciler struct {
	client   client.Client // an apply.Applier over the manager's client
	scheme   *runtime.Scheme
	pipeline *reconcile.Pipeline[*v1alpha1.Memo]
	opts     reconcile.PassOptions
}

// NewMemoReconciler builds the step table once. c is the operator's apply.Applier,
// apiReader the manager's GetAPIReader(), m the step metrics (nil records none).
func NewMemoReconciler(c client.Client, scheme *runtime.Scheme, apiReader client.Reader, m *reconcile.Metrics) (*MemoReconciler, error) {
	r := &MemoReconciler{client: c, scheme: scheme}
	// The pass ends at the first step that requeues; a group runs all of its members
	// first, so the Service exists while the Deployment is still rolling out.
	p, err := reconcile.NewPipeline(m,
		reconcile.Step[*v1alpha1.Memo]{Name: "Config", Condition: "ConfigReady", Run: r.reconcileConfig},
		reconcile.Sequential("Workload",
			reconcile.Step[*v1alpha1.Memo]{Name: "Deployment", Condition: "DeploymentReady", Run: r.reconcileDeployment},
			reconcile.Step[*v1alpha1.Memo]{Name: "Service", Condition: "ServiceReady", Run: r.reconcileService},
		),
		reconcile.Step[*v1alpha1.Memo]{Name: "Prune", Run: r.prune}, // runs once the Deployment is ready
	)
	if err != nil {
		return nil, err
	}
	r.pipeline, r.opts = p, reconcile.DefaultPassOptions(p.Conditions()...) // aggregate Ready
	r.opts.APIReader = apiReader
	return r, nil
}

// SetupWithManager watches Memos (but not the operator's own status writes) and the
// children they control.
func (r *MemoReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Memo{}, builder.WithPredicates(reconcile.IgnoreStatusWrites())).
		Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).Owns(&corev1.ConfigMap{}).
		Complete(r)
}

// Reconcile runs one pass; the status (conditions, Ready) is written on every exit
// path, and only when it changed.
func (r *MemoReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.RunPass(ctx, r.client, req.NamespacedName, &v1alpha1.Memo{}, r.opts,
		func(ctx context.Context, m *v1alpha1.Memo) (ctrl.Result, error) {
			m.Status.ObservedGeneration = m.Generation
			return r.pipeline.Run(ctx, m)
		})
}

func (r *MemoReconciler) reconcileConfig(ctx context.Context, m *v1alpha1.Memo) (ctrl.Result, error) {
	ini, err := config.RenderINI(config.Sections{
		config.DefaultSection: {"log_level": {m.Spec.LogLevel}},
		"memo":                {"message": {m.Spec.Message}, "port": {strconv.Itoa(int(m.Spec.Port))}},
	})
	if err != nil {
		reconcile.MarkFalse(m, "ConfigReady", "InvalidConfig", err.Error())
		return ctrl.Result{}, crreconcile.TerminalError(err) // no retry until the Memo changes
	}
	// New content, new name: the pod template changes and the Deployment rolls out.
	name, err := config.CreateImmutableConfigMap(ctx, r.client, r.scheme, m, m.Name+"-config", m.Namespace,
		map[string]string{"memo.ini": ini})
	if err != nil {
		reconcile.MarkFalse(m, "ConfigReady", "ConfigMapError", err.Error())
		return ctrl.Result{}, err
	}
	m.Status.ConfigMap = name
	reconcile.MarkTrue(m, "ConfigReady", "ConfigRendered", name)
	return ctrl.Result{}, nil
}

func (r *MemoReconciler) reconcileDeployment(ctx context.Context, m *v1alpha1.Memo) (ctrl.Result, error) {
	ready, err := deployment.EnsureDeployment(ctx, r.client, r.scheme, m, desiredDeployment(m))
	if err != nil || !ready { // Settle returns the error alone, or the requeue
		waiting := reconcile.FalseCondition("DeploymentReady", "RollingOut", "waiting for the Deployment to be available")
		return reconcile.Settle(m, reconcile.Requeue(waiting, deployment.PollInterval), err)
	}
	reconcile.MarkTrue(m, "DeploymentReady", "DeploymentAvailable", "")
	return ctrl.Result{}, nil
}

func (r *MemoReconciler) reconcileService(ctx context.Context, m *v1alpha1.Memo) (ctrl.Result, error) {
	if err := deployment.EnsureService(ctx, r.client, r.scheme, m, desiredService(m)); err != nil {
		reconcile.MarkFalse(m, "ServiceReady", "ServiceError", err.Error())
		return ctrl.Result{}, err
	}
	reconcile.MarkTrue(m, "ServiceReady", "ServiceApplied", "")
	return ctrl.Result{}, nil
}

func (r *MemoReconciler) prune(ctx context.Context, m *v1alpha1.Memo) (ctrl.Result, error) {
	return ctrl.Result{}, config.PruneImmutableConfigMaps(ctx, r.client, m, m.Name+"-config", m.Namespace,
		m.Status.ConfigMap, retainConfigMaps)
}

// readme:end

// labels selects a Memo's pods.
func labels(m *v1alpha1.Memo) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "memo", "app.kubernetes.io/instance": m.Name}
}

// desiredDeployment builds the Deployment of m from scratch: its pods mount the current
// ConfigMap at /etc/memo.
func desiredDeployment(m *v1alpha1.Memo) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: labels(m)},
		Spec: appsv1.DeploymentSpec{
			Replicas: m.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels(m)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(m)},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:         "memo",
						Image:        m.Spec.Image,
						Args:         []string{"--config-file=/etc/memo/memo.ini"},
						Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: m.Spec.Port}},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/memo", ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: m.Status.ConfigMap}},
					}}},
				},
			},
		},
	}
}

// desiredService builds the Service of m, leaving the cluster IP to the API server.
func desiredService(m *v1alpha1.Memo) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: labels(m)},
		Spec: corev1.ServiceSpec{
			Selector: labels(m),
			Ports:    []corev1.ServicePort{{Name: "http", Port: m.Spec.Port, TargetPort: intstr.FromString("http")}},
		},
	}
}
