package secrets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// IsSecretReady reports whether the Secret at key exists and, when expectedKeys are
// given, holds every one of them in .data.
//
// It returns (true, nil) when the Secret exists with all expected keys, (false, nil)
// when it is not found or lacks one of them, and (false, err) on any other API failure,
// wrapped with the Secret's namespace/name. With no expectedKeys only existence is
// checked. A key present with an empty value counts as present.
func IsSecretReady(
	ctx context.Context,
	c client.Client,
	key client.ObjectKey,
	expectedKeys ...string,
) (bool, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get Secret %s: %w", key, err)
	}
	for _, k := range expectedKeys {
		if _, ok := secret.Data[k]; !ok {
			return false, nil
		}
	}
	return true, nil
}

// GetSecretValue returns the value stored under dataKey in the Secret at key (the
// client has already decoded it from base64).
//
// A Secret that does not exist, or any other API failure, returns the API error
// wrapped with the Secret's namespace/name (apierrors.IsNotFound still sees it). A
// Secret without dataKey returns an error wrapping [ErrKeyNotFound]:
// `key not found in Secret: key "<dataKey>" in Secret <namespace>/<name>`. No error
// text carries a value.
func GetSecretValue(
	ctx context.Context,
	c client.Client,
	key client.ObjectKey,
	dataKey string,
) (string, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		return "", fmt.Errorf("get Secret %s: %w", key, err)
	}
	value, ok := secret.Data[dataKey]
	if !ok {
		return "", fmt.Errorf("%w: key %q in Secret %s/%s", ErrKeyNotFound, dataKey, key.Namespace, key.Name)
	}
	return string(value), nil
}
