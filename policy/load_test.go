package policy_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/policy"
)

func createConfigMap(t *testing.T, ns string, data map[string]string, binary map[string][]byte) types.NamespacedName {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "identity-policy", Namespace: ns},
		Data:       data,
		BinaryData: binary,
	}
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}
	return client.ObjectKeyFromObject(cm)
}

func TestLoadPolicyFromConfigMap(t *testing.T) {
	tests := map[string]struct {
		doc  string
		want map[string]string
	}{
		"rules": {
			doc: "\"identity:get_user\": \"role:admin\"\n" +
				"admin_required: role:admin or is_admin:1\n" +
				"owner: 'user_id:%(user_id)s'\n",
			want: map[string]string{
				"identity:get_user": "role:admin",
				"admin_required":    "role:admin or is_admin:1",
				"owner":             "user_id:%(user_id)s",
			},
		},
		"empty document":   {doc: "", want: map[string]string{}},
		"only comments":    {doc: "# no overrides\n", want: map[string]string{}},
		"null document":    {doc: "~\n", want: map[string]string{}},
		"null rule allows": {doc: "identity:get_user:\n", want: map[string]string{"identity:get_user": ""}},
		"json document":    {doc: `{"a": "role:a", "b": ""}`, want: map[string]string{"a": "role:a", "b": ""}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			key := createConfigMap(t, env.Namespace(t), map[string]string{policy.PolicyKey: tc.doc, "other": "x"}, nil)
			got, err := policy.LoadPolicyFromConfigMap(context.Background(), env.Client, key)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !maps.Equal(got, tc.want) {
				t.Errorf("rules = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestLoadPolicyFromConfigMapRendered(t *testing.T) {
	rules := benchRules(200)
	rules["odd \"name\"\n"] = "role:a\u2028or\u0085role:b"
	doc, err := policy.Render(rules)
	if err != nil {
		t.Fatal(err)
	}
	key := createConfigMap(t, env.Namespace(t), map[string]string{policy.PolicyKey: doc}, nil)
	got, err := policy.LoadPolicyFromConfigMap(context.Background(), env.Client, key)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, rules) {
		t.Error("Render -> ConfigMap -> LoadPolicyFromConfigMap lost or changed rules")
	}
}

func TestLoadPolicyFromConfigMapNotFound(t *testing.T) {
	key := types.NamespacedName{Namespace: env.Namespace(t), Name: "identity-policy"}
	_, err := policy.LoadPolicyFromConfigMap(context.Background(), env.Client, key)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("error = %v, want NotFound", err)
	}
	if !strings.Contains(err.Error(), key.String()) {
		t.Errorf("error %q does not name %s", err, key)
	}
}

func TestLoadPolicyFromConfigMapKeyMissing(t *testing.T) {
	tests := map[string]struct {
		data   map[string]string
		binary map[string][]byte
	}{
		"other keys":       {data: map[string]string{"identity.conf": "[DEFAULT]\n"}},
		"no data":          {},
		"only binary data": {binary: map[string][]byte{policy.PolicyKey: []byte("a: role:a\n")}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			key := createConfigMap(t, env.Namespace(t), tc.data, tc.binary)
			rules, err := policy.LoadPolicyFromConfigMap(context.Background(), env.Client, key)
			if rules != nil {
				t.Errorf("rules = %v, want nil", rules)
			}
			want := fmt.Sprintf(`ConfigMap %s/%s does not contain key "policy.yaml"`, key.Namespace, key.Name)
			if err == nil || err.Error() != want {
				t.Fatalf("error = %v, want %q", err, want)
			}
			if !errors.Is(err, policy.ErrPolicyKeyMissing) {
				t.Error("error does not match ErrPolicyKeyMissing")
			}
		})
	}
}

func TestLoadPolicyFromConfigMapInvalidYAML(t *testing.T) {
	tests := map[string]struct {
		doc       string
		wantCause string
		yamlError bool
	}{
		"unclosed flow":  {doc: "a: [role:a\n", wantCause: "error converting YAML to JSON", yamlError: true},
		"bad indent":     {doc: "a: role:a\n  b: role:b\n", wantCause: "error converting YAML to JSON", yamlError: true},
		"sequence":       {doc: "- role:a\n", wantCause: "cannot unmarshal array", yamlError: true},
		"duplicate rule": {doc: "a: role:a\na: role:b\n", wantCause: `key "a" already set in map`, yamlError: true},
		"number value":   {doc: "a: 1\n", wantCause: `rule "a" has a number value, not a string (quote the expression)`},
		"boolean value":  {doc: "a: true\n", wantCause: `rule "a" has a boolean value, not a string`},
		"mapping value":  {doc: "a:\n  b: c\n", wantCause: `rule "a" has a mapping value, not a string`},
		"sequence value": {doc: "a: [role:a]\n", wantCause: `rule "a" has a sequence value, not a string`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			key := createConfigMap(t, env.Namespace(t), map[string]string{policy.PolicyKey: tc.doc}, nil)
			rules, err := policy.LoadPolicyFromConfigMap(context.Background(), env.Client, key)
			if rules != nil {
				t.Errorf("rules = %v, want nil", rules)
			}
			if err == nil {
				t.Fatal("no error")
			}
			prefix := fmt.Sprintf("parsing policy.yaml from ConfigMap %s/%s: ", key.Namespace, key.Name)
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.wantCause) {
				t.Errorf("error = %q, want %q followed by %q", err, prefix, tc.wantCause)
			}
			if !errors.Is(err, policy.ErrInvalidPolicyYAML) {
				t.Error("error does not match ErrInvalidPolicyYAML")
			}
			if tc.yamlError {
				// The parser's error is wrapped next to ErrInvalidPolicyYAML.
				var wrapped interface{ Unwrap() []error }
				if !errors.As(err, &wrapped) {
					t.Fatalf("error %q (%T) wraps no list of errors, want ErrInvalidPolicyYAML and the YAML parser's error", err, err)
				}
				if errs := wrapped.Unwrap(); len(errs) != 2 || errs[1] == nil || !strings.Contains(errs[1].Error(), tc.wantCause) {
					t.Errorf("wrapped errors = %v, want ErrInvalidPolicyYAML and the YAML parser's error containing %q", errs, tc.wantCause)
				}
			}
		})
	}
}

func TestLoadPolicyFromConfigMapAPIError(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "identity-policy", errors.New("no RBAC"))
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(env.Scheme).Build(), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return forbidden
		},
	})
	key := types.NamespacedName{Namespace: "openstack", Name: "identity-policy"}
	_, err := policy.LoadPolicyFromConfigMap(context.Background(), c, key)
	if !apierrors.IsForbidden(err) || !errors.Is(err, forbidden) {
		t.Fatalf("error = %v, want the wrapped Forbidden", err)
	}
	if want := "getting ConfigMap openstack/identity-policy: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want prefix %q", err, want)
	}
}

// TestLoadPolicyFromConfigMapBoundsErrors: a hostile policy.yaml (every rule given
// twice, a 64 KiB rule name) yields an error of bounded size, whatever its own size.
func TestLoadPolicyFromConfigMapBoundsErrors(t *testing.T) {
	var dup strings.Builder
	for i := 0; dup.Len() < 900<<10; i++ {
		fmt.Fprintf(&dup, "rule%06d: role:a\nrule%06d: role:b\n", i, i)
	}
	longName := strings.Repeat("n", 64<<10)
	tests := map[string]struct {
		doc, wantCause string
	}{
		"every rule given twice": {doc: dup.String(), wantCause: `key "rule000000" already set in map`},
		"long rule name with a number value": {
			doc: "? " + longName + "\n: 1\n", wantCause: `rule "` + longName[:policy.MaxExcerpt] + `…" has a number value`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			key := createConfigMap(t, env.Namespace(t), map[string]string{policy.PolicyKey: tc.doc}, nil)
			_, err := policy.LoadPolicyFromConfigMap(context.Background(), env.Client, key)
			if !errors.Is(err, policy.ErrInvalidPolicyYAML) {
				t.Fatalf("error = %.200v, want ErrInvalidPolicyYAML", err)
			}
			prefix := fmt.Sprintf("parsing policy.yaml from ConfigMap %s/%s: ", key.Namespace, key.Name)
			if max := len(prefix) + policy.MaxParserMessage + len("…"); len(err.Error()) > max {
				t.Errorf("error is %d bytes, want at most %d: %.300s...", len(err.Error()), max, err)
			}
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.wantCause) {
				t.Errorf("error = %.300q, want %q followed by %q", err, prefix, tc.wantCause)
			}
		})
	}
}
