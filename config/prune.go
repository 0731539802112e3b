package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/apply"
)

// DefaultRetain is the number of historical objects [DefaultPruneOptions] keeps
// besides the current one.
const DefaultRetain = 3

// PruneOptions configure [PruneImmutableConfigMapsWithOptions] and
// [PruneImmutableSecretsWithOptions].
type PruneOptions struct {
	// Retain is the number of newest historical objects kept besides the current one.
	// It must not be negative.
	Retain int
	// SpareInUse also keeps every candidate a workload of the namespace (not being
	// deleted) references, as a volume, envFrom, env valueFrom or imagePullSecrets of any
	// container: Pods not yet Succeeded or Failed; the pod templates of Deployments,
	// StatefulSets, DaemonSets, ControllerRevisions and ReplicaSets at any replica count
	// (the rollback history, revisionHistoryLimit of them per Deployment); unfinished
	// Jobs and CronJobs' job templates. If a list fails, nothing is deleted.
	SpareInUse bool
}

// DefaultPruneOptions returns the recommended options: keep [DefaultRetain] historical
// objects and spare every object still in use.
func DefaultPruneOptions() PruneOptions {
	return PruneOptions{Retain: DefaultRetain, SpareInUse: true}
}

// PruneImmutableConfigMaps deletes the ConfigMaps of namespace labelled [ConfigBaseLabel] =
// baseName and named baseName-* that owner controls and that are not being deleted, except
// currentName and the newest retain others (by CreationTimestamp, ties by name), oldest
// first. Each delete is conditioned on the listed UID, logged and recorded
// (apply.ActionDeleted); one gone or replaced since the list is skipped; failures are
// returned joined. currentName must be baseName-* ([ErrInvalidCurrentName]: a prune without
// it could delete the ConfigMap in use), a negative retain wraps [ErrInvalidRetain], other
// bad input is refused as by [CreateImmutableConfigMap].
func PruneImmutableConfigMaps(
	ctx context.Context,
	c client.Client,
	owner client.Object,
	baseName, namespace, currentName string,
	retain int,
) error {
	return PruneImmutableConfigMapsWithOptions(ctx, c, owner, baseName, namespace, currentName,
		PruneOptions{Retain: retain})
}

// PruneImmutableConfigMapsWithOptions is [PruneImmutableConfigMaps] with
// [PruneOptions]; with SpareInUse it also keeps every candidate still referenced by a
// workload of the namespace (see [PruneOptions]).
func PruneImmutableConfigMapsWithOptions(
	ctx context.Context,
	c client.Client,
	owner client.Object,
	baseName, namespace, currentName string,
	opts PruneOptions,
) error {
	return prune(ctx, c, configMaps, owner, baseName, namespace, currentName, opts)
}

// PruneImmutableSecrets is [PruneImmutableConfigMaps] for the Secrets created by
// [CreateImmutableSecret]. Only metadata is read: the Secrets' data never reaches the
// caller's memory.
func PruneImmutableSecrets(
	ctx context.Context,
	c client.Client,
	owner client.Object,
	baseName, namespace, currentName string,
	retain int,
) error {
	return PruneImmutableSecretsWithOptions(ctx, c, owner, baseName, namespace, currentName,
		PruneOptions{Retain: retain})
}

// PruneImmutableSecretsWithOptions is [PruneImmutableSecrets] with [PruneOptions].
func PruneImmutableSecretsWithOptions(
	ctx context.Context,
	c client.Client,
	owner client.Object,
	baseName, namespace, currentName string,
	opts PruneOptions,
) error {
	return prune(ctx, c, secrets, owner, baseName, namespace, currentName, opts)
}

// resourceKind tells prune what it lists and how pods reference it.
type resourceKind struct {
	kind string
	// refs calls yield with the name of every object of this kind spec references.
	refs func(spec *corev1.PodSpec, yield func(name string))
}

var (
	configMaps = resourceKind{kind: "ConfigMap", refs: configMapRefs}
	secrets    = resourceKind{kind: "Secret", refs: secretRefs}
)

func prune(
	ctx context.Context,
	c client.Client,
	rk resourceKind,
	owner client.Object,
	baseName, namespace, currentName string,
	opts PruneOptions,
) error {
	if err := validateTarget(owner, baseName, namespace); err != nil {
		return fmt.Errorf("prune %ss %s/%s-*: %w", rk.kind, namespace, baseName, err)
	}
	if opts.Retain < 0 {
		return fmt.Errorf("prune %ss %s/%s-*: %w, got %d", rk.kind, namespace, baseName, ErrInvalidRetain, opts.Retain)
	}
	if !strings.HasPrefix(currentName, baseName+"-") || currentName == baseName+"-" {
		return fmt.Errorf("prune %ss %s/%s-*: %w, got %q", rk.kind, namespace, baseName, ErrInvalidCurrentName, currentName)
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: rk.kind}

	// Metadata is all pruning needs; for Secrets it also keeps their data off the wire.
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: rk.kind + "List"})
	if err := c.List(ctx, list, client.InNamespace(namespace),
		client.MatchingLabels{ConfigBaseLabel: baseName}); err != nil {
		return fmt.Errorf("list %ss in %s with %s=%s: %w", rk.kind, namespace, ConfigBaseLabel, baseName, err)
	}

	candidates := make([]*metav1.PartialObjectMetadata, 0, len(list.Items))
	for i := range list.Items {
		obj := &list.Items[i]
		if !strings.HasPrefix(obj.Name, baseName+"-") || obj.Name == currentName {
			continue
		}
		if !apply.IsControlled(c, owner, obj) || obj.DeletionTimestamp != nil {
			continue
		}
		candidates = append(candidates, obj)
	}
	if len(candidates) <= opts.Retain {
		return nil
	}
	sortNewestFirst(candidates)
	stale := candidates[opts.Retain:]

	var inUse map[string]bool
	if opts.SpareInUse {
		var err error
		if inUse, err = referenced(ctx, c, namespace, rk); err != nil {
			return fmt.Errorf("prune %ss %s/%s-*: %w", rk.kind, namespace, baseName, err)
		}
	}

	logger := log.FromContext(ctx)
	var errs []error
	for _, obj := range slices.Backward(stale) {
		if inUse[obj.Name] {
			logger.V(1).Info("Sparing stale immutable object still in use",
				"kind", rk.kind, "namespace", namespace, "name", obj.Name)
			continue
		}
		// The object judged above is the one deleted: with the UID precondition a
		// namesake created since the list (by anyone) is left alone.
		obj.SetGroupVersionKind(gvk)
		err := c.Delete(ctx, obj, client.Preconditions{UID: new(obj.UID)})
		if apierrors.IsConflict(err) {
			err = confirmReplaced(ctx, c, obj, err)
		}
		switch {
		case err == nil:
			apply.Record(ctx, apply.Write{Action: apply.ActionDeleted, GVK: gvk, Key: client.ObjectKeyFromObject(obj)})
			logger.Info("Deleted stale immutable object", "kind", rk.kind, "namespace", namespace,
				"name", obj.Name, "baseName", baseName, "created", obj.CreationTimestamp.UTC())
		case errors.Is(err, errReplaced):
			logger.Info("Skipped stale immutable object replaced since listing", "kind", rk.kind,
				"namespace", namespace, "name", obj.Name)
		case apierrors.IsNotFound(err):
		default:
			errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", rk.kind, namespace, obj.Name, err))
		}
	}
	return errors.Join(errs...)
}

// errReplaced marks a delete refused because the object was replaced since the list.
var errReplaced = errors.New("replaced since listing")

// confirmReplaced explains the Conflict conflict of a UID-preconditioned delete of
// obj: errReplaced when the object is gone or now has another UID (someone replaced
// it: it is not ours to delete), and conflict itself when the listed object is still
// there, so that the caller retries instead of taking the prune for done.
func confirmReplaced(ctx context.Context, c client.Client, obj *metav1.PartialObjectMetadata, conflict error) error {
	now := &metav1.PartialObjectMetadata{}
	now.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), now)
	switch {
	case apierrors.IsNotFound(err):
		return errReplaced
	case err != nil:
		return fmt.Errorf("%w (and reading it again failed: %w)", conflict, err)
	case now.UID != obj.UID:
		return errReplaced
	}
	return conflict
}

// sortNewestFirst sorts by CreationTimestamp descending, then by name descending, so
// that objects created in the same second (the timestamp's resolution) always sort
// the same way.
func sortNewestFirst(objs []*metav1.PartialObjectMetadata) {
	slices.SortFunc(objs, func(a, b *metav1.PartialObjectMetadata) int {
		return cmp.Or(
			b.CreationTimestamp.Compare(a.CreationTimestamp.Time),
			strings.Compare(b.Name, a.Name),
		)
	})
}
