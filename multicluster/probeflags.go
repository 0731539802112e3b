package multicluster

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/c5c3/reconciler-sdk/outbound"
)

// HealthCheckBaseURLFlag is the flag [ReconcilerOptions.BindFlags] binds to
// [ReconcilerOptions.ProbeBase].
const HealthCheckBaseURLFlag = "health-check-base-url"

// errProbeBase: a ProbeBase that is not an absolute http or https URL without user info,
// query or fragment.
var errProbeBase = errors.New("want an absolute http or https URL with a host and without user info, query or fragment")

// BindFlags binds the administrator's flags of the health check on fs:
// --outbound-allow and --outbound-allow-cross-host-redirects open o.Outbound
// ([outbound.BindFlags]); --health-check-base-url URL sets o.ProbeBase, so that every
// health check requests its path below URL (a proxy, a port-forward, a stand-in)
// instead of below the endpoint the CR publishes. The probes still dial through
// o.Outbound: a loopback URL needs --outbound-allow 127.0.0.1 as well. A value that is
// not an absolute http or https URL without user info, query or fragment fails the
// parse naming the flag. Without the flags o stays as it was.
func (o *ReconcilerOptions[T]) BindFlags(fs *flag.FlagSet) {
	outbound.BindFlags(fs, &o.Outbound, "health checks")
	fs.Func(HealthCheckBaseURLFlag,
		"request every custom resource's health check below this http(s) URL instead of below the endpoint it publishes "+
			"(for an operator outside the cluster network); the outbound policy still applies (default: the published endpoint)",
		func(v string) error {
			if err := checkProbeBase(v); err != nil {
				return err
			}
			o.ProbeBase = v
			return nil
		})
}

// checkProbeBase is nil when base is an absolute http or https URL with a host and
// without user info, query or fragment; otherwise it is [errProbeBase].
func checkProbeBase(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(base, "#") {
		return errProbeBase
	}
	return nil
}

// probeBase is o.ProbeBase checked, without a trailing slash (the health check's path
// starts with one); the error names the field.
func (o *ReconcilerOptions[T]) probeBase() (string, error) {
	if o.ProbeBase == "" {
		return "", nil
	}
	if err := checkProbeBase(o.ProbeBase); err != nil {
		return "", fmt.Errorf("%w: Options.ProbeBase: %w", ErrInvalidOptions, err)
	}
	return strings.TrimSuffix(o.ProbeBase, "/"), nil
}
