package katalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Reasons of the Ready condition of a pass that an external call ended.
const (
	// ReasonExternalCallRefused: an external call was not sent where its URL or a
	// redirect pointed, because EngineOptions.Outbound refuses that destination. The
	// message names the call and the refused host and address (or the host a redirect
	// pointed at), never a status code or the URL's query.
	ReasonExternalCallRefused = "ExternalCallRefused"
	// ReasonExternalCallBudgetExceeded: the pass would have made more external calls than
	// EngineOptions.ExternalCallsPerPass; the message names the call that was not made
	// and the budget.
	ReasonExternalCallBudgetExceeded = "ExternalCallBudgetExceeded"
)

// DefaultExternalCallsPerPass is how many external calls one pass makes at most, all
// groups (onCreate, onReconcile, onDelete) together.
const DefaultExternalCallsPerPass = 16

// Errors of external calls, besides ErrExternalCall. Test for them with errors.Is.
var (
	// ErrExternalCallRefused reports an external call that EngineOptions.Outbound did not
	// let through: its destination (after name resolution) or a redirect. It comes
	// wrapped together with ErrExternalCall, and with the outbound.RefusedError or
	// outbound.RedirectError that says why (errors.As).
	ErrExternalCallRefused = errors.New("refused by the outbound policy")
	// ErrExternalCallBudget reports an external call that was not made because the pass
	// had made EngineOptions.ExternalCallsPerPass calls already.
	ErrExternalCallBudget = errors.New("external call budget of the pass exhausted")
)

// The coarse classes a failed call is reported with. Ready and .external.<name>.error
// name the class only: what answered, and how, goes to the engine's log, so that whoever
// reads a custom resource's status cannot use its calls to probe the network.
var (
	errInvalidURL       = errors.New("the url is not a valid http or https URL")
	errInvalidRequest   = errors.New("the request cannot be built")
	errNoAnswer         = errors.New("no answer")
	errUnexpectedStatus = errors.New("unexpected status")
)

// defaultExternalTimeout bounds an external call without timeout.
const defaultExternalTimeout = 10 * time.Second

// maxExternalBody bounds the bytes of an answer kept under .external.<name>.body.
const maxExternalBody = 1 << 20

// callError is a failed external call. Its message names the call and the class of the
// failure (with a detail that is safe to show: the refused host and address, the
// expected status); the cause stays reachable with errors.As but is never printed.
type callError struct {
	call   string
	class  error
	detail string
	cause  error
}

// Error is "external call failed: <name>: <class>[: <detail>]".
func (e *callError) Error() string { return ErrExternalCall.Error() + ": " + e.call + ": " + e.short() }

// short is the class and the detail: what .external.<name>.error records.
func (e *callError) short() string {
	if e.detail == "" {
		return e.class.Error()
	}
	return e.class.Error() + ": " + e.detail
}

// Unwrap returns ErrExternalCall, the class and the cause.
func (e *callError) Unwrap() []error {
	out := []error{ErrExternalCall, e.class}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// budgetError is an external call not made because the pass's budget is spent.
type budgetError struct {
	call   string
	budget int
}

func (e *budgetError) Error() string {
	return fmt.Sprintf("external call %s not made: the pass made %d external calls already, the most one pass makes (ExternalCallsPerPass)", e.call, e.budget)
}

func (e *budgetError) Unwrap() error { return ErrExternalCallBudget }

// failureReason is the reason of the Ready condition of a pass that failed with err.
func failureReason(err error) string {
	switch {
	case errors.Is(err, ErrExternalCallBudget):
		return ReasonExternalCallBudgetExceeded
	case errors.Is(err, ErrExternalCallRefused):
		return ReasonExternalCallRefused
	}
	return ReasonReconcileFailed
}

// externalClient is the client the external calls of o are made with: o.HTTPClient, or
// one built from o.Outbound, whose CheckRedirect always goes through o.Outbound first.
func externalClient(o EngineOptions) *http.Client {
	if o.HTTPClient == nil {
		return o.Outbound.Client(0)
	}
	c := *o.HTTPClient
	c.CheckRedirect = o.Outbound.CheckRedirect(o.HTTPClient.CheckRedirect)
	return &c
}

// runExternal makes the calls of one group in order, each seeing the results of those
// before it, and records each under d["external"][name]: {called: "false"} for a call
// whose conditions do not hold, {status, body, error, called: "true"} for a made one.
// A call that fails or answers another status than expected ends the group with an error
// wrapping ErrExternalCall, unless it continues on error. A call past the pass's budget
// (EngineOptions.ExternalCallsPerPass, counted in the pass state of ctx) is not made and
// ends the group with an error wrapping ErrExternalCallBudget, continueOnError or not.
func (e *Engine) runExternal(ctx context.Context, calls []ExternalCall, d passData) error {
	results := d["external"].(map[string]any)
	st := reconcile.StateFrom[passState](ctx)
	budget := e.opts.ExternalCallsPerPass
	if budget <= 0 {
		budget = DefaultExternalCallsPerPass
	}
	var client *http.Client
	for _, call := range calls {
		ok, err := gate(call.When, call.AnyOf, d)
		if err != nil {
			return fmt.Errorf("external call %s: %w", call.Name, err)
		}
		if !ok {
			results[call.Name] = map[string]any{"called": "false"}
			continue
		}
		if st.externalCalls >= budget {
			results[call.Name] = map[string]any{"called": "false"}
			return &budgetError{call: call.Name, budget: budget}
		}
		st.externalCalls++
		if client == nil {
			client = externalClient(e.opts)
		}
		res, err := e.call(ctx, client, call, d)
		results[call.Name] = res
		if err != nil && !call.ContinueOnError {
			return err
		}
	}
	return nil
}

// call makes one external call with client; the result is recorded whether it failed or
// not. The error, and .external.<name>.error, name the call and the class of the failure
// only (see callError); the engine's log has the method, the URL without user info or
// query (outbound.Redact), the status and the cause.
func (e *Engine) call(ctx context.Context, client *http.Client, call ExternalCall, d passData) (map[string]any, error) {
	res := map[string]any{"called": "true", "status": "", "body": "", "error": ""}
	logger := log.FromContext(ctx).WithValues("externalCall", call.Name)
	fail := func(err error) (map[string]any, error) {
		var ce *callError
		if errors.As(err, &ce) {
			res["error"] = ce.short()
		} else {
			res["error"] = err.Error()
			err = fmt.Errorf("%w: %s: %w", ErrExternalCall, call.Name, err)
		}
		return res, err
	}
	raw, err := render(call.URL, d, "external "+call.Name+" url")
	if err != nil {
		return fail(err)
	}
	u, err := neturl.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The parser's error quotes the URL, user info and query included: not even the
		// log gets it.
		logger.Info("external call not made: its url does not render to an http or https URL")
		return fail(&callError{call: call.Name, class: errInvalidURL})
	}
	body, err := render(call.Body, d, "external "+call.Name+" body")
	if err != nil {
		return fail(err)
	}
	timeout := call.Timeout.Duration
	if timeout <= 0 {
		timeout = defaultExternalTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	method := call.Method
	if method == "" {
		method = http.MethodGet
	}
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(cctx, strings.ToUpper(method), u.String(), reader)
	if err != nil {
		logger.Info("external call not made: the request cannot be built", "method", method, "url", outbound.Redact(u), "error", outbound.ParseError(err))
		return fail(&callError{call: call.Name, class: errInvalidRequest})
	}
	for _, name := range sortedKeys(call.Headers) {
		v, err := render(call.Headers[name], d, "external "+call.Name+" header "+name)
		if err != nil {
			return fail(err)
		}
		req.Header.Set(name, v)
	}
	logger = logger.WithValues("method", req.Method, "url", outbound.Redact(u))
	resp, err := client.Do(req)
	if err != nil {
		cause := outbound.ParseError(err) // the *url.Error quotes the whole URL
		logger.Info("external call failed", "error", cause)
		return fail(classify(call.Name, cause))
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxExternalBody))
	res["status"] = strconv.Itoa(resp.StatusCode)
	res["body"] = string(b)
	if err != nil {
		logger.Info("external call failed: reading the answer", "status", resp.StatusCode, "error", err)
		return fail(&callError{call: call.Name, class: errNoAnswer, cause: err})
	}
	expected := call.ExpectedStatus
	if (expected != 0 && resp.StatusCode != expected) || (expected == 0 && (resp.StatusCode < 200 || resp.StatusCode > 299)) {
		want := strconv.Itoa(expected)
		if expected == 0 {
			want = "2xx"
		}
		logger.Info("external call answered an unexpected status", "status", resp.StatusCode, "expected", want)
		return fail(&callError{call: call.Name, class: errUnexpectedStatus, detail: "expected " + want})
	}
	logger.V(1).Info("external call made", "status", resp.StatusCode)
	return res, nil
}

// classify turns the error of a request that got no answer into a callError: refused by
// the outbound policy (naming the refused host and address, or the host a redirect
// pointed at, without its status), or no answer.
func classify(call string, err error) *callError {
	var refused *outbound.RefusedError
	if errors.As(err, &refused) {
		detail := "destination " + refused.Addr.String()
		if refused.Host != "" && refused.Host != refused.Addr.String() {
			detail = "destination " + refused.Host + " (" + refused.Addr.String() + ")"
		}
		return &callError{call: call, class: ErrExternalCallRefused, detail: detail + ": " + refused.Range + " addresses are refused", cause: err}
	}
	var redirect *outbound.RedirectError
	if errors.As(err, &redirect) {
		return &callError{call: call, class: ErrExternalCallRefused, detail: "redirect to " + redirect.To + " not followed (" + redirect.Reason + ")", cause: err}
	}
	if errors.Is(err, outbound.ErrRefused) {
		return &callError{call: call, class: ErrExternalCallRefused, cause: err}
	}
	return &callError{call: call, class: errNoAnswer, cause: err}
}
