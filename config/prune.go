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
	// SpareInUse also keeps every candidate that a ReplicaSet not being deleted, or a
	// Pod not yet Succeeded or Failed, in the namespace references: as a volume
	// (configMap, secret or a projected source), through envFrom, env valueFrom or, for
	// Secrets, imagePullSecrets, in any container, init container or ephemeral
	// container. A ReplicaSet counts at any replica count, so the old ReplicaSets a
	// Deployment keeps for `kubectl rollout undo` keep their configuration. The
	// ReplicaSets and Pods are listed only when there is something to delete.
	SpareInUse bool
}

// DefaultPruneOptions returns the recommended options: keep [DefaultRetain] historical
// objects and spare every object still in use.
func DefaultPruneOptions() PruneOptions {
	return PruneOptions{Retain: DefaultRetain, SpareInUse: true}
}

// PruneImmutableConfigMaps deletes stale ConfigMaps created by
// [CreateImmutableConfigMap] for baseName, keeping currentName and the newest retain
// others.
//
// It lists the ConfigMaps of namespace labelled [ConfigBaseLabel] = baseName; keeps as
// candidates those named baseName + "-" + anything, other than currentName, whose
// controller reference has owner's UID; sorts them by CreationTimestamp, newest
// first, ties broken by name in descending order; and, when there are more than
// retain, deletes those from index retain on, oldest first, logging each deletion at
// info level. A ConfigMap that is already gone (NotFound), or that was replaced by an
// object with another UID since the list, is skipped. Delete failures do not stop the
// other deletions; they are returned joined. A ConfigMap lacking the label is never
// seen, so never pruned; its owner reference still lets the garbage collector remove
// it with the owner.
//
// Bad input is refused before any API call, as for CreateImmutableConfigMap, and a
// negative retain with [ErrInvalidRetain].
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
// ReplicaSet or Pod of the namespace.
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
		if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != owner.GetUID() {
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
		obj.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: rk.kind})
		err := c.Delete(ctx, obj, client.Preconditions{UID: new(obj.UID)})
		switch {
		case err == nil:
			logger.Info("Deleted stale immutable object", "kind", rk.kind, "namespace", namespace,
				"name", obj.Name, "baseName", baseName, "created", obj.CreationTimestamp.UTC())
		case apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			logger.Info("Skipped stale immutable object replaced since listing", "kind", rk.kind,
				"namespace", namespace, "name", obj.Name)
		default:
			errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", rk.kind, namespace, obj.Name, err))
		}
	}
	return errors.Join(errs...)
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
