package rotation

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// DatabasePasswordStagedKey is the data key of the Secret names.DatabasePasswordSecretName
// that holds a new password [RotatePassword] staged; nothing uses it until the
// Keystone's PasswordRotation step takes it, once the backup holds it.
const DatabasePasswordStagedKey = "staged"

// PasswordStagedAtAnnotation records, in RFC 3339 on the database password Secret, when
// [RotatePassword] staged a password.
const PasswordStagedAtAnnotation = "keystone.openstack.c5c3.io/password-staged-at"

// RotatePasswordCommand is the operator's subcommand that stages a new database
// password ([RunRotatePassword]); the password rotation CronJob runs the operator image
// with it.
const RotatePasswordCommand = "rotate-password"

// stagedPasswordLength is the number of characters of a staged password.
const stagedPasswordLength = secrets.DefaultGeneratedLength

// ErrInvalidRotatePasswordArgs is wrapped by the errors of [RunRotatePassword] and
// [RotatePassword] about their arguments; the error names the flag or the parameter.
var ErrInvalidRotatePasswordArgs = errors.New("invalid rotate-password arguments")

// ErrNoPassword is wrapped by the error of [RotatePassword] for a Secret that holds no
// names.DatabasePasswordDataKey: there is no password in use to rotate away from.
var ErrNoPassword = errors.New("no database password to rotate")

// RotatePassword stages a new random password in the Secret at key, under
// [DatabasePasswordStagedKey], with [PasswordStagedAtAnnotation] at now, and reports
// whether it did; it touches nothing else. A password already staged is left alone
// (false, nil): the Keystone may be pushing it. One read, one guarded Update (see the
// package documentation). It refuses, without writing, a Secret without
// names.DatabasePasswordDataKey ([ErrNoPassword]) or being deleted (apply.ErrBeingDeleted)
// and, before any request, an incomplete key ([ErrInvalidRotatePasswordArgs]). The
// client needs [SecretRules] on that Secret.
func RotatePassword(ctx context.Context, c client.Client, key client.ObjectKey, now time.Time) (staged bool, err error) {
	if key.Namespace == "" || key.Name == "" {
		return false, fmt.Errorf("%w: Secret %q needs a namespace and a name", ErrInvalidRotatePasswordArgs, key.String())
	}
	secret, err := getLive(ctx, c, key, "stage a password in")
	if err != nil {
		return false, err
	}
	if len(secret.Data[names.DatabasePasswordDataKey]) == 0 {
		return false, fmt.Errorf("stage a password in Secret %s: data key %q: %w", key, names.DatabasePasswordDataKey, ErrNoPassword)
	}
	if len(secret.Data[DatabasePasswordStagedKey]) > 0 {
		return false, nil
	}
	password, err := randomPassword(stagedPasswordLength)
	if err != nil {
		return false, fmt.Errorf("stage a password in Secret %s: %w", key, err)
	}
	secret.Data[DatabasePasswordStagedKey] = password
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[PasswordStagedAtAnnotation] = now.UTC().Format(time.RFC3339)
	if err := c.Update(ctx, secret); err != nil {
		return false, fmt.Errorf("update Secret %s with a staged password: %w", key, err)
	}
	return true, nil
}

// RotatePasswordArgs returns the arguments of the password rotation CronJob's
// container: ["rotate-password", "--secret", "<namespace>/<name>"].
func RotatePasswordArgs(key client.ObjectKey) []string {
	return []string{RotatePasswordCommand, "--secret", key.String()}
}

// RunRotatePassword is the [RotatePasswordCommand]: it parses args, the arguments after
// the command's name (--secret <namespace>/<name>, required), and calls
// [RotatePassword] once at the current time. It logs whether it staged a password
// (never the password) through the logger of ctx. Errors about the arguments wrap
// [ErrInvalidRotatePasswordArgs] and name the flag.
func RunRotatePassword(ctx context.Context, c client.Client, args []string) error {
	fs := flag.NewFlagSet(RotatePasswordCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	secret := fs.String("secret", "", "the database password Secret, <namespace>/<name>")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w: %w", RotatePasswordCommand, ErrInvalidRotatePasswordArgs, err)
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %w: %s", RotatePasswordCommand, ErrInvalidRotatePasswordArgs, fmt.Sprintf(format, a...))
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	key, ok := parseSecretFlag(*secret)
	if !ok {
		return fail("--secret %q: want <namespace>/<name>", *secret)
	}
	staged, err := RotatePassword(ctx, c, key, time.Now())
	if err != nil {
		return fmt.Errorf("%s: %w", RotatePasswordCommand, err)
	}
	logger := log.FromContext(ctx).WithValues("secret", key.String())
	if staged {
		logger.Info("staged a new database password")
	} else {
		logger.Info("database password not staged: a staged password is still waiting for the operator")
	}
	return nil
}

// randomPassword returns n random alphanumeric characters from crypto/rand.
func randomPassword(n int) ([]byte, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range out {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return nil, fmt.Errorf("reading random bytes: %w", err)
		}
		out[i] = alphabet[v.Int64()]
	}
	return out, nil
}
