package config

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
)

// ConfigBaseLabel is the label every object created by [CreateImmutableConfigMap] and
// [CreateImmutableSecret] carries, with the base name as value. The prune functions
// select their candidates by it on the server.
const ConfigBaseLabel = "cobaltcore.c5c3.io/config-base"

// CreateImmutableConfigMap creates an immutable ConfigMap named baseName-<hash>, where
// hash is [ContentHash] of data, and returns that name.
//
// The ConfigMap carries data, Immutable: true, the label [ConfigBaseLabel] = baseName
// and a controller reference to owner. If a ConfigMap of that name already exists
// (AlreadyExists), the name is returned without error, provided the existing
// ConfigMap is controlled by owner and holds data immutably; a ConfigMap controlled by
// anyone else is refused with [ErrForeignObject], naming its controller, and one
// holding other data (a hash collision) or not immutable with [ErrContentMismatch].
//
// Input that cannot succeed is refused before any API call: a base name that does not
// make a valid object name and label value ([ErrInvalidBaseName]), an empty namespace
// ([ErrInvalidNamespace]), and a nil, never persisted or unsuitable owner
// (apply.ErrNilOwner, apply.ErrOwnerNotPersisted, apply.ErrInvalidOwner). API errors
// are wrapped with the ConfigMap's namespace and name. data is not modified.
func CreateImmutableConfigMap(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	baseName, namespace string,
	data map[string]string,
) (string, error) {
	return createImmutable(ctx, c, scheme, owner, baseName, namespace, ContentHash(data),
		&corev1.ConfigMap{Data: maps.Clone(data), Immutable: new(true)},
		&corev1.ConfigMap{},
		func(existing *corev1.ConfigMap) bool {
			return existing.Immutable != nil && *existing.Immutable &&
				len(existing.BinaryData) == 0 && maps.Equal(existing.Data, data)
		})
}

// CreateImmutableSecret is [CreateImmutableConfigMap] for a Secret of type Opaque: it
// creates the immutable Secret baseName-<hash> holding data and returns its name, with
// the same label, owner reference, idempotency and refusals. Error texts never contain
// the data.
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
	return createImmutable(ctx, c, scheme, owner, baseName, namespace, ContentHash(data),
		&corev1.Secret{Data: desired, Type: corev1.SecretTypeOpaque, Immutable: new(true)},
		&corev1.Secret{},
		func(existing *corev1.Secret) bool {
			return existing.Immutable != nil && *existing.Immutable &&
				maps.EqualFunc(existing.Data, data, bytes.Equal)
		})
}

// createImmutable names, labels and owns desired, creates it and, if it exists,
// checks that existing (read into the empty object) is the owner's and sameContent.
func createImmutable[T client.Object](
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	baseName, namespace, hash string,
	desired, existing T,
	sameContent func(T) bool,
) (string, error) {
	kind, err := kindOf(desired, scheme)
	if err != nil {
		return "", err
	}
	name := baseName + "-" + hash
	desc := kind + " " + namespace + "/" + name
	if err := validateTarget(owner, baseName, namespace); err != nil {
		return "", fmt.Errorf("create %s: %w", desc, err)
	}
	desired.SetName(name)
	desired.SetNamespace(namespace)
	desired.SetLabels(map[string]string{ConfigBaseLabel: baseName})
	if err := controllerutil.SetControllerReference(owner, desired, scheme); err != nil {
		return "", fmt.Errorf("create %s: %w: %w", desc, apply.ErrInvalidOwner, err)
	}

	err = c.Create(ctx, desired)
	if err == nil {
		return name, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create %s: %w", desc, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, existing); err != nil {
		return "", fmt.Errorf("read existing %s: %w", desc, err)
	}
	if ref := metav1.GetControllerOf(existing); ref == nil || ref.UID != owner.GetUID() {
		return "", fmt.Errorf("existing %s is controlled by %s, not by %s: %w",
			desc, describeRef(ref), describeOwner(owner, scheme), ErrForeignObject)
	}
	if !sameContent(existing) {
		return "", fmt.Errorf("existing %s: %w (hash collision, or the object was replaced)", desc, ErrContentMismatch)
	}
	return name, nil
}

// validateTarget checks the owner, base name and namespace before any API call.
func validateTarget(owner client.Object, baseName, namespace string) error {
	if err := validateOwner(owner); err != nil {
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

// validateOwner refuses a nil owner and one without UID, with apply's sentinels.
func validateOwner(owner client.Object) error {
	if isNil(owner) {
		return apply.ErrNilOwner
	}
	if owner.GetUID() == "" {
		return fmt.Errorf("%w: owner %s/%s must be read from the API server first",
			apply.ErrOwnerNotPersisted, owner.GetNamespace(), owner.GetName())
	}
	return nil
}

// isNil reports whether v is nil or a typed nil pointer inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// kindOf returns the kind of obj from scheme.
func kindOf(obj client.Object, scheme *runtime.Scheme) (string, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return "", fmt.Errorf("%T: %w: %w", obj, apply.ErrUnknownKind, err)
	}
	return gvk.Kind, nil
}

// describeOwner names owner as "Kind namespace/name", the kind from scheme when it
// knows it.
func describeOwner(owner client.Object, scheme *runtime.Scheme) string {
	kind := fmt.Sprintf("%T", owner)
	if gvk, err := apiutil.GVKForObject(owner, scheme); err == nil {
		kind = gvk.Kind
	}
	return kind + " " + owner.GetNamespace() + "/" + owner.GetName()
}

// describeRef names a controller reference as "Kind name (uid ...)", or "no
// controller".
func describeRef(ref *metav1.OwnerReference) string {
	if ref == nil {
		return "no controller"
	}
	return fmt.Sprintf("%s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
}
