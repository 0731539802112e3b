package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// errCallsPerPass: --external-calls-per-pass is not a whole number of at least 1.
var errCallsPerPass = errors.New("want a whole number of at least 1")

// bindOutbound binds the flags of the engine's external calls on fs: where they may
// connect (EngineOptions.Outbound) and how many one pass makes
// (EngineOptions.ExternalCallsPerPass).
func (o *options) bindOutbound(fs *flag.FlagSet) {
	fs.Func("outbound-allow",
		"destinations external calls may reach although they are loopback, link-local, unspecified or multicast: "+
			"CIDRs (169.254.0.0/16), addresses (127.0.0.1) or host names (registry.internal, whatever they resolve to); "+
			"repeat the flag or give a comma-separated list (default: none)",
		func(v string) error {
			cidrs, hosts, err := outbound.ParseAllowList(strings.Split(v, ","))
			if err != nil {
				return err
			}
			o.engine.Outbound.AllowCIDRs = append(o.engine.Outbound.AllowCIDRs, cidrs...)
			o.engine.Outbound.AllowHosts = append(o.engine.Outbound.AllowHosts, hosts...)
			return nil
		})
	fs.BoolVar(&o.engine.Outbound.AllowCrossHostRedirects, "outbound-allow-cross-host-redirects", o.engine.Outbound.AllowCrossHostRedirects,
		"let external calls follow redirects to another host or from https to http (default: not followed)")
	fs.Func("external-calls-per-pass",
		fmt.Sprintf("the most external calls one pass over a custom resource makes; past it the pass fails (default %d)", katalog.DefaultExternalCallsPerPass),
		func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return errCallsPerPass
			}
			o.engine.ExternalCallsPerPass = n
			return nil
		})
}
