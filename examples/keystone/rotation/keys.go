package rotation

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

// RotateKeysCommand is the operator's subcommand that rotates a key repository once
// ([RunRotateKeys]); the key rotation CronJobs run the operator image with it.
const RotateKeysCommand = "rotate-keys"

// RotatedAtAnnotation is the annotation on a key repository Secret that records, in
// RFC 3339, when the repository was last rotated (or generated, restored or adopted).
// [RotateKeys] rotates at most once per interval after it.
const RotatedAtAnnotation = "keystone.openstack.c5c3.io/rotated-at"

// ErrInvalidRotateKeysArgs is wrapped by the errors of [RunRotateKeys] and
// [RotateKeys] about their arguments; the error names the flag or the parameter.
var ErrInvalidRotateKeysArgs = errors.New("invalid rotate-keys arguments")

// ErrInvalidRotatedAt is wrapped by the error of [RotateKeys] for a Secret whose
// [RotatedAtAnnotation] is not an RFC 3339 time: nothing is rotated, since when the
// last rotation happened is not known.
var ErrInvalidRotatedAt = errors.New("invalid rotated-at annotation")

// RotateKeys rotates the key repository in the Secret at key once (keys.Repository.Rotate
// with maxActiveKeys), unless [RotatedAtAnnotation] says it was rotated less than
// interval before now; it then sets that annotation to now and reports whether it
// rotated. One read, one guarded Update (see the package documentation). It refuses,
// without writing, an invalid repository (keys.ErrInvalidRepository), a Secret being
// deleted (apply.ErrBeingDeleted), an unparsable annotation ([ErrInvalidRotatedAt]) and,
// before any request, bad arguments ([ErrInvalidRotateKeysArgs]). The client needs
// [SecretRules] on that Secret.
func RotateKeys(ctx context.Context, c client.Client, key client.ObjectKey, maxActiveKeys int,
	interval time.Duration, now time.Time) (rotated bool, err error) {
	switch {
	case key.Namespace == "" || key.Name == "":
		return false, fmt.Errorf("%w: Secret %q needs a namespace and a name", ErrInvalidRotateKeysArgs, key.String())
	case maxActiveKeys < keys.MinActiveKeys:
		return false, fmt.Errorf("%w: maxActiveKeys %d is below %d", ErrInvalidRotateKeysArgs, maxActiveKeys, keys.MinActiveKeys)
	case interval <= 0:
		return false, fmt.Errorf("%w: interval %s is not positive", ErrInvalidRotateKeysArgs, interval)
	}
	secret, err := getLive(ctx, c, key, "rotate keys in")
	if err != nil {
		return false, err
	}
	repo, err := keys.FromSecretData(secret.Data)
	if err != nil {
		return false, fmt.Errorf("rotate keys in Secret %s: %w", key, err)
	}
	if v, ok := secret.Annotations[RotatedAtAnnotation]; ok {
		last, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return false, fmt.Errorf("rotate keys in Secret %s: annotation %s %q: %w: want an RFC 3339 time",
				key, RotatedAtAnnotation, v, ErrInvalidRotatedAt)
		}
		if now.Before(last.Add(interval)) {
			return false, nil
		}
	}
	next, err := repo.Rotate(nil, maxActiveKeys)
	if err != nil {
		return false, fmt.Errorf("rotate keys in Secret %s: %w", key, err)
	}
	secret.Data = next.SecretData()
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[RotatedAtAnnotation] = now.UTC().Format(time.RFC3339)
	if err := c.Update(ctx, secret); err != nil {
		return false, fmt.Errorf("update Secret %s with the rotated repository: %w", key, err)
	}
	return true, nil
}

// RotateKeysArgs returns the arguments of the rotation CronJob's container: the
// [RotateKeysCommand] followed by its flags for the Secret at key, for example
// ["rotate-keys", "--secret", "openstack/keystone-fernet-keys", "--max-active-keys",
// "3", "--interval", "168h"].
func RotateKeysArgs(key client.ObjectKey, maxActiveKeys int, interval time.Duration) []string {
	return []string{RotateKeysCommand, "--secret", key.String(), "--max-active-keys", strconv.Itoa(maxActiveKeys),
		"--interval", FormatInterval(interval)}
}

// RunRotateKeys is the [RotateKeysCommand]: it parses args, the arguments after the
// command's name (--secret <namespace>/<name>, --max-active-keys N, --interval D, all
// required), and calls [RotateKeys] once at now() (time.Now when now is nil). It logs
// whether it rotated through the logger of ctx. Errors about the arguments wrap
// [ErrInvalidRotateKeysArgs] and name the flag.
func RunRotateKeys(ctx context.Context, c client.Client, args []string, now func() time.Time) error {
	fs := flag.NewFlagSet(RotateKeysCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	secret := fs.String("secret", "", "the key repository Secret, <namespace>/<name>")
	maxActive := fs.Int("max-active-keys", 0, "the number of keys kept, at least 3")
	interval := fs.Duration("interval", 0, "the minimum time between two rotations")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w: %w", RotateKeysCommand, ErrInvalidRotateKeysArgs, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %w: %s", RotateKeysCommand, ErrInvalidRotateKeysArgs, fmt.Sprintf(format, a...))
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q", fs.Arg(0))
	case !set["secret"]:
		return fail("--secret is required")
	case !set["max-active-keys"]:
		return fail("--max-active-keys is required")
	case !set["interval"]:
		return fail("--interval is required")
	}
	key, ok := parseSecretFlag(*secret)
	if !ok {
		return fail("--secret %q: want <namespace>/<name>", *secret)
	}
	if *maxActive < keys.MinActiveKeys {
		return fail("--max-active-keys %d: below %d", *maxActive, keys.MinActiveKeys)
	}
	if *interval <= 0 {
		return fail("--interval %s: not positive", *interval)
	}
	if now == nil {
		now = time.Now
	}
	rotated, err := RotateKeys(ctx, c, key, *maxActive, *interval, now())
	if err != nil {
		return fmt.Errorf("%s: %w", RotateKeysCommand, err)
	}
	logger := log.FromContext(ctx).WithValues("secret", key.String())
	if rotated {
		logger.Info("rotated key repository", "maxActiveKeys", *maxActive)
	} else {
		logger.Info("key repository not rotated: the last rotation is less than the interval ago", "interval", interval.String())
	}
	return nil
}

// SecretRules are the RBAC rules a rotation pod's ServiceAccount needs for the Secrets
// secretNames of its namespace: get and update on those Secrets alone, by name. Grant
// them with a Role in the Keystone's namespace ([Access] does, with [PolicyRules]).
func SecretRules(secretNames ...string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: secretNames,
		Verbs: []string{"get", "update"},
	}}
}

// FormatInterval writes d as time.Duration.String does, without trailing zero units
// ("168h", "1h30m", "90s"): the --interval of [RotateKeysArgs], which time.ParseDuration
// reads back as d.
func FormatInterval(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// getLive reads the Secret at key for one guarded Update; one being deleted is refused
// with apply.ErrBeingDeleted, the error naming what the caller was about to do.
func getLive(ctx context.Context, c client.Client, key client.ObjectKey, doing string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("get Secret %s: %w", key, err)
	}
	if secret.DeletionTimestamp != nil {
		return nil, fmt.Errorf("%s Secret %s: %w", doing, key, apply.ErrBeingDeleted)
	}
	return secret, nil
}

// parseSecretFlag reads the --secret flag of both commands, <namespace>/<name>.
func parseSecretFlag(v string) (client.ObjectKey, bool) {
	ns, name, ok := strings.Cut(v, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return client.ObjectKey{}, false
	}
	return client.ObjectKey{Namespace: ns, Name: name}, true
}
