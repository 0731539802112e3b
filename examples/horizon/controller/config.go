package controller

import (
	"context"
	"fmt"

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
// current one, for a rollback: config.DefaultRetain, which the Deployment's
// revisionHistoryLimit matches (deployment.DefaultRevisionHistoryLimit). One a live
// ReplicaSet or pod still mounts is never deleted, whatever its age.
const RetainConfigMaps = config.DefaultRetain

// ConfigBaseName is the base name of a Horizon's content-addressed ConfigMaps
// (<name>-config-<hash>).
func ConfigBaseName(h *v1alpha1.Horizon) string { return h.Name + "-config" }

// reconcileConfig is the Config row: local_settings.py rendered from the spec, with the
// identity providers' choices of the WebSSO row after the hand-written ones, into an
// immutable ConfigMap named after its content, so a change of settings (a provider
// registered, too) is a new ConfigMap and a new pod template.
func (r *Reconciler) reconcileConfig(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	s := settings.FromSpec(&h.Spec)
	reconcile.StateFrom[passState](ctx).websso.Apply(&s)
	rendered, err := settings.Render(s)
	if err != nil {
		// The spec cannot be rendered (the webhook was bypassed): no retry until it changes.
		return configError(err.Error()), crreconcile.TerminalError(
			fmt.Errorf("rendering local_settings.py of Horizon %s/%s: %w", h.Namespace, h.Name, err))
	}
	name, err := config.CreateImmutableConfigMap(ctx, target.Client, target.Client.Scheme(), h,
		ConfigBaseName(h), h.Namespace, map[string]string{SettingsFile: string(rendered)})
	if err != nil {
		return configError(err.Error()), err
	}
	h.Status.ConfigMap = name
	return reconcile.Done(reconcile.TrueCondition(ConditionConfigReady, ReasonConfigRendered,
		"local_settings.py rendered into ConfigMap "+name)), nil
}

// prune is the Prune row after the Deployment: it deletes the older ConfigMaps beyond
// RetainConfigMaps, never the current one and never one that a workload still mounts. A
// failure flips ConfigReady.
func (r *Reconciler) prune(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	if err := config.PruneImmutableConfigMapsWithOptions(ctx, target.Client, h, ConfigBaseName(h), h.Namespace,
		h.Status.ConfigMap, config.DefaultPruneOptions()); err != nil {
		return configError("pruning older ConfigMaps: " + err.Error()), err
	}
	return reconcile.Outcome{}, nil
}

// configError is ConfigReady False with ReasonConfigError and msg.
func configError(msg string) reconcile.Outcome {
	return reconcile.Done(reconcile.FalseCondition(ConditionConfigReady, ReasonConfigError, msg))
}
