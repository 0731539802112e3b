package inspect

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Paging of the lists of custom resources.
const (
	// DefaultPageSize is how many custom resources one answer of GET
	// /katalog/{crd}/cr, or one page of a CRD, lists without ?limit.
	DefaultPageSize = 100
	// MaxPageSize is the largest ?limit accepted.
	MaxPageSize = 500
)

// page is the window of a list a request asks for: at most limit items after the
// namespace/name key after ("" from the start).
type page struct {
	limit int
	after string
	// explicitLimit is the limit the request gave, 0 without one (so links keep it).
	explicitLimit int
}

// parsePage reads ?limit (1 to MaxPageSize, DefaultPageSize without it) and ?continue
// (the token a previous answer gave) of r; the error names the parameter.
func parsePage(r *http.Request) (page, error) {
	q := r.URL.Query()
	p := page{limit: DefaultPageSize}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageSize {
			return page{}, fmt.Errorf("query parameter limit %q: want a number from 1 to %d", v, MaxPageSize)
		}
		p.limit, p.explicitLimit = n, n
	}
	if v := q.Get("continue"); v != "" {
		key, err := decodeContinue(v)
		if err != nil {
			return page{}, fmt.Errorf("query parameter continue %q: %w", v, err)
		}
		p.after = key
	}
	return p, nil
}

// cut returns the items of the page, which are sorted by namespace and name, and the
// continue token of the next page ("" when this is the last).
func (p page) cut(items []CRSummary) ([]CRSummary, string) {
	start := 0
	if p.after != "" {
		for start < len(items) && key(items[start]) <= p.after {
			start++
		}
	}
	items = items[start:]
	if len(items) <= p.limit {
		return items, ""
	}
	items = items[:p.limit]
	return items, encodeContinue(key(items[len(items)-1]))
}

// query is the query string of the page that starts after the token cont ("" for the
// first), keeping an explicit limit.
func (p page) query(cont string) string {
	q := url.Values{}
	if p.explicitLimit > 0 {
		q.Set("limit", strconv.Itoa(p.explicitLimit))
	}
	if cont != "" {
		q.Set("continue", cont)
	}
	return q.Encode()
}

// key is the sort key of a custom resource: namespace, a NUL, name (NUL sorts before
// every character of a name, so the order is that of namespace, then name).
func key(s CRSummary) string { return s.Namespace + "\x00" + s.Name }

// errContinue is the cause of a continue token that is not one this inspector gave.
var errContinue = errors.New("not a continue token of this inspector")

// encodeContinue makes the token of the page after the key.
func encodeContinue(k string) string { return base64.RawURLEncoding.EncodeToString([]byte(k)) }

// decodeContinue reads a token of encodeContinue.
func decodeContinue(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || !strings.Contains(string(b), "\x00") {
		return "", errContinue
	}
	return string(b), nil
}
