package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrRefused reports a destination the [Policy] does not allow; see [RefusedError].
var ErrRefused = errors.New("outbound: destination refused")

// LoopbackPrefixes are the loopback ranges, 127.0.0.0/8 and ::1/128. Tests that call
// httptest servers allow them explicitly: Policy{AllowCIDRs: LoopbackPrefixes}.
var LoopbackPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// Policy says where outbound HTTP calls may go. The zero value is the safe default
// described in the package documentation; each field opens one door.
type Policy struct {
	// AllowCIDRs admits destinations inside the refused ranges (loopback, link-local,
	// unspecified, multicast) when the dialled address lies in one of these prefixes.
	AllowCIDRs []netip.Prefix
	// AllowHosts admits host names, compared exactly and case-insensitively with the
	// URL's host (without port), whatever addresses they resolve to.
	AllowHosts []string
	// AllowCrossHostRedirects follows redirects to other host names and from https to
	// http. Off by default.
	AllowCrossHostRedirects bool
}

// DefaultPolicy returns the zero Policy: refused ranges refused, no cross-host redirect.
func DefaultPolicy() Policy { return Policy{} }

// RefusedError is a connection the Policy refused before it was made.
type RefusedError struct {
	// Host is the host name or address of the URL, without port.
	Host string
	// Addr is the address the connection would have reached.
	Addr netip.Addr
	// Range names the refused range: "loopback", "link-local", "unspecified" or
	// "multicast".
	Range string
}

// Error names the host, the address and its range.
func (e *RefusedError) Error() string {
	if e.Host == "" || e.Host == e.Addr.String() {
		return fmt.Sprintf("destination %s refused: %s addresses are not allowed by the outbound policy", e.Addr, e.Range)
	}
	return fmt.Sprintf("destination %s (%s) refused: %s addresses are not allowed by the outbound policy", e.Host, e.Addr, e.Range)
}

// Unwrap returns ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Check answers whether a connection to addr, dialled for host (the URL's host name or
// address, without port), is allowed: nil, or a *RefusedError.
func (p Policy) Check(host string, addr netip.Addr) error {
	addr = addr.Unmap().WithZone("")
	if p.hostAllowed(host) {
		return nil
	}
	r := refusedRange(addr)
	if r == "" {
		return nil
	}
	for _, pfx := range p.AllowCIDRs {
		if pfx.Contains(addr) {
			return nil
		}
	}
	return &RefusedError{Host: host, Addr: addr, Range: r}
}

func (p Policy) hostAllowed(host string) bool {
	host = strings.TrimSuffix(host, ".")
	for _, h := range p.AllowHosts {
		if strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			return true
		}
	}
	return false
}

// refusedRange names the refused range addr lies in, or "".
func refusedRange(addr netip.Addr) string {
	switch {
	case !addr.IsValid():
		return "invalid"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsLinkLocalUnicast():
		return "link-local"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsMulticast():
		return "multicast"
	}
	return ""
}

// DialContext returns a dial function for an http.Transport that resolves as d does and
// refuses, on each address it is about to connect to, what the Policy refuses. d is
// copied; nil means a dialer with a 30 s timeout and keep-alive.
func (p Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	base := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if d != nil {
		base = *d
	}
	next := base.Control
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		dd := base
		dd.ControlContext = nil
		dd.Control = func(network, resolved string, c syscall.RawConn) error {
			h, _, err := net.SplitHostPort(resolved)
			if err != nil {
				h = resolved
			}
			addr, err := netip.ParseAddr(h)
			if err != nil {
				return fmt.Errorf("%w: dialled address %q is not an IP address", ErrRefused, h)
			}
			if err := p.Check(host, addr); err != nil {
				return err
			}
			if next != nil {
				return next(network, resolved, c)
			}
			return nil
		}
		return dd.DialContext(ctx, network, address)
	}
}

// Transport returns a clone of http.DefaultTransport that dials through the Policy and
// uses no proxy.
func (p Policy) Transport() *http.Transport {
	return p.GuardTransport(http.DefaultTransport.(*http.Transport))
}

// GuardTransport returns a clone of t (its TLS settings, timeouts and pool sizes kept)
// that dials through the Policy: its dial functions are replaced by
// [Policy.DialContext], and its Proxy is cleared.
func (p Policy) GuardTransport(t *http.Transport) *http.Transport {
	c := t.Clone()
	c.Proxy = nil
	c.Dial = nil    //nolint:staticcheck // cleared so that it cannot bypass the policy
	c.DialTLS = nil //nolint:staticcheck // cleared so that it cannot bypass the policy
	c.DialTLSContext = nil
	c.DialContext = p.DialContext(nil)
	return c
}

// Client returns a client with [Policy.Transport], [Policy.CheckRedirect] and the given
// overall timeout (zero means none: bound each call with its context instead).
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(), CheckRedirect: p.CheckRedirect(nil), Timeout: timeout}
}
