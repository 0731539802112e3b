package keystoneapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/c5c3/reconciler-sdk/outbound"
)

// The sentinels every error of this package wraps; see the package documentation.
var (
	// ErrInvalidOptions: New was given an endpoint or credentials it cannot use.
	ErrInvalidOptions = errors.New("keystoneapi: invalid options")
	// ErrUnauthorized: Keystone answered 401; the admin credentials are refused.
	ErrUnauthorized = errors.New("keystoneapi: unauthorized")
	// ErrForbidden: Keystone answered 403; the admin account may not do this.
	ErrForbidden = errors.New("keystoneapi: forbidden")
	// ErrNotFound: no object of that name exists.
	ErrNotFound = errors.New("keystoneapi: not found")
	// ErrConflict: Keystone answered 409; an object of that name exists already.
	ErrConflict = errors.New("keystoneapi: conflict")
	// ErrInvalidRequest: Keystone answered 400 or another 4xx status not listed here.
	ErrInvalidRequest = errors.New("keystoneapi: invalid request")
	// ErrUnavailable: Keystone did not answer (a transport error, a timeout, or a
	// destination the outbound policy refuses: then the error also wraps
	// outbound.ErrRefused) or answered with a 5xx status.
	ErrUnavailable = errors.New("keystoneapi: Keystone unavailable")
	// ErrUnexpectedResponse: an answer that is not Keystone's: a successful
	// authentication without X-Subject-Token, a body that does not decode, a status
	// the call does not expect, a redirect (never followed: the error also wraps
	// outbound.ErrRedirectRefused).
	ErrUnexpectedResponse = errors.New("keystoneapi: unexpected response")
)

// DefaultTimeout bounds each request of a Client whose Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxBody bounds the bytes read from an answer.
const maxBody = 1 << 20

// redacted replaces a secret in an error text.
const redacted = "[redacted]"

// Credentials are the account a Client authenticates as: a user of a domain and a
// project of a domain the token is scoped to, as keystone-manage bootstrap creates
// them (admin in Default, project admin in Default).
type Credentials struct {
	// Username is the user's name. Required.
	Username string
	// Password is the user's password. Required.
	Password string
	// UserDomainName is the domain of the user; empty means "Default".
	UserDomainName string
	// ProjectName is the project the token is scoped to. Required.
	ProjectName string
	// ProjectDomainName is the domain of the project; empty means "Default".
	ProjectDomainName string
}

// Options configure New. The zero value dials through outbound.DefaultPolicy with
// http.DefaultTransport's settings and DefaultTimeout.
type Options struct {
	// Policy says where the client may connect; the zero value is outbound's default,
	// which refuses loopback, link-local, unspecified and multicast addresses after
	// name resolution. Tests against an httptest server allow loopback explicitly
	// (Policy{AllowCIDRs: outbound.LoopbackPrefixes}).
	Policy outbound.Policy
	// Transport is the base of the client's transport (its TLS settings, such as the
	// CA a private Keystone's certificate is verified with, its timeouts and pool
	// sizes); nil means http.DefaultTransport. It is never used as is: the client
	// uses a clone that dials through Policy and uses no proxy
	// (outbound.Policy.GuardTransport).
	Transport *http.Transport
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration
}

// Domain is a Keystone domain.
type Domain struct {
	// ID is the ID Keystone gave the domain; empty in a create request.
	ID string `json:"id,omitempty"`
	// Name is the domain's name, unique in Keystone.
	Name string `json:"name"`
	// Description of the domain.
	Description string `json:"description,omitempty"`
	// Enabled reports whether users of the domain may authenticate.
	Enabled bool `json:"enabled"`
}

// Client calls one Keystone's v3 API as one account. It is not safe for concurrent
// use: build one per reconcile pass.
type Client struct {
	base  *url.URL
	creds Credentials
	http  *http.Client
	token string
}

// New returns a Client of the Keystone whose API answers at endpoint (for example
// http://keystone.openstack.svc:5000; a trailing "/v3" is accepted). It sends no
// request. An endpoint that is not an http or https URL with a host, or that carries
// user information, query or fragment, and credentials without username, password or
// project, return an error wrapping ErrInvalidOptions that quotes neither the password
// nor the endpoint's user information, query or fragment (outbound.Redact).
//
// The Client follows no redirect (outbound.RefuseRedirects): every request carries the
// password or a token, and a redirect would hand them to wherever it points. Its
// connections go through opts.Policy.
func New(endpoint string, creds Credentials, opts Options) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		// url.Error quotes the input, user information and query included.
		return nil, fmt.Errorf("%w: endpoint is not a URL", ErrInvalidOptions)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: endpoint %q is not an http or https URL", ErrInvalidOptions, outbound.Redact(u))
	case u.Host == "":
		return nil, fmt.Errorf("%w: endpoint %q has no host", ErrInvalidOptions, outbound.Redact(u))
	case u.User != nil:
		return nil, fmt.Errorf("%w: endpoint %q carries user information; the credentials go in Credentials", ErrInvalidOptions, outbound.Redact(u))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("%w: endpoint %q has a query or fragment", ErrInvalidOptions, outbound.Redact(u))
	}
	var missing []string
	if creds.Username == "" {
		missing = append(missing, "Username")
	}
	if creds.Password == "" {
		missing = append(missing, "Password")
	}
	if creds.ProjectName == "" {
		missing = append(missing, "ProjectName")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: empty Credentials fields: %s", ErrInvalidOptions, strings.Join(missing, ", "))
	}
	if creds.UserDomainName == "" {
		creds.UserDomainName = "Default"
	}
	if creds.ProjectDomainName == "" {
		creds.ProjectDomainName = "Default"
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v3")
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	hc := &http.Client{Transport: opts.Policy.GuardTransport(base), CheckRedirect: outbound.RefuseRedirects, Timeout: timeout}
	return &Client{base: u, creds: creds, http: hc}, nil
}

// Authenticate asks Keystone for a token scoped to the credentials' project
// (POST /v3/auth/tokens with the password method) and keeps it for the calls that
// follow. The other calls authenticate on their own when no token is kept; call it to
// check the credentials alone.
func (c *Client) Authenticate(ctx context.Context) error {
	type named struct {
		Name string `json:"name"`
	}
	type scoped struct {
		Name   string `json:"name"`
		Domain named  `json:"domain"`
	}
	var body struct {
		Auth struct {
			Identity struct {
				Methods  []string `json:"methods"`
				Password struct {
					User struct {
						Name     string `json:"name"`
						Domain   named  `json:"domain"`
						Password string `json:"password"`
					} `json:"user"`
				} `json:"password"`
			} `json:"identity"`
			Scope struct {
				Project scoped `json:"project"`
			} `json:"scope"`
		} `json:"auth"`
	}
	body.Auth.Identity.Methods = []string{"password"}
	u := &body.Auth.Identity.Password.User
	u.Name, u.Domain.Name, u.Password = c.creds.Username, c.creds.UserDomainName, c.creds.Password
	body.Auth.Scope.Project = scoped{Name: c.creds.ProjectName, Domain: named{c.creds.ProjectDomainName}}

	c.token = ""
	resp, err := c.do(ctx, http.MethodPost, "/v3/auth/tokens", nil, body, http.StatusCreated)
	if err != nil {
		return err
	}
	token := resp.header.Get("X-Subject-Token")
	if token == "" {
		return c.errorf(http.MethodPost, "/v3/auth/tokens", ErrUnexpectedResponse, "answer %d has no X-Subject-Token header", resp.status)
	}
	c.token = token
	return nil
}

// GetDomainByName returns the domain named name (GET /v3/domains?name=<name>), or an
// error wrapping ErrNotFound when Keystone holds none.
func (c *Client) GetDomainByName(ctx context.Context, name string) (*Domain, error) {
	const path = "/v3/domains"
	var out struct {
		Domains []Domain `json:"domains"`
	}
	if err := c.authed(ctx, http.MethodGet, path, url.Values{"name": {name}}, nil, http.StatusOK, &out); err != nil {
		return nil, err
	}
	for i := range out.Domains {
		if out.Domains[i].Name == name {
			return &out.Domains[i], nil
		}
	}
	return nil, c.errorf(http.MethodGet, path, ErrNotFound, "no domain named %q", name)
}

// CreateDomain creates the domain d (POST /v3/domains; d.ID is ignored) and returns it
// as Keystone stored it, with its ID. A domain of that name that exists already is an
// error wrapping ErrConflict.
func (c *Client) CreateDomain(ctx context.Context, d Domain) (*Domain, error) {
	d.ID = ""
	var out struct {
		Domain Domain `json:"domain"`
	}
	in := struct {
		Domain Domain `json:"domain"`
	}{d}
	if err := c.authed(ctx, http.MethodPost, "/v3/domains", nil, in, http.StatusCreated, &out); err != nil {
		return nil, err
	}
	if out.Domain.ID == "" {
		return nil, c.errorf(http.MethodPost, "/v3/domains", ErrUnexpectedResponse, "the created domain has no id")
	}
	return &out.Domain, nil
}

// authed sends a call with the kept token, authenticating first when none is kept and
// once more when a kept token is refused, and decodes the answer into out (nil: the
// answer's body is not read, as of a 204).
func (c *Client) authed(ctx context.Context, method, path string, query url.Values, in any, want int, out any) error {
	fresh := false
	if c.token == "" {
		if err := c.Authenticate(ctx); err != nil {
			return err
		}
		fresh = true
	}
	resp, err := c.do(ctx, method, path, query, in, want)
	if errors.Is(err, ErrUnauthorized) && !fresh {
		if err := c.Authenticate(ctx); err != nil {
			return err
		}
		resp, err = c.do(ctx, method, path, query, in, want)
	}
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.body, out); err != nil {
		return c.errorf(method, path, ErrUnexpectedResponse, "decoding the answer: %s", err.Error())
	}
	return nil
}

// response is what do keeps of an answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request and maps an answer other than want to an error.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in any, want int) (*response, error) {
	u := *c.base
	u.Path += path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, c.errorf(method, path, ErrInvalidRequest, "encoding the request: %s", err.Error())
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, c.errorf(method, path, ErrInvalidRequest, "building the request: %s", err.Error())
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// *url.Error quotes the whole URL, query included: keep its cause only (the
		// error names the call by method and path).
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		sentinel := ErrUnavailable
		if errors.Is(err, outbound.ErrRedirectRefused) {
			sentinel = ErrUnexpectedResponse
		}
		return nil, c.wrapf(method, path, sentinel, err, "%s", err.Error())
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, c.errorf(method, path, ErrUnavailable, "reading the answer: %s", err.Error())
	}
	if resp.StatusCode == want {
		return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
	}
	var sentinel error
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		sentinel = ErrUnauthorized
	case resp.StatusCode == http.StatusForbidden:
		sentinel = ErrForbidden
	case resp.StatusCode == http.StatusNotFound:
		sentinel = ErrNotFound
	case resp.StatusCode == http.StatusConflict:
		sentinel = ErrConflict
	case resp.StatusCode >= 500:
		sentinel = ErrUnavailable
	case resp.StatusCode >= 400:
		sentinel = ErrInvalidRequest
	default:
		sentinel = ErrUnexpectedResponse
	}
	return nil, c.errorf(method, path, sentinel, "answer %d%s", resp.StatusCode, keystoneMessage(body))
}

// keystoneMessage returns ": <message>" of Keystone's error document
// {"error": {"message": ...}}, or "" when body is none.
func keystoneMessage(body []byte) string {
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.Error.Message == "" {
		return ""
	}
	msg := doc.Error.Message
	if len(msg) > 256 {
		msg = msg[:256] + "..."
	}
	return ": " + msg
}

// errorf returns "keystoneapi: <method> <path>: <text>" wrapping sentinel, with the
// password and the token redacted from text.
func (c *Client) errorf(method, path string, sentinel error, format string, args ...any) error {
	return c.wrapf(method, path, sentinel, nil, format, args...)
}

// wrapf is errorf for an error that also wraps cause (nil: none).
func (c *Client) wrapf(method, path string, sentinel, cause error, format string, args ...any) error {
	text := fmt.Sprintf(format, args...)
	for _, secret := range []string{c.creds.Password, c.token, url.QueryEscape(c.creds.Password)} {
		if secret != "" {
			text = strings.ReplaceAll(text, secret, redacted)
		}
	}
	return &Error{Method: method, Path: path, text: text, sentinel: sentinel, cause: cause}
}

// Error is the error of a call: the request and what went wrong. It wraps one of the
// package's sentinels and, for a call that got no answer, the transport's error (for
// example an *outbound.RefusedError or *outbound.RedirectError, for errors.As).
type Error struct {
	// Method and Path name the call ("POST", "/v3/domains").
	Method, Path string
	text         string
	sentinel     error
	cause        error
}

// Error returns "<sentinel>: <method> <path>: <what went wrong>". It carries no URL
// query, no password and no token.
func (e *Error) Error() string {
	return e.sentinel.Error() + ": " + e.Method + " " + e.Path + ": " + e.text
}

// Unwrap returns the sentinel and, when there is one, the transport's error.
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}
