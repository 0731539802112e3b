package outbound

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// Redact renders u for messages, logs and errors: scheme, host and path, without user
// info, query or fragment, which may carry credentials.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// RedactString is [Redact] for a raw URL. A URL that does not parse is rendered as
// "<invalid URL>": the parser's error would quote the whole input.
func RedactString(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	return Redact(u)
}

// ParseError strips the input from a url.Parse error: the *url.Error quotes the whole URL,
// user info and query included; the cause alone is kept. Other errors pass unchanged.
func ParseError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// ParseAllowList reads an administrator's allow list: each entry is a CIDR prefix
// ("10.0.0.0/8"), a single address ("127.0.0.1", admitted as a /32 or /128) or a host
// name ("registry.internal"). Empty entries are skipped; an entry that is none of these
// (a URL, a host with a port, a wildcard) is an error naming it.
func ParseAllowList(entries []string) (allowCIDRs []netip.Prefix, allowHosts []string, err error) {
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(e); err == nil {
			allowCIDRs = append(allowCIDRs, pfx.Masked())
			continue
		}
		if addr, err := netip.ParseAddr(e); err == nil {
			addr = addr.Unmap()
			allowCIDRs = append(allowCIDRs, netip.PrefixFrom(addr, addr.BitLen()))
			continue
		}
		if !isHostName(e) {
			return nil, nil, fmt.Errorf("outbound allow list: %q is neither a CIDR, an IP address nor a host name", e)
		}
		allowHosts = append(allowHosts, strings.ToLower(strings.TrimSuffix(e, ".")))
	}
	return allowCIDRs, allowHosts, nil
}

// isHostName accepts DNS names: labels of letters, digits and '-', dot separated.
func isHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' {
				return false
			}
		}
	}
	return true
}
