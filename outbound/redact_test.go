package outbound_test

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/outbound"
)

func TestRedact(t *testing.T) {
	cases := map[string]struct {
		raw, want string
	}{
		"user info and query": {raw: "https://admin:s3cret@api.example.com:8443/v3/auth?token=abc#frag", want: "https://api.example.com:8443/v3/auth"},
		"plain":               {raw: "http://svc.ns.svc:5000/", want: "http://svc.ns.svc:5000/"},
		"force query":         {raw: "http://h/p?", want: "http://h/p"},
		"invalid":             {raw: "http://user:pa ss@h/%zz?token=abc", want: "<invalid URL>"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, outbound.RedactString(tc.raw)); diff != "" {
				t.Error(diff)
			}
		})
	}
	if outbound.Redact(nil) != "" {
		t.Error("Redact(nil) is not empty")
	}
}

func TestParseErrorDropsTheInput(t *testing.T) {
	_, err := url.Parse("http://user:s3cret@h/%zz?token=abc") //nolint:staticcheck // an invalid URL on purpose
	if err == nil {
		t.Fatal("no parse error")
	}
	got := outbound.ParseError(err).Error()
	if strings.Contains(got, "s3cret") || strings.Contains(got, "token") {
		t.Errorf("ParseError kept the input: %q", got)
	}
	plain := errors.New("other")
	if got := outbound.ParseError(plain); got != plain { //nolint:errorlint // the very same error must come back
		t.Error("another error was changed")
	}
}

func TestParseAllowList(t *testing.T) {
	cidrs, hosts, err := outbound.ParseAllowList([]string{" 10.0.0.0/8", "127.0.0.1", "::1", "Registry.Internal.", "", "169.254.1.7/16"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("169.254.0.0/16")}
	if diff := cmp.Diff(want, cidrs, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"registry.internal"}, hosts); diff != "" {
		t.Error(diff)
	}
	for _, bad := range []string{"http://registry", "registry:5000", "*.local", "a..b", "-x.y"} {
		if _, _, err := outbound.ParseAllowList([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: want an error naming it, got %v", bad, err)
		}
	}
}
