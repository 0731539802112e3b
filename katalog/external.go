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
)

// defaultExternalTimeout bounds an external call without timeout.
const defaultExternalTimeout = 10 * time.Second

// maxExternalBody bounds the bytes of an answer kept under .external.<name>.body.
const maxExternalBody = 1 << 20

// runExternal makes the calls of one group in order, each seeing the results of those
// before it, and records each under d["external"][name]: {called: "false"} for a call
// whose conditions do not hold, {status, body, error, called: "true"} for a made one.
// A call that fails or answers another status than expected ends the group with an error
// wrapping ErrExternalCall, unless it continues on error.
func (e *Engine) runExternal(ctx context.Context, calls []ExternalCall, d passData) error {
	results := d["external"].(map[string]any)
	for _, call := range calls {
		ok, err := gate(call.When, call.AnyOf, d)
		if err != nil {
			return fmt.Errorf("external call %s: %w", call.Name, err)
		}
		if !ok {
			results[call.Name] = map[string]any{"called": "false"}
			continue
		}
		res, err := e.call(ctx, call, d)
		results[call.Name] = res
		if err != nil && !call.ContinueOnError {
			return err
		}
	}
	return nil
}

// call makes one external call; the result is recorded whether it failed or not.
func (e *Engine) call(ctx context.Context, call ExternalCall, d passData) (map[string]any, error) {
	res := map[string]any{"called": "true", "status": "", "body": "", "error": ""}
	fail := func(err error) (map[string]any, error) {
		res["error"] = err.Error()
		return res, fmt.Errorf("%w: %s: %w", ErrExternalCall, call.Name, err)
	}
	url, err := render(call.URL, d, "external "+call.Name+" url")
	if err != nil {
		return fail(err)
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
	req, err := http.NewRequestWithContext(cctx, strings.ToUpper(method), url, reader)
	if err != nil {
		return fail(err)
	}
	for _, name := range sortedKeys(call.Headers) {
		v, err := render(call.Headers[name], d, "external "+call.Name+" header "+name)
		if err != nil {
			return fail(err)
		}
		req.Header.Set(name, v)
	}
	resp, err := e.opts.HTTPClient.Do(req)
	if err != nil {
		var uerr *neturl.Error
		if errors.As(err, &uerr) { // its message holds the whole URL, query included
			err = uerr.Err
		}
		return fail(fmt.Errorf("%s %s: %w", req.Method, redactURL(req), err))
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxExternalBody))
	res["status"] = strconv.Itoa(resp.StatusCode)
	res["body"] = string(b)
	if err != nil {
		return fail(fmt.Errorf("reading the answer: %w", err))
	}
	expected := call.ExpectedStatus
	if (expected != 0 && resp.StatusCode != expected) || (expected == 0 && (resp.StatusCode < 200 || resp.StatusCode > 299)) {
		want := strconv.Itoa(expected)
		if expected == 0 {
			want = "2xx"
		}
		return fail(fmt.Errorf("%s %s answered %d, expected %s", req.Method, redactURL(req), resp.StatusCode, want))
	}
	return res, nil
}

// redactURL names the request's scheme, host and path, without query or user info, which
// may carry credentials.
func redactURL(req *http.Request) string {
	u := *req.URL
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
