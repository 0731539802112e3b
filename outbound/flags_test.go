package outbound_test

import (
	"flag"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/outbound"
)

// The flags fill the allow lists and the redirect door of the Policy they are bound to;
// without them it stays the safe default; a bad entry fails the parse naming the flag.
func TestBindFlags(t *testing.T) {
	prefixes := cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })
	tests := map[string]struct {
		args    []string
		want    outbound.Policy
		wantErr string
	}{
		"no flag": {want: outbound.DefaultPolicy()},
		"repeated and comma-separated": {
			args: []string{"--outbound-allow", "169.254.0.0/16,registry.internal", "--outbound-allow=127.0.0.1", "--outbound-allow-cross-host-redirects"},
			want: outbound.Policy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("127.0.0.1/32")},
				AllowHosts: []string{"registry.internal"}, AllowCrossHostRedirects: true},
		},
		"a URL":       {args: []string{"--outbound-allow", "http://registry.internal"}, wantErr: "outbound-allow"},
		"a host:port": {args: []string{"--outbound-allow", "registry.internal:5000"}, wantErr: "registry.internal:5000"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var p outbound.Policy
			fs := flag.NewFlagSet("operator", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			outbound.BindFlags(fs, &p, "health checks")
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
			if diff := cmp.Diff(tc.want, p, prefixes); diff != "" {
				t.Errorf("Policy: -want, +got:\n%s", diff)
			}
		})
	}
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	outbound.BindFlags(fs, &outbound.Policy{}, "health checks")
	if u := fs.Lookup(outbound.AllowFlag).Usage; !strings.HasPrefix(u, "destinations health checks may reach") {
		t.Errorf("usage %q: want it to say whose requests the flag opens", u)
	}
}
