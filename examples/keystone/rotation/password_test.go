package rotation_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
)

// RotatePassword stages a password under "staged" once, never touches "password", and
// refuses a Secret without a password or with a malformed key; RunRotatePassword checks
// its flags.
func TestRotatePassword(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "keystone-db-password"}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns},
		Data: map[string][]byte{names.DatabasePasswordDataKey: []byte("in-use-password")}}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	staged, err := rotation.RotatePassword(ctx, env.Client, key, now)
	if err != nil || !staged {
		t.Fatalf("first run: staged %v, err %v; want a staged password", staged, err)
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	first := string(s.Data[rotation.DatabasePasswordStagedKey])
	if len(first) != 32 || first == "in-use-password" {
		t.Errorf("staged password has %d characters; want 32 new ones", len(first))
	}
	if got := string(s.Data[names.DatabasePasswordDataKey]); got != "in-use-password" {
		t.Errorf("the password in use was changed")
	}
	if got := s.Annotations[rotation.PasswordStagedAtAnnotation]; got != "2026-01-01T03:00:00Z" {
		t.Errorf("staged-at annotation %q", got)
	}
	staged, err = rotation.RotatePassword(ctx, env.Client, key, now.Add(time.Hour))
	if err != nil || staged {
		t.Fatalf("second run: staged %v, err %v; want nothing staged", staged, err)
	}
	if err := env.Client.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data[rotation.DatabasePasswordStagedKey]) != first {
		t.Error("a second run replaced the staged password")
	}

	empty := client.ObjectKey{Namespace: ns, Name: "no-password"}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: empty.Name, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rotation.RotatePassword(ctx, env.Client, empty, now); !errors.Is(err, rotation.ErrNoPassword) ||
		!strings.Contains(err.Error(), empty.String()) {
		t.Errorf("Secret without a password: %v; want ErrNoPassword naming the Secret", err)
	}
	if _, err := rotation.RotatePassword(ctx, env.Client, client.ObjectKey{Name: "x"}, now); !errors.Is(err, rotation.ErrInvalidRotatePasswordArgs) {
		t.Errorf("key without namespace: %v", err)
	}
	for _, args := range [][]string{nil, {"--secret", "noslash"}, {"--secret", ns + "/a/b"}, {"--secret", key.String(), "extra"}, {"--nope"}} {
		if err := rotation.RunRotatePassword(ctx, env.Client, args); !errors.Is(err, rotation.ErrInvalidRotatePasswordArgs) {
			t.Errorf("RunRotatePassword %q: %v; want ErrInvalidRotatePasswordArgs", args, err)
		}
	}
	if err := rotation.RunRotatePassword(ctx, env.Client, rotation.RotatePasswordArgs(key)[1:]); err != nil {
		t.Errorf("RunRotatePassword with RotatePasswordArgs: %v", err)
	}
	if err := rotation.RunRotatePassword(ctx, env.Client, rotation.RotatePasswordArgs(empty)[1:]); !errors.Is(err, rotation.ErrNoPassword) {
		t.Errorf("RunRotatePassword on a Secret without a password: %v", err)
	}
}
