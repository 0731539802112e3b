package controller

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// SettingsFile is the key of local_settings.py in the ConfigMap and its file name in
// the pods.
const SettingsFile = "local_settings.py"

// SettingsDir is where the pods mount the ConfigMap; the dashboard's settings module
// imports local_settings.py from there.
const SettingsDir = "/etc/openstack-dashboard"

// RetainConfigMaps is how many older ConfigMaps of a Horizon the prune keeps besides the
// current one, for a rollback; one a live ReplicaSet or pod still mounts is never
// deleted, whatever its age.
const RetainConfigMaps = 3

// ConfigBaseName is the base name of a Horizon's content-addressed ConfigMaps
// (<name>-config-<hash>).
func ConfigBaseName(h *v1alpha1.Horizon) string { return h.Name + "-config" }

// reconcileConfig is the Config row: local_settings.py rendered from the spec into an
// immutable ConfigMap named after its content, so a change of settings is a new
// ConfigMap and a new pod template.
func (r *Reconciler) reconcileConfig(ctx context.Context, h *v1alpha1.Horizon) (ctrl.Result, error) {
	target := r.targetOf(ctx)
	rendered, err := settings.Render(settings.FromSpec(&h.Spec))
	if err != nil {
		// The spec cannot be rendered (the webhook was bypassed): no retry until it changes.
		reconcile.MarkFalse(h, ConditionConfigReady, ReasonConfigError, err.Error())
		return ctrl.Result{}, crreconcile.TerminalError(fmt.Errorf("rendering local_settings.py of Horizon %s/%s: %w", h.Namespace, h.Name, err))
	}
	name, err := config.CreateImmutableConfigMap(ctx, target.Client, target.Client.Scheme(), h,
		ConfigBaseName(h), h.Namespace, map[string]string{SettingsFile: string(rendered)})
	if err != nil {
		reconcile.MarkFalse(h, ConditionConfigReady, ReasonConfigError, err.Error())
		return ctrl.Result{}, err
	}
	h.Status.ConfigMap = name
	reconcile.MarkTrue(h, ConditionConfigReady, ReasonConfigRendered, "local_settings.py rendered into ConfigMap "+name)
	return ctrl.Result{}, nil
}

// prune is the unnamed row after the Deployment: it deletes the older ConfigMaps beyond
// RetainConfigMaps, never the current one and never one that a workload still mounts. A
// failure flips ConfigReady.
func (r *Reconciler) prune(ctx context.Context, h *v1alpha1.Horizon) (ctrl.Result, error) {
	target := r.targetOf(ctx)
	opts := config.DefaultPruneOptions()
	opts.Retain, opts.SpareInUse = RetainConfigMaps, true
	if err := config.PruneImmutableConfigMapsWithOptions(ctx, target.Client, h, ConfigBaseName(h), h.Namespace,
		h.Status.ConfigMap, opts); err != nil {
		reconcile.MarkFalse(h, ConditionConfigReady, ReasonConfigError, "pruning older ConfigMaps: "+err.Error())
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
