package main

import (
	"flag"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// The external-call flags fill EngineOptions.Outbound and ExternalCallsPerPass; without
// them the engine gets the safe defaults (the zero outbound.Policy, 16 calls a pass).
func TestOutboundFlags(t *testing.T) {
	parse := func(args ...string) (options, error) {
		fs := flag.NewFlagSet("katalog", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return parseFlags(fs, append([]string{"--katalog", "k.yaml"}, args...))
	}
	o, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(outbound.DefaultPolicy(), o.engine.Outbound, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("default Outbound (-want +got):\n%s", diff)
	}
	if o.engine.ExternalCallsPerPass != katalog.DefaultExternalCallsPerPass {
		t.Errorf("default ExternalCallsPerPass %d, want %d", o.engine.ExternalCallsPerPass, katalog.DefaultExternalCallsPerPass)
	}

	o, err = parse("--outbound-allow", "169.254.0.0/16,registry.internal", "--outbound-allow=127.0.0.1",
		"--outbound-allow-cross-host-redirects", "--external-calls-per-pass", "3")
	if err != nil {
		t.Fatal(err)
	}
	want := outbound.Policy{
		AllowCIDRs:              []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("127.0.0.1/32")},
		AllowHosts:              []string{"registry.internal"},
		AllowCrossHostRedirects: true,
	}
	if diff := cmp.Diff(want, o.engine.Outbound, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("Outbound (-want +got):\n%s", diff)
	}
	if o.engine.ExternalCallsPerPass != 3 {
		t.Errorf("ExternalCallsPerPass %d, want 3", o.engine.ExternalCallsPerPass)
	}

	for _, bad := range [][]string{ // the allow list's own errors: outbound.TestBindFlags
		{"--outbound-allow", "http://registry.internal"},
		{"--external-calls-per-pass", "0"},
		{"--external-calls-per-pass", "many"},
	} {
		if _, err := parse(bad...); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "--")) {
			t.Errorf("%v: err %v, want an error naming the flag", bad, err)
		}
	}
}
