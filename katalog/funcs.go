package katalog

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"reflect"
	"strings"
	"text/template"
)

// maxRandomLength bounds the length the random functions accept, so that a typo such as
// randomAlphanumeric 3200000000 fails instead of exhausting memory.
const maxRandomLength = 4096

// errRandomLength is returned by the random functions for a length outside 1..maxRandomLength.
var errRandomLength = fmt.Errorf("length must be between 1 and %d", maxRandomLength)

const alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// FuncMap returns the functions available to every Katalog template, in addition to the
// text/template built-ins (and, or, not, eq, ne, lt, le, gt, ge, len, index, print, printf,
// ...). Arguments follow the pipeline convention: the value a pipeline passes in comes last.
//
//	randomAlphanumeric N   N random characters from [a-zA-Z0-9] (crypto/rand)
//	randomHex N            N random bytes, hex encoded (2N characters)
//	randomBase64 N         N random bytes, URL-safe base64 without padding
//	uuidv4                 a random UUID, version 4
//	phase X                status.phase of a cross reference (.cross.<as>) or object; "" when absent
//	found X                whether a cross reference (.cross.<as>) found its custom resource
//	default D V            V, or D when V is empty (nil, "", 0, false, an empty list or map)
//	orEmpty V              V, or "" when V is nil (a missing key); every printed value passes through it
//	lower S, upper S, trim S
//	trimPrefix P S, trimSuffix P S, replace OLD NEW S
//	contains SUB S, hasPrefix P S, hasSuffix P S
//	join SEP LIST          the elements of LIST joined with SEP
//	quote S                S as a double-quoted Go string
//	b64enc S, b64dec S     standard base64
//	sha256sum S            hex SHA-256 of S
//	toJson V               V as compact JSON
//	urlquery S             S escaped for a URL's query or one path segment (url.QueryEscape:
//	                       / ? # & = @ and space are escaped); "" for a missing value. Put
//	                       custom resource values into an external call's URL with it
//
// The random functions return a new value on every call: declare secrets that use them
// with once: true, or the value changes on every reconcile. The returned map is a new copy
// on every call.
func FuncMap() template.FuncMap {
	return template.FuncMap{
		"randomAlphanumeric": randomAlphanumeric,
		"randomHex":          randomHex,
		"randomBase64":       randomBase64,
		"uuidv4":             uuidv4,
		"phase":              phase,
		"found":              found,
		"default":            defaultValue,
		"orEmpty":            orEmpty,
		"lower":              strings.ToLower,
		"upper":              strings.ToUpper,
		"trim":               strings.TrimSpace,
		"trimPrefix":         func(prefix, s string) string { return strings.TrimPrefix(s, prefix) },
		"trimSuffix":         func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
		"replace":            func(old, replacement, s string) string { return strings.ReplaceAll(s, old, replacement) },
		"contains":           func(sub, s string) bool { return strings.Contains(s, sub) },
		"hasPrefix":          func(prefix, s string) bool { return strings.HasPrefix(s, prefix) },
		"hasSuffix":          func(suffix, s string) bool { return strings.HasSuffix(s, suffix) },
		"join":               join,
		"quote":              func(s string) string { return fmt.Sprintf("%q", s) },
		"b64enc":             func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"b64dec":             b64dec,
		"sha256sum":          func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) },
		"toJson":             toJSON,
		"urlquery":           urlQuery,
	}
}

func randomBytes(n int) ([]byte, error) {
	if n < 1 || n > maxRandomLength {
		return nil, errRandomLength
	}
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("reading random bytes: %w", err)
	}
	return b, nil
}

// randomAlphanumeric returns n characters drawn uniformly from [a-zA-Z0-9].
func randomAlphanumeric(n int) (string, error) {
	if n < 1 || n > maxRandomLength {
		return "", errRandomLength
	}
	out := make([]byte, n)
	limit := big.NewInt(int64(len(alphanumeric)))
	for i := range out {
		v, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", fmt.Errorf("reading random bytes: %w", err)
		}
		out[i] = alphanumeric[v.Int64()]
	}
	return string(out), nil
}

func randomHex(n int) (string, error) {
	b, err := randomBytes(n)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func randomBase64(n int) (string, error) {
	b, err := randomBytes(n)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func uuidv4() (string, error) {
	b, err := randomBytes(16)
	if err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// lookupString follows keys through nested maps and returns the string (or stringified
// scalar) found there, or "".
func lookupString(v any, keys ...string) string {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return s
	case map[string]any, []any:
		return ""
	default:
		return fmt.Sprint(s)
	}
}

// phase returns status.phase of a cross reference or object, or "" when it has none.
func phase(v any) string { return lookupString(v, "status", "phase") }

// found reports whether a cross reference found its custom resource: its found key is
// true or "true".
func found(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	switch f := m["found"].(type) {
	case bool:
		return f
	case string:
		return f == "true"
	}
	return false
}

// isEmpty reports whether v is nil or the zero value of its type, or an empty list or map.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		return rv.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	default:
		return rv.IsZero()
	}
}

// defaultValue returns given, or def when given is empty.
func defaultValue(def any, given ...any) any {
	if len(given) == 0 || isEmpty(given[0]) {
		return def
	}
	return given[0]
}

// orEmpty returns v, or "" when v is nil, so that a missing key prints as nothing.
func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

func join(sep string, list any) (string, error) {
	if list == nil {
		return "", nil
	}
	rv := reflect.ValueOf(list)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return "", fmt.Errorf("join: %T is not a list", list)
	}
	parts := make([]string, rv.Len())
	for i := range parts {
		parts[i] = fmt.Sprint(rv.Index(i).Interface())
	}
	return strings.Join(parts, sep), nil
}

func b64dec(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", errors.New("b64dec: input is not standard base64")
	}
	return string(b), nil
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toJson: %w", err)
	}
	return string(b), nil
}

// urlQuery is text/template's urlquery, except that a missing value (nil) escapes to ""
// rather than to "<no value>", as everywhere else in a Katalog.
func urlQuery(args ...any) string {
	kept := make([]any, 0, len(args))
	for _, a := range args {
		if a != nil {
			kept = append(kept, a)
		}
	}
	return url.QueryEscape(fmt.Sprint(kept...))
}
