package database

import (
	"context"
	"fmt"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/credential"
)

// PasswordLength is the length of a password [ProvisionFlow] generates: 32
// characters of [A-Za-z0-9], about 190 bits, drawn from crypto/rand
// (credential.Random).
const PasswordLength = 32

// WatchLabel is the label mariadb-operator looks for on a password Secret: a User whose
// Secret carries it has its password updated when the Secret changes. Generated
// password Secrets carry it, so a later rotation of the Secret reaches the database.
const WatchLabel = "k8s.mariadb.com/watch"

// passwordState is what ensurePasswordSecret found.
type passwordState int

const (
	passwordReady   passwordState = iota // the Secret has a non-empty value under the key
	passwordMissing                      // no Secret, and none was to be generated
	passwordNoKey                        // the Secret exists without a non-empty value under the key
	passwordGoing                        // the Secret is being deleted
	passwordPending                      // no Secret: its backup may still restore it
)

// passwordSecret is what ensurePasswordSecret found or did: the state, for
// passwordPending what the restore waits for, and for passwordReady the password when
// it was read (nil when this pass created the Secret).
type passwordSecret struct {
	state   passwordState
	pending string
	value   []byte
}

// ensurePasswordSecret makes sure the password Secret of user holds a password under
// its key. An existing Secret is only read, whoever controls it, so a password is
// never overwritten and nobody else's Secret is taken over. A Secret that is being
// deleted is reported as such: its password is going away and nothing is created over
// it. When the Secret is missing and p.GeneratePassword is set, it is created through
// credential.Ensure, controlled by owner: restored from p.Restore's backup when that
// holds the password, not at all while the backup may still deliver it, otherwise with
// a new random password — reported as a regeneration when the User already exists
// (the account holds the lost password). Every creation is logged and, with
// p.Recorder, recorded as an Event; the password itself never leaves credential.Ensure.
func ensurePasswordSecret(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	p ProvisionParams) (passwordSecret, error) {
	user := p.User
	ref := user.Spec.PasswordSecretKeyRef
	key := client.ObjectKey{Namespace: user.Namespace, Name: ref.Name}
	if !p.GeneratePassword {
		return readPasswordSecret(ctx, c, key, ref.Key)
	}
	res, err := credential.Ensure(ctx, c, scheme, owner, credential.Secret{
		Key: key, DataKey: ref.Key, Length: PasswordLength,
		Labels:   map[string]string{WatchLabel: ""},
		Restore:  p.Restore,
		InUse:    userInUse(c, client.ObjectKeyFromObject(user)),
		For:      "password of User " + keyOf(user),
		Recorder: p.Recorder,
	})
	if err != nil {
		return passwordSecret{}, fmt.Errorf("password Secret of User %s: %w", keyOf(user), err)
	}
	switch res.Outcome {
	case credential.OutcomeExisting:
		return found(res.Secret, ref.Key), nil
	case credential.OutcomeRestorePending:
		return passwordSecret{state: passwordPending, pending: res.Pending}, nil
	}
	return passwordSecret{state: passwordReady}, nil
}

// readPasswordSecret reads the password Secret key and judges it under dataKey.
func readPasswordSecret(ctx context.Context, c client.Client, key client.ObjectKey, dataKey string) (passwordSecret, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, key, secret)
	switch {
	case apierrors.IsNotFound(err):
		return passwordSecret{state: passwordMissing}, nil
	case err != nil:
		return passwordSecret{}, fmt.Errorf("get password Secret %s: %w", key, err)
	}
	return found(secret, dataKey), nil
}

// found is the state of an existing password Secret, with its password when ready.
func found(secret *corev1.Secret, dataKey string) passwordSecret {
	pw := passwordSecret{state: judge(secret, dataKey)}
	if pw.state == passwordReady {
		pw.value = secret.Data[dataKey]
	}
	return pw
}

// userInUse reports, for credential.Secret.InUse, that the lost password is in use
// when the User exists: the step applies the User only once the password Secret holds
// a password, so an existing User was created with the lost one, and mariadb-operator
// sets the account's password to the new one.
func userInUse(c client.Client, key client.ObjectKey) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		err := c.Get(ctx, key, &mariadbv1alpha1.User{})
		switch {
		case apierrors.IsNotFound(err):
			return "", nil
		case err != nil:
			return "", fmt.Errorf("get User %s: %w", key, err)
		}
		return fmt.Sprintf("User %s exists: mariadb-operator sets the account's password to the new one, "+
			"and every client of the database needs it", key), nil
	}
}

// judge tells the state of an existing password Secret: being deleted, without a
// non-empty value under dataKey, or ready.
func judge(secret *corev1.Secret, dataKey string) passwordState {
	switch {
	case secret.DeletionTimestamp != nil:
		return passwordGoing
	case len(secret.Data[dataKey]) == 0:
		return passwordNoKey
	}
	return passwordReady
}
