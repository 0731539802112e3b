package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// errCallsPerPass: --external-calls-per-pass is not a whole number of at least 1.
var errCallsPerPass = errors.New("want a whole number of at least 1")

// bindOutbound binds the flags of the engine's external calls on fs: where they may
// connect (EngineOptions.Outbound) and how many one pass makes
// (EngineOptions.ExternalCallsPerPass).
func (o *options) bindOutbound(fs *flag.FlagSet) {
	outbound.BindFlags(fs, &o.engine.Outbound, "external calls")
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
