package secrets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// IsSecretReady reports whether the Secret at key exists and holds every expectedKeys
// key in .data (an empty value counts; no keys: existence only): (true, nil), else
// (false, nil) when not found or a key is missing, or (false, err) on another API
// failure, wrapped with the Secret's namespace/name.
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

// GetSecretValue returns the (decoded) value under dataKey in the Secret at key. A
// missing Secret or another API failure returns the wrapped API error (apierrors.IsNotFound
// still sees it); a missing key an error wrapping [ErrKeyNotFound]: `key not found in
// Secret: key "<dataKey>" in Secret <namespace>/<name>`. No error carries a value.
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
