package outbound

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ErrRedirectRefused reports a redirect the client did not follow; see [RedirectError].
var ErrRedirectRefused = errors.New("outbound: redirect refused")

// ErrTooManyRedirects reports a chain of more than [MaxRedirects] redirects.
var ErrTooManyRedirects = errors.New("outbound: stopped after 10 redirects")

// MaxRedirects is how many redirects [Policy.CheckRedirect] follows at most.
const MaxRedirects = 10

// Why a redirect was not followed: the values of [RedirectError].Reason.
const (
	// RedirectOtherHost: the redirect pointed at another host name.
	RedirectOtherHost = "another host"
	// RedirectDowngrade: the redirect went from https to plain http.
	RedirectDowngrade = "https to http"
	// RedirectRefused: the client follows no redirect at all ([RefuseRedirects]).
	RedirectRefused = "redirects are not followed"
)

// RedirectError is a redirect that was not followed.
type RedirectError struct {
	// From is the host (with port, if any) of the first request.
	From string
	// To is the host (with port, if any) the redirect pointed at.
	To string
	// Status is the status line of the redirecting answer, e.g. "302 Found".
	Status string
	// Reason says why: RedirectOtherHost, RedirectDowngrade or RedirectRefused.
	Reason string
}

// Error names both hosts, the status and the reason; never a path or query.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("redirect from %s to %s (%s) not followed: %s", e.From, e.To, e.Status, e.Reason)
}

// Unwrap returns ErrRedirectRefused.
func (e *RedirectError) Unwrap() error { return ErrRedirectRefused }

// CheckRedirect returns an http.Client CheckRedirect: a redirect to another host name than
// the first request's, or from https to http, is refused with a *RedirectError unless
// AllowCrossHostRedirects is set; then next, or the limit of MaxRedirects, decides. The
// error reaches the caller of Client.Do wrapped in a *url.Error.
func (p Policy) CheckRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !p.AllowCrossHostRedirects {
			first := via[0].URL
			switch {
			case !strings.EqualFold(req.URL.Hostname(), first.Hostname()):
				return redirectError(req, via, RedirectOtherHost)
			case first.Scheme == "https" && req.URL.Scheme != "https":
				return redirectError(req, via, RedirectDowngrade)
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= MaxRedirects {
			return ErrTooManyRedirects
		}
		return nil
	}
}

// RefuseRedirects is a CheckRedirect that follows no redirect at all, for clients that
// send a token or a password with every request: it answers a *RedirectError.
func RefuseRedirects(req *http.Request, via []*http.Request) error {
	return redirectError(req, via, RedirectRefused)
}

func redirectError(req *http.Request, via []*http.Request, reason string) error {
	e := &RedirectError{To: req.URL.Host, Reason: reason}
	if len(via) > 0 {
		e.From = via[0].URL.Host
	}
	if req.Response != nil {
		e.Status = req.Response.Status
	}
	return e
}
