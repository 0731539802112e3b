package config

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/c5c3/reconciler-sdk/apply"
)

// ConfigBaseLabel is the label every object created by [CreateImmutableConfigMap] and
// [CreateImmutableSecret] carries, with the base name as value. The prune functions
// select their candidates by it on the server.
const ConfigBaseLabel = "cobaltcore.c5c3.io/config-base"

// CreateImmutableConfigMap makes sure the immutable ConfigMap baseName-<hash>
// ([ContentHash] of data) holds data, carries [ConfigBaseLabel] = baseName and is owner's
// (its controller reference, or its claim through an Applier for a target cluster), and
// returns its name. An existing one is reused when owner controls it and it holds data
// immutably; anything else is refused and left in place ([ErrForeignObject],
// [apply.ErrBeingDeleted], [ErrContentMismatch]; the package documentation, "Immutable,
// content-addressed objects"). A converged call writes nothing.
func CreateImmutableConfigMap(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	baseName, namespace string,
	data map[string]string,
) (string, error) {
	return createImmutable(ctx, c, scheme, owner, "ConfigMap", baseName, namespace, ContentHash(data),
		&corev1.ConfigMap{Data: maps.Clone(data), Immutable: new(true)},
		&corev1.ConfigMap{},
		func(existing *corev1.ConfigMap) bool {
			return existing.Immutable != nil && *existing.Immutable &&
				len(existing.BinaryData) == 0 && maps.Equal(existing.Data, data)
		})
}

// CreateImmutableSecret is [CreateImmutableConfigMap] for a Secret of type Opaque, with
// the same label, ownership, refusals and adoption. No error contains the data. A
// converged call is served by the manager's Secret informer when it caches the Secret
// ([apply.CacheOptions] caches the ones the Applier wrote), else it costs one GET.
func CreateImmutableSecret(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	baseName, namespace string,
	data map[string][]byte,
) (string, error) {
	desired := make(map[string][]byte, len(data))
	for k, v := range data {
		desired[k] = bytes.Clone(v)
	}
	return createImmutable(ctx, c, scheme, owner, "Secret", baseName, namespace, ContentHash(data),
		&corev1.Secret{Data: desired, Type: corev1.SecretTypeOpaque, Immutable: new(true)},
		&corev1.Secret{},
		func(existing *corev1.Secret) bool {
			return existing.Immutable != nil && *existing.Immutable &&
				maps.EqualFunc(existing.Data, data, bytes.Equal)
		})
}

// createImmutable names, labels and owns desired (of kind, the name used in errors
// before the scheme is known), creates it and, if it exists, reads it into existing
// (an empty object) and accepts it only when it is the owner's, not being deleted and
// sameContent, adopting it when it has no controller and opts in.
func createImmutable[T client.Object](
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	kind, baseName, namespace, hash string,
	desired, existing T,
	sameContent func(T) bool,
) (string, error) {
	name := baseName + "-" + hash
	if err := apply.CheckScheme(scheme); err != nil {
		return "", fmt.Errorf("create %s %s/%s: %w", kind, namespace, name, err)
	}
	gvk, err := apiutil.GVKForObject(desired, scheme)
	if err != nil {
		return "", fmt.Errorf("%T: %w: %w", desired, apply.ErrUnknownKind, err)
	}
	desc := gvk.Kind + " " + namespace + "/" + name
	if err := validateTarget(owner, baseName, namespace); err != nil {
		return "", fmt.Errorf("create %s: %w", desc, err)
	}
	desired.SetName(name)
	desired.SetNamespace(namespace)
	desired.SetLabels(map[string]string{ConfigBaseLabel: baseName})
	if err := apply.SetOwnership(c, scheme, owner, desired); err != nil {
		return "", fmt.Errorf("create %s: %w", desc, err)
	}

	key := client.ObjectKey{Namespace: namespace, Name: name}
	err = c.Get(ctx, key, existing)
	switch {
	case apierrors.IsNotFound(err):
		err = c.Create(ctx, desired)
		if err == nil {
			apply.Record(ctx, apply.Write{Action: apply.ActionCreated, GVK: gvk, Key: key})
			return name, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("create %s: %w", desc, err)
		}
		// Created since the read (by a second manager), or read from a cache that has
		// not seen it yet: read it again past the cache.
		if err := apply.GetUncached(ctx, c, key, existing); err != nil {
			return "", fmt.Errorf("read existing %s: %w", desc, err)
		}
	case err != nil:
		return "", fmt.Errorf("read existing %s: %w", desc, err)
	}
	if existing.GetDeletionTimestamp() != nil {
		return "", fmt.Errorf("existing %s: %w: retry once it is gone", desc, apply.ErrBeingDeleted)
	}
	if err := apply.CheckControlled(c, owner, existing, gvk); err != nil {
		if !apply.Unclaimed(c, existing) || existing.GetAnnotations()[apply.AdoptAnnotation] != "true" {
			return "", fmt.Errorf("%w: %w", ErrForeignObject, err)
		}
		if !sameContent(existing) {
			return "", fmt.Errorf("existing %s: %w (it is marked for adoption but holds other data)", desc, ErrContentMismatch)
		}
		if err := adopt(ctx, c, scheme, owner, existing, baseName); err != nil {
			return "", fmt.Errorf("adopt existing %s: %w", desc, err)
		}
		apply.Record(ctx, apply.Write{Action: apply.ActionConfigured, GVK: gvk, Key: key,
			Fields: append([]string{"metadata.labels." + ConfigBaseLabel}, apply.OwnershipFields(c)...)})
		return name, nil
	}
	if !sameContent(existing) {
		return "", fmt.Errorf("existing %s: %w (hash collision, or the object was replaced)", desc, ErrContentMismatch)
	}
	return name, nil
}

// adopt makes owner the owner of existing (apply.SetOwnership: its controller, or on a
// target cluster its claim) and labels it with baseName, patching only its metadata, on
// the condition that it has not changed since it was read.
func adopt(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner, existing client.Object, baseName string) error {
	patch := client.MergeFromWithOptions(existing.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	if err := apply.SetOwnership(c, scheme, owner, existing); err != nil {
		return err
	}
	labels := existing.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ConfigBaseLabel] = baseName
	existing.SetLabels(labels)
	return c.Patch(ctx, existing, patch)
}

// validateTarget checks the owner, base name and namespace before any API call.
func validateTarget(owner client.Object, baseName, namespace string) error {
	if err := apply.ValidateOwner(owner); err != nil {
		return err
	}
	if err := ValidateBaseName(baseName); err != nil {
		return err
	}
	if namespace == "" {
		return ErrInvalidNamespace
	}
	return nil
}

// ValidateBaseName reports, wrapping [ErrInvalidBaseName], whether baseName cannot
// serve as a base name: baseName-<hash> must be a DNS-1123 subdomain of at most 253
// characters and baseName a label value of at most 63 characters. In effect a base
// name is 1 to 63 lower-case letters, digits, "-" and ".", starting and ending with a
// letter or digit.
func ValidateBaseName(baseName string) error {
	if baseName == "" {
		return fmt.Errorf("baseName: %w: empty", ErrInvalidBaseName)
	}
	var problems []string
	problems = append(problems, validation.IsDNS1123Subdomain(baseName+"-"+strings.Repeat("0", HashLength))...)
	for _, p := range validation.IsValidLabelValue(baseName) {
		problems = append(problems, "as label "+ConfigBaseLabel+": "+p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("baseName %q: %w: %s", baseName, ErrInvalidBaseName, strings.Join(problems, "; "))
	}
	return nil
}
