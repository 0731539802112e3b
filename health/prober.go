package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Condition reasons of a probe (see "Outcomes" in the package documentation).
const (
	// ReasonHealthy (True): the endpoint answered 2xx and passed Options.Validate.
	ReasonHealthy = "APIHealthy"
	// ReasonUnhealthy (False): the endpoint answered 2xx but Options.Validate rejected
	// the answer.
	ReasonUnhealthy = "APIUnhealthy"
	// ReasonEndpointNotReady (False): no URL yet, or its host does not resolve.
	ReasonEndpointNotReady = "EndpointNotReady"
	// ReasonTimeout (False): no complete answer within Options.Timeout.
	ReasonTimeout = "HealthCheckTimeout"
	// ReasonConnectionFailed (False): no HTTP answer (refused, reset, TLS, DNS failure).
	ReasonConnectionFailed = "ConnectionFailed"
	// ReasonCheckFailed (False): the endpoint answered with a status outside 2xx.
	ReasonCheckFailed = "HealthCheckFailed"
)

// Intervals and bounds of a probe.
const (
	// DefaultTTL is how long a passing probe is reused: 30 s.
	DefaultTTL = 30 * time.Second
	// RetryInterval is the requeue after a failing probe (health-check retry): 10 s.
	RetryInterval = 10 * time.Second
	// DefaultTimeout bounds one probe (connect, headers and body): 5 s.
	DefaultTimeout = 5 * time.Second
	// DefaultMaxBodyBytes is how much of the body Options.Validate sees: 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
)

// Bounds on condition messages.
const (
	// MaxQuotedLength bounds, in bytes, every piece of text a message quotes that the
	// prober does not write itself: the probed URL, the server's status line, the host
	// of a refused redirect, a transport error and the error of Options.Validate. A
	// longer piece is cut on a rune boundary and ends in "…".
	MaxQuotedLength = 512
	// MaxMessageLength is the longest message the API server accepts in a
	// metav1.Condition; no Outcome message or condition message is longer.
	MaxMessageLength = 32768
)

// Sentinel errors.
var (
	// ErrInvalidURL reports a URL that is not an absolute http(s) URL with a host.
	ErrInvalidURL = errors.New("invalid health-check URL")
	// ErrNoConditionType reports an empty condition type passed to [Prober.Flow].
	ErrNoConditionType = errors.New("health: condition type is empty")
	// ErrNilObject reports a nil object passed to [Prober.Flow].
	ErrNilObject = errors.New("health: object is nil")
)

// Options configure a [Prober]. Start from [DefaultOptions].
type Options struct {
	// Timeout bounds one probe: connecting, the response headers and reading the body.
	Timeout time.Duration
	// TTL is how long a passing probe is reused; zero or negative disables the cache.
	TTL time.Duration
	// Client sends the requests; nil means a client of its own whose transport dials
	// through Outbound and ignores the HTTP(S)_PROXY environment (a cluster-local URL
	// must not go through a proxy). Set it for HTTPS endpoints that need the cluster CA;
	// its Transport then decides where connections go, so build it with
	// Outbound.GuardTransport to keep the destination rule. The redirect rule of
	// Outbound applies to every client.
	Client *http.Client
	// Outbound is the policy of the probe's requests (see package outbound): by default
	// loopback, link-local, unspecified and multicast destinations are refused (the
	// probe fails with ConnectionFailed naming the refused address) and a redirect to
	// another host, or from https to http, is not followed (HealthCheckFailed).
	Outbound outbound.Policy
	// Validate, if set, judges a 2xx answer: an error makes the probe fail with
	// APIUnhealthy and the error text in the message (keep secrets out of it). body
	// holds at most MaxBodyBytes bytes.
	Validate func(status int, header http.Header, body []byte) error
	// MaxBodyBytes caps the body read for Validate; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Now returns the current time; nil means time.Now. Tests inject a fake clock.
	Now func() time.Time
	// AllowCrossHostRedirects lets a probe follow a redirect to another host name than
	// the probed URL's, as Outbound.AllowCrossHostRedirects does; either one set is
	// enough. By default such a redirect is not followed: the probe fails with
	// HealthCheckFailed, so that whoever answers on the endpoint cannot point the
	// operator's requests at any other host. Redirects on the same host name are
	// followed, up to 10, and the Client's own CheckRedirect, if any, is still consulted.
	//
	// Deprecated: set Outbound.AllowCrossHostRedirects.
	AllowCrossHostRedirects bool
}

// DefaultOptions returns a 5 s timeout, the 30 s TTL, no validation and the wall clock.
func DefaultOptions() Options {
	return Options{Timeout: DefaultTimeout, TTL: DefaultTTL, MaxBodyBytes: DefaultMaxBodyBytes, Now: time.Now}
}

// Outcome is the result of one probe.
type Outcome struct {
	// Healthy is true for ReasonHealthy.
	Healthy bool
	// Reason is one of the Reason constants.
	Reason string
	// Message says what was probed and what happened.
	Message string
	// Cached is true when the outcome was reused from the TTL cache without a request.
	Cached bool
}

// Condition returns the outcome as a condition of type condType, without
// observedGeneration.
func (o Outcome) Condition(condType string) metav1.Condition {
	status := metav1.ConditionFalse
	if o.Healthy {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: condType, Status: status, Reason: o.Reason, Message: clip(o.Message, MaxMessageLength)}
}

// cacheKey identifies a passing probe: whose it is and what was probed.
type cacheKey struct {
	uid types.UID
	url string
}

type cacheEntry struct {
	expires time.Time
	message string
}

// Prober probes endpoints and caches passing probes. It is safe for concurrent use;
// share one per controller.
type Prober struct {
	client   *http.Client
	timeout  time.Duration
	ttl      time.Duration
	validate func(int, http.Header, []byte) error
	maxBody  int64
	now      func() time.Time

	mu        sync.Mutex
	passed    map[cacheKey]cacheEntry
	lastSweep time.Time
}

// NewProber returns a Prober with opts; a zero Timeout means DefaultTimeout.
func NewProber(opts Options) *Prober {
	p := &Prober{
		client: opts.Client, timeout: opts.Timeout, ttl: opts.TTL, validate: opts.Validate,
		maxBody: opts.MaxBodyBytes, now: opts.Now, passed: map[cacheKey]cacheEntry{},
	}
	policy := opts.Outbound
	policy.AllowCrossHostRedirects = policy.AllowCrossHostRedirects || opts.AllowCrossHostRedirects
	if p.client == nil {
		p.client = &http.Client{Transport: policy.Transport()}
	}
	// A copy: the caller's client is not changed.
	c := *p.client
	c.CheckRedirect = policy.CheckRedirect(p.client.CheckRedirect)
	p.client = &c
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.maxBody <= 0 {
		p.maxBody = DefaultMaxBodyBytes
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

// Flow probes rawURL for obj (cached by its UID, see [Prober.Probe]) in the
// [reconcile.Outcome] shape: condType True when healthy, False with a requeue after
// [RetryInterval] otherwise; a zero outcome with the error for a nil obj, an empty
// condType, an invalid URL or a cancelled context.
func (p *Prober) Flow(ctx context.Context, obj client.Object, condType, rawURL string) (reconcile.Outcome, error) {
	if rv := reflect.ValueOf(obj); obj == nil || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return reconcile.Outcome{}, ErrNilObject
	}
	return p.flow(ctx, obj.GetUID(), rawURL, condType)
}

// Check is [Prober.Flow] for the object uid, answering (condition, result, error).
//
// Deprecated: use [Prober.Flow].
func (p *Prober) Check(ctx context.Context, uid types.UID, rawURL, condType string) (metav1.Condition, ctrl.Result, error) {
	out, err := p.flow(ctx, uid, rawURL, condType)
	return out.Condition, out.Result, err
}

func (p *Prober) flow(ctx context.Context, uid types.UID, rawURL, condType string) (reconcile.Outcome, error) {
	if condType == "" {
		return reconcile.Outcome{}, ErrNoConditionType
	}
	out, err := p.Probe(ctx, uid, rawURL)
	if err != nil {
		return reconcile.Outcome{}, err
	}
	if !out.Healthy {
		return reconcile.Requeue(out.Condition(condType), RetryInterval), nil
	}
	return reconcile.Done(out.Condition(condType)), nil
}

// Probe returns the outcome of probing rawURL for the object uid: from the cache when a
// probe of the same uid and URL passed within the TTL, otherwise from one GET. It
// returns an error only for an invalid URL ([ErrInvalidURL]) and when ctx ends before
// the probe does (the context's error); every answer of the endpoint, or the lack of
// one, is an Outcome.
func (p *Prober) Probe(ctx context.Context, uid types.UID, rawURL string) (Outcome, error) {
	if rawURL == "" {
		return Outcome{Reason: ReasonEndpointNotReady, Message: "no endpoint to probe yet"}, nil
	}
	key := cacheKey{uid: uid, url: rawURL}
	now := p.now()
	if msg, ok := p.lookup(key, now); ok {
		return Outcome{Healthy: true, Reason: ReasonHealthy, Message: msg, Cached: true}, nil
	}
	u, err := parse(rawURL)
	if err != nil {
		return Outcome{}, err
	}
	out, err := p.get(ctx, u)
	if err != nil {
		return Outcome{}, err
	}
	p.store(key, out, p.now())
	return out, nil
}

// Forget drops the cached probes of uid, e.g. when the object is deleted.
func (p *Prober) Forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.passed {
		if k.uid == uid {
			delete(p.passed, k)
		}
	}
}

func (p *Prober) lookup(key cacheKey, now time.Time) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.passed[key]
	if !ok || !now.Before(e.expires) {
		return "", false
	}
	return e.message, true
}

// store caches a passing outcome and drops the entry of a failing one. At most once per
// TTL it also sweeps expired entries, so keys of deleted objects and old URLs do not
// accumulate.
func (p *Prober) store(key cacheKey, out Outcome, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !out.Healthy || p.ttl <= 0 {
		delete(p.passed, key)
		return
	}
	p.passed[key] = cacheEntry{expires: now.Add(p.ttl), message: out.Message}
	if now.Sub(p.lastSweep) >= p.ttl {
		for k, e := range p.passed {
			if !now.Before(e.expires) {
				delete(p.passed, k)
			}
		}
		p.lastSweep = now
	}
}

// clip returns s as valid UTF-8 without control characters (each replaced by a space),
// cut on a rune boundary to at most n bytes, ending in "…" when it was cut.
func clip(s string, n int) string {
	clean := strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexFunc(clean, unicode.IsControl) >= 0 {
		clean = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, clean)
	}
	if len(clean) <= n {
		return clean
	}
	const ellipsis = "…"
	cut := max(n-len(ellipsis), 0)
	for cut > 0 && !utf8.RuneStart(clean[cut]) {
		cut--
	}
	return clean[:cut] + ellipsis
}

// quote bounds a piece of text the prober does not write itself (see MaxQuotedLength).
func quote(s string) string { return clip(s, MaxQuotedLength) }

// parse accepts absolute http(s) URLs with a host.
func parse(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the input, which may hold a password: report only the cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %s: want an absolute http or https URL with a host", ErrInvalidURL, quote(redact(u)))
	}
	return u, nil
}

// redact renders u for messages and errors without its secrets: the password of the
// user info and every query value (a token or signature in ?token=... is as secret as a
// password) read xxxxx; the query keys stay, so the URL remains recognisable.
func redact(u *url.URL) string {
	if u.RawQuery == "" && u.Fragment == "" {
		return u.Redacted()
	}
	c := *u
	if c.RawQuery != "" {
		q, err := url.ParseQuery(c.RawQuery)
		if err != nil {
			c.RawQuery = "xxxxx"
		} else {
			for k := range q {
				q[k] = []string{"xxxxx"}
			}
			c.RawQuery = q.Encode()
		}
	}
	c.Fragment, c.RawFragment = "", ""
	return c.Redacted()
}

// get sends the GET and classifies what happened.
func (p *Prober) get(ctx context.Context, u *url.URL) (Outcome, error) {
	target := "GET " + quote(redact(u))
	reqCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Outcome{}, fmt.Errorf("%w: %s: %w", ErrInvalidURL, quote(redact(u)), err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return p.failure(ctx, target, err)
	}
	defer func() { _ = resp.Body.Close() }()

	body, readErr := io.ReadAll(io.LimitReader(resp.Body, p.maxBody))
	if readErr != nil {
		return p.failure(ctx, target+" (reading the body)", readErr)
	}
	status := quote(resp.Status)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Outcome{Reason: ReasonCheckFailed, Message: fmt.Sprintf("%s returned %s", target, status)}, nil
	}
	if p.validate != nil {
		if err := p.validate(resp.StatusCode, resp.Header, body); err != nil {
			return Outcome{Reason: ReasonUnhealthy, Message: fmt.Sprintf("%s returned %s but the answer is not healthy: %s",
				target, status, quote(err.Error()))}, nil
		}
	}
	return Outcome{Healthy: true, Reason: ReasonHealthy, Message: fmt.Sprintf("%s returned %s", target, status)}, nil
}

// failure classifies a request that got no (complete) answer. When the caller's ctx
// ended, the probe says nothing about the API: the context's error is returned.
func (p *Prober) failure(ctx context.Context, target string, err error) (Outcome, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Outcome{}, fmt.Errorf("%s: %w", target, context.Cause(ctx))
	}
	// url.Error repeats method and URL; keep the cause only.
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	var dnsErr *net.DNSError
	var netErr net.Error
	var redirect *outbound.RedirectError
	var refused *outbound.RefusedError
	switch {
	case errors.As(err, &redirect):
		return Outcome{Reason: ReasonCheckFailed, Message: fmt.Sprintf("%s returned %s: redirect to %s (%s) not followed",
			target, quote(redirect.Status), redirectWhat(redirect), quote(redirect.To))}, nil
	case errors.As(err, &refused):
		return Outcome{Reason: ReasonConnectionFailed, Message: fmt.Sprintf("%s not sent: %s", target, quote(refused.Error()))}, nil
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return Outcome{Reason: ReasonEndpointNotReady,
			Message: fmt.Sprintf("%s: host %s does not resolve (yet): %s", target, quote(dnsErr.Name), quote(err.Error()))}, nil
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return Outcome{Reason: ReasonTimeout, Message: fmt.Sprintf("%s did not answer within %s", target, p.timeout)}, nil
	default:
		return Outcome{Reason: ReasonConnectionFailed, Message: fmt.Sprintf("%s failed: %s", target, quote(err.Error()))}, nil
	}
}

// redirectWhat says what kind of redirect was refused.
func redirectWhat(e *outbound.RedirectError) string {
	if e.Reason == outbound.RedirectDowngrade {
		return "plain http"
	}
	return "another host"
}
