package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/secrets"
)

func createSecret(t testing.TB, ns, name string, data map[string][]byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

func TestIsSecretReady(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	createSecret(t, ns, "creds", map[string][]byte{"username": []byte("admin"), "password": []byte("s3cr3t"), "empty": {}})
	createSecret(t, ns, "bare", nil)

	cases := map[string]struct {
		name string
		keys []string
		want bool
	}{
		"not found":                       {name: "absent"},
		"not found with keys":             {name: "absent", keys: []string{"password"}},
		"exists, no keys asked":           {name: "creds", want: true},
		"Secret without data, no keys":    {name: "bare", want: true},
		"Secret without data, key asked":  {name: "bare", keys: []string{"password"}},
		"all keys present":                {name: "creds", keys: []string{"username", "password"}, want: true},
		"one key missing":                 {name: "creds", keys: []string{"username", "token"}},
		"key present with an empty value": {name: "creds", keys: []string{"empty"}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := secrets.IsSecretReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: tc.name}, tc.keys...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("= %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGetSecretValue(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const value = "pa55-w0rd:with/bytes\n"
	createSecret(t, ns, "creds", map[string][]byte{"password": []byte(value)})

	got, err := secrets.GetSecretValue(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "creds"}, "password")
	if err != nil || got != value {
		t.Fatalf("= %q, %v; want the stored value", got, err)
	}

	cases := map[string]struct {
		name, dataKey string
		check         func(error) bool
		wantText      string
	}{
		"key missing": {
			name: "creds", dataKey: "token",
			check:    func(err error) bool { return errors.Is(err, secrets.ErrKeyNotFound) },
			wantText: `key not found in Secret: key "token" in Secret ` + ns + "/creds",
		},
		"Secret missing": {
			name: "absent", dataKey: "password",
			check:    apierrors.IsNotFound,
			wantText: "get Secret " + ns + "/absent: ",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := secrets.GetSecretValue(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: tc.name}, tc.dataKey)
			if got != "" || !tc.check(err) {
				t.Fatalf("= %q, %v", got, err)
			}
			if tc.name == "creds" && err.Error() != tc.wantText {
				t.Errorf("error = %q, want exactly %q", err, tc.wantText)
			}
			if !strings.HasPrefix(err.Error(), tc.wantText) {
				t.Errorf("error %q does not start with %q", err, tc.wantText)
			}
			if strings.Contains(err.Error(), value) {
				t.Errorf("error %q carries the secret value", err)
			}
		})
	}
}

func TestSecretReadAPIErrors(t *testing.T) {
	ctx := context.Background()
	failing := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		},
	})
	key := client.ObjectKey{Namespace: "identity", Name: "creds"}
	if ok, err := secrets.IsSecretReady(ctx, failing, key, "password"); ok || !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "Secret identity/creds") {
		t.Errorf("IsSecretReady = %v, %v; want false and the wrapped API error naming the Secret", ok, err)
	}
	if v, err := secrets.GetSecretValue(ctx, failing, key, "password"); v != "" || !apierrors.IsInternalError(err) || errors.Is(err, secrets.ErrKeyNotFound) {
		t.Errorf("GetSecretValue = %q, %v; want the wrapped API error, not ErrKeyNotFound", v, err)
	}
}
