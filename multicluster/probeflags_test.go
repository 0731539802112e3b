package multicluster_test

import (
	"flag"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// The health check's flags set ProbeBase and open Outbound; without them both keep
// their defaults (the CR's endpoint, the safe policy); a base URL that is not an
// absolute http(s) URL, or that carries user info, a query or a fragment, fails the
// parse naming the flag.
func TestReconcilerOptionsBindFlags(t *testing.T) {
	tests := map[string]struct {
		args            []string
		wantBase        string
		wantAllow       []netip.Prefix
		wantErr, secret string
	}{
		"no flag": {},
		"stand-in": {args: []string{"--health-check-base-url", "http://127.0.0.1:8080", "--outbound-allow", "127.0.0.1"},
			wantBase: "http://127.0.0.1:8080", wantAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		"https proxy path": {args: []string{"--health-check-base-url=https://proxy.example/horizon"}, wantBase: "https://proxy.example/horizon"},
		"relative":         {args: []string{"--health-check-base-url", "/horizon"}, wantErr: multicluster.HealthCheckBaseURLFlag},
		"other scheme":     {args: []string{"--health-check-base-url", "file:///etc/passwd"}, wantErr: multicluster.HealthCheckBaseURLFlag},
		"no host":          {args: []string{"--health-check-base-url", "http://"}, wantErr: multicluster.HealthCheckBaseURLFlag},
		"user info":        {args: []string{"--health-check-base-url", "http://admin:hunter2@proxy.example"}, wantErr: multicluster.HealthCheckBaseURLFlag},
		"query":            {args: []string{"--health-check-base-url", "http://proxy.example/?token=hunter2"}, wantErr: multicluster.HealthCheckBaseURLFlag},
		"fragment":         {args: []string{"--health-check-base-url", "http://proxy.example/#x"}, wantErr: multicluster.HealthCheckBaseURLFlag},
		"bad allow":        {args: []string{"--outbound-allow", "http://127.0.0.1"}, wantErr: outbound.AllowFlag},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := multicluster.ReconcilerOptions[*Gadget]{FieldManager: "f"}
			fs := flag.NewFlagSet("operator", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.BindFlags(fs)
			err := fs.Parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse %q: %v, want an error naming %s", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []any{o.ProbeBase, o.Outbound.AllowCIDRs}
			want := []any{tc.wantBase, tc.wantAllow}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("ProbeBase, Outbound.AllowCIDRs: -want, +got:\n%s", diff)
			}
		})
	}
}
