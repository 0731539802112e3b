package rotation_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
)

// repositorySecret is a Secret holding a fresh repository, last rotated at rotatedAt.
func repositorySecret(t testing.TB, rotatedAt time.Time) *corev1.Secret {
	t.Helper()
	repo, err := keys.Setup(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone-fernet-keys", Namespace: "openstack",
			Annotations: map[string]string{rotation.RotatedAtAnnotation: rotatedAt.Format(time.RFC3339)}},
		Data: repo.SecretData(),
	}
}

// noCalls is a client that fails the test on any request.
func noCalls(t *testing.T) client.Client {
	fail := func() error { t.Error("a request was made"); return errors.New("no request expected") }
	return interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return fail()
		},
		Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error { return fail() },
	})
}

// TestRunRotateKeysArguments: every missing or malformed argument is refused, naming
// the flag, before any request.
func TestRunRotateKeysArguments(t *testing.T) {
	ok := []string{"--secret", "openstack/keystone-fernet-keys", "--max-active-keys", "3", "--interval", "168h"}
	with := func(flag, value string) []string {
		args := slices.Clone(ok)
		i := slices.Index(args, flag)
		if value == "" {
			return slices.Delete(args, i, i+2)
		}
		args[i+1] = value
		return args
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no --secret":                  {with("--secret", ""), "--secret is required"},
		"no --max-active-keys":         {with("--max-active-keys", ""), "--max-active-keys is required"},
		"no --interval":                {with("--interval", ""), "--interval is required"},
		"secret without /":             {with("--secret", "keystone-fernet-keys"), `--secret "keystone-fernet-keys"`},
		"secret with two /":            {with("--secret", "a/b/c"), `--secret "a/b/c"`},
		"secret without name":          {with("--secret", "openstack/"), `--secret "openstack/"`},
		"max-active-keys 2":            {with("--max-active-keys", "2"), "--max-active-keys 2: below 3"},
		"max-active-keys not a number": {with("--max-active-keys", "three"), "-max-active-keys"},
		"interval 0":                   {with("--interval", "0s"), "--interval 0s: not positive"},
		"interval not a duration":      {with("--interval", "weekly"), "-interval"},
		"unknown flag":                 {append(slices.Clone(ok), "--force"), "-force"},
		"positional argument":          {append(slices.Clone(ok), "extra"), `unexpected argument "extra"`},
		"the command's own name":       {append([]string{rotation.RotateKeysCommand}, ok...), `unexpected argument "rotate-keys"`},
	} {
		t.Run(name, func(t *testing.T) {
			err := rotation.RunRotateKeys(context.Background(), noCalls(t), tc.args, nil)
			if !errors.Is(err, rotation.ErrInvalidRotateKeysArgs) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RunRotateKeys(%q) = %v, want ErrInvalidRotateKeysArgs naming %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestRotateKeysArgsRoundTrip: the CronJob's arguments parse back to the same Secret,
// maxActiveKeys and interval, with the interval written without trailing zero units.
func TestRotateKeysArgsRoundTrip(t *testing.T) {
	key := client.ObjectKey{Namespace: "openstack", Name: "keystone-credential-keys"}
	for d, text := range map[time.Duration]string{
		168 * time.Hour: "168h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 45 * time.Second: "45s",
		time.Hour + time.Second: "1h0m1s", 24*time.Hour + 500*time.Millisecond: "24h0m0.5s",
	} {
		args := rotation.RotateKeysArgs(key, 4, d)
		want := []string{"rotate-keys", "--secret", "openstack/keystone-credential-keys", "--max-active-keys", "4", "--interval", text}
		if !slices.Equal(args, want) {
			t.Errorf("RotateKeysArgs(%s) = %q, want %q", d, args, want)
		}
		if parsed, err := time.ParseDuration(args[6]); err != nil || parsed != d {
			t.Errorf("%q parses to %s, %v; want %s", args[6], parsed, err, d)
		}
	}
}

// TestRunRotateKeysRotatesOnce: run twice at the same time, the command rotates once.
func TestRunRotateKeysRotatesOnce(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s := repositorySecret(t, t0)
	c := fake.NewClientBuilder().WithObjects(s).Build()
	args := rotation.RotateKeysArgs(client.ObjectKeyFromObject(s), 3, 24*time.Hour)[1:]
	now := func() time.Time { return t0.Add(25 * time.Hour) }
	for range 2 {
		if err := rotation.RunRotateKeys(context.Background(), c, args, now); err != nil {
			t.Fatal(err)
		}
	}
	got := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(s), got); err != nil {
		t.Fatal(err)
	}
	repo, err := keys.FromSecretData(got.Data)
	if err != nil {
		t.Fatal(err)
	}
	if repo.Primary() != 2 || string(repo[2]) != string(s.Data["0"]) {
		t.Errorf("after two runs: %s, want one rotation (primary 2, the former staged key)", repo)
	}
}

// ExampleRotateKeys rotates a repository whose last rotation is a day and an hour ago,
// with a daily interval: the first call rotates, the second, at the same time, does not.
func ExampleRotateKeys() {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	repo, _ := keys.Setup(nil)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone-fernet-keys", Namespace: "openstack",
			Annotations: map[string]string{rotation.RotatedAtAnnotation: t0.Format(time.RFC3339)}},
		Data: repo.SecretData(),
	}
	c := fake.NewClientBuilder().WithObjects(secret).Build() // in the CronJob's pod: a client of the cluster
	key := client.ObjectKeyFromObject(secret)
	now := t0.Add(25 * time.Hour)

	rotated, err := rotation.RotateKeys(context.Background(), c, key, 3, 24*time.Hour, now)
	fmt.Println("first call rotated:", rotated, err)
	rotated, err = rotation.RotateKeys(context.Background(), c, key, 3, 24*time.Hour, now)
	fmt.Println("second call rotated:", rotated, err)

	_ = c.Get(context.Background(), key, secret)
	rotatedRepo, _ := keys.FromSecretData(secret.Data)
	fmt.Println(rotatedRepo)
	fmt.Println("rotated at:", secret.Annotations[rotation.RotatedAtAnnotation])
	// Output:
	// first call rotated: true <nil>
	// second call rotated: false <nil>
	// key repository: staged 0, primary 2, secondaries [1]
	// rotated at: 2025-03-02T13:00:00Z
}
