package database

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// PasswordLength is the length of a password [ReconcileProvision] generates: 32
// characters of [A-Za-z0-9], about 190 bits, drawn from crypto/rand.
const PasswordLength = 32

// WatchLabel is the label mariadb-operator looks for on a password Secret: a User whose
// Secret carries it has its password updated when the Secret changes. Generated
// password Secrets carry it, so a later rotation of the Secret reaches the database.
const WatchLabel = "k8s.mariadb.com/watch"

// passwordAlphabet holds characters that need no quoting in a connection URL, an INI
// file or a shell.
const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// passwordState is what ensurePasswordSecret found.
type passwordState int

const (
	passwordReady   passwordState = iota // the Secret has a non-empty value under the key
	passwordMissing                      // no Secret, and none was to be generated
	passwordNoKey                        // the Secret exists without a non-empty value under the key
	passwordGoing                        // the Secret is being deleted
)

// ensurePasswordSecret makes sure the Secret key holds a password under dataKey. When
// the Secret does not exist and generate is set, it creates it, controlled by owner,
// with a random password; an existing Secret is never written, whoever controls it, so
// a password is never regenerated and nobody else's Secret is taken over. A Secret that
// is being deleted is reported as such: its password is going away and nothing is
// created over it. The password itself never leaves this function: not in the result,
// an error or a log line.
func ensurePasswordSecret(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	key client.ObjectKey, dataKey string, generate bool) (passwordState, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, key, secret)
	switch {
	case apierrors.IsNotFound(err) && generate:
		created, err := createPasswordSecret(ctx, c, scheme, owner, key, dataKey)
		if err != nil {
			return passwordMissing, err
		}
		if created {
			return passwordReady, nil
		}
		// Someone created it between our read and our create, or the read came from
		// a cache that has not seen it yet: read it past the cache and use it.
		if err := apply.GetUncached(ctx, c, key, secret); err != nil {
			return passwordMissing, fmt.Errorf("get password Secret %s: %w", key, err)
		}
	case apierrors.IsNotFound(err):
		return passwordMissing, nil
	case err != nil:
		return passwordMissing, fmt.Errorf("get password Secret %s: %w", key, err)
	}
	if secret.DeletionTimestamp != nil {
		return passwordGoing, nil
	}
	if len(secret.Data[dataKey]) == 0 {
		return passwordNoKey, nil
	}
	return passwordReady, nil
}

// createPasswordSecret creates the Secret key with a fresh password under dataKey. It
// reports false when a Secret of that name already exists; that Secret is not touched.
func createPasswordSecret(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	key client.ObjectKey, dataKey string) (bool, error) {
	password, err := generatePassword(PasswordLength)
	if err != nil {
		return false, fmt.Errorf("generate password for Secret %s: %w", key, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: key.Name, Namespace: key.Namespace,
			Labels: map[string]string{WatchLabel: ""},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{dataKey: password},
	}
	if err := apply.SetOwnership(c, scheme, owner, secret); err != nil {
		return false, fmt.Errorf("create password Secret %s: %w", key, err)
	}
	err = c.Create(ctx, secret, client.FieldOwner(apply.FieldManager))
	clear(password)
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		// The API server's error text never quotes data values of a Secret; ours names
		// the object only.
		return false, fmt.Errorf("create password Secret %s: %w", key, err)
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionCreated, GVK: secretGVK, Key: key})
	return true, nil
}

// secretGVK names Secrets in the writes reported through apply.Record.
var secretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

// generatePassword returns n random characters of passwordAlphabet, drawn without
// modulo bias from crypto/rand.
func generatePassword(n int) ([]byte, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	const limit = 256 - 256%len(passwordAlphabet) // largest multiple of the alphabet size
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return nil, err
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			if len(out) == n {
				break
			}
		}
	}
	return out, nil
}
