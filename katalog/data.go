package katalog

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// passData is the data templates and conditions of one pass render against:
// metadata, spec, status, cross, external, children and, under forEach, the element.
type passData map[string]any

// newPassData returns the data of cr: deep copies of its metadata, spec and status, and
// empty cross, external and children.
func newPassData(cr *unstructured.Unstructured) passData {
	d := passData{"cross": map[string]any{}, "external": map[string]any{}, "children": map[string]any{}}
	for _, k := range []string{"metadata", "spec", "status"} {
		v, ok := cr.Object[k]
		if !ok || v == nil {
			v = map[string]any{}
		}
		d[k] = runtime.DeepCopyJSONValue(v)
	}
	return d
}

// with returns a shallow copy of d with key set to v.
func (d passData) with(kv ...any) passData {
	out := make(passData, len(d)+len(kv)/2)
	for k, v := range d {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// lookup follows a dot path (spec.replicas, external.registry-check.status) through the
// nested maps of v. present is false when a key is missing or the value is nil.
func lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, v != nil
	}
	for _, k := range strings.Split(path, ".") {
		var m map[string]any
		switch t := v.(type) {
		case map[string]any:
			m = t
		case passData:
			m = t
		default:
			return nil, false
		}
		var ok bool
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

// text is the text a condition compares: scalars as printed, lists and maps as JSON.
func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case map[string]any, []any:
		b, err := json.Marshal(t)
		if err != nil {
			return fmt.Sprint(t)
		}
		return string(b)
	}
	return fmt.Sprint(v)
}

// render executes t against d; its errors wrap ErrRender and name where the template is.
func render(t Template, d passData, where string) (string, error) {
	s, err := t.Execute(map[string]any(d))
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrRender, where, err)
	}
	return s, nil
}

// evalCondition applies c to d. A field that holds {{ }} is rendered and its output
// tested; otherwise it is a dot path into d.
func evalCondition(c Condition, d passData) (bool, error) {
	var actual string
	var present bool
	if c.Field.IsLiteral() {
		v, ok := lookup(map[string]any(d), c.Field.Text)
		actual, present = text(v), ok
	} else {
		s, err := render(c.Field, d, "condition field "+c.Field.Text)
		if err != nil {
			return false, err
		}
		actual, present = s, true
	}
	value, err := render(c.Value, d, "condition value of "+c.Field.Text)
	if err != nil {
		return false, err
	}
	ok, err := c.Match(actual, present, value)
	if err != nil {
		return false, fmt.Errorf("%w: condition on %s: %w", ErrRender, c.Field.Text, err)
	}
	return ok, nil
}

// gate reports whether every when condition holds and, when anyOf is given, at least one
// of anyOf does.
func gate(when, anyOf []Condition, d passData) (bool, error) {
	for _, c := range when {
		ok, err := evalCondition(c, d)
		if err != nil || !ok {
			return false, err
		}
	}
	if len(anyOf) == 0 {
		return true, nil
	}
	for _, c := range anyOf {
		ok, err := evalCondition(c, d)
		if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// expand returns the data of each repetition of a declaration: d itself without forEach;
// with it, one copy per element of the list at fe.Field (the element under fe.Alias()) or
// per key of the map there, in sorted key order (the key under fe.Alias(), its value
// under value), with the element's position under index. The alias is set last, so it
// is never overwritten by index or value (the loader refuses those names as aliases
// anyway). A missing or empty field gives no repetition; a field of another type is an
// error.
func expand(fe *ForEach, d passData) ([]passData, error) {
	if fe == nil {
		return []passData{d}, nil
	}
	v, _ := lookup(map[string]any(d), fe.Field)
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]passData, 0, len(t))
		for i, el := range t {
			out = append(out, d.with("index", i, fe.Alias(), el))
		}
		return out, nil
	case map[string]any:
		keys := sortedKeys(t)
		out := make([]passData, 0, len(keys))
		for i, k := range keys {
			out = append(out, d.with("value", t[k], "index", i, fe.Alias(), k))
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: forEach field %s is %T, not a list or map", ErrRender, fe.Field, v)
}

// expandBounded is expand for one custom resource, refusing a forEach whose field holds
// more than limit elements (limit <= 0: DefaultMaxForEachElements) before a single
// repetition is made: the error wraps ErrRender and ErrForEachTooLarge and names the
// field, and the caller writes none of the declaration's repetitions.
func expandBounded(fe *ForEach, d passData, limit int) ([]passData, error) {
	if fe == nil {
		return expand(fe, d)
	}
	if limit <= 0 {
		limit = DefaultMaxForEachElements
	}
	n := 0
	switch t, _ := lookup(map[string]any(d), fe.Field); t := t.(type) {
	case []any:
		n = len(t)
	case map[string]any:
		n = len(t)
	}
	if n > limit {
		return nil, fmt.Errorf("%w: %w: field %s holds %d elements, more than the %d one forEach expands to per custom resource; none of them is written",
			ErrRender, ErrForEachTooLarge, fe.Field, n, limit)
	}
	return expand(fe, d)
}

// setPath sets the dot path in m to v, creating the maps on the way.
func setPath(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}
