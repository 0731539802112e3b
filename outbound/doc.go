// Package outbound is the SDK's one policy for HTTP calls an operator makes on behalf of
// what others wrote: a health probe of an endpoint in a custom resource, a Katalog's
// external call, an example operator's API client.
//
// Whoever writes the URL (a CR author, a Katalog author, whoever answers on the endpoint)
// must not be able to point the operator's requests, its tokens and its request bodies at
// the operator pod itself or at the node. So the zero [Policy], which is also
// [DefaultPolicy], is safe without any option set:
//
//   - Refused destinations. A connection is refused when the address it would reach is
//     loopback (127.0.0.0/8, ::1), link-local (169.254.0.0/16 including cloud metadata
//     services, fe80::/10), unspecified (0.0.0.0, ::) or multicast. The check runs on the
//     address being dialled, after name resolution, so "localhost" and any DNS name that
//     resolves into those ranges are refused too; an IPv4-mapped IPv6 address is judged
//     as the IPv4 address it maps. The error wraps [ErrRefused] as a [*RefusedError] that
//     names the host and the refused address, never the URL.
//   - Redirects. A redirect to another host name than the first request's, or from https
//     to http, is not followed: [Policy.CheckRedirect] answers a [*RedirectError] wrapping
//     [ErrRedirectRefused]. Redirects on the same host are followed up to 10 times.
//     [RefuseRedirects] follows none, for clients that send credentials with every call.
//   - No proxy. Clients built here ignore HTTP(S)_PROXY: a proxy would resolve and dial
//     on the operator's behalf, out of the policy's reach.
//
// The operator administrator opens a door explicitly: [Policy.AllowCIDRs] admits
// destinations inside refused ranges (a registry on a link-local address, a test server on
// loopback: tests use [LoopbackPrefixes]), [Policy.AllowHosts] admits host names whatever
// they resolve to, and [Policy.AllowCrossHostRedirects] follows redirects to other hosts.
// [ParseAllowList] reads both allow lists from one command-line flag value.
//
// Messages and errors about a call name it with [Redact] or [RedactString]: scheme, host
// and path, never the user info, query or fragment, which may carry credentials.
package outbound
