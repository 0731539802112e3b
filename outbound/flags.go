package outbound

import (
	"flag"
	"strings"
)

// Flag names [BindFlags] registers.
const (
	// AllowFlag adds to [Policy.AllowCIDRs] and [Policy.AllowHosts] what
	// [ParseAllowList] reads from its comma-separated value; it may be repeated.
	AllowFlag = "outbound-allow"
	// AllowCrossHostRedirectsFlag sets [Policy.AllowCrossHostRedirects].
	AllowCrossHostRedirectsFlag = "outbound-allow-cross-host-redirects"
)

// BindFlags binds the administrator's doors of p on fs, for every binary that makes
// outbound requests on behalf of what others wrote: --outbound-allow LIST (CIDRs,
// addresses, host names; repeated or comma-separated, appended to p's allow lists) and
// --outbound-allow-cross-host-redirects. Without them p stays as it was, by default the
// safe zero [Policy]. A value [ParseAllowList] refuses fails the parse naming the flag
// and the entry. what says whose requests they are ("health checks", "external calls")
// in the flags' usage.
func BindFlags(fs *flag.FlagSet, p *Policy, what string) {
	fs.Func(AllowFlag,
		"destinations "+what+" may reach although they are loopback, link-local, unspecified or multicast: "+
			"CIDRs (169.254.0.0/16), addresses (127.0.0.1) or host names (registry.internal, whatever they resolve to); "+
			"repeat the flag or give a comma-separated list (default: none)",
		func(v string) error {
			cidrs, hosts, err := ParseAllowList(strings.Split(v, ","))
			if err != nil {
				return err
			}
			p.AllowCIDRs = append(p.AllowCIDRs, cidrs...)
			p.AllowHosts = append(p.AllowHosts, hosts...)
			return nil
		})
	fs.BoolVar(&p.AllowCrossHostRedirects, AllowCrossHostRedirectsFlag, p.AllowCrossHostRedirects,
		"let "+what+" follow redirects to another host or from https to http (default: not followed)")
}
