package apply

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// serverMetadata are the metadata fields the server sets, by their JSON name: a builder
// never means to apply or create them, and resourceVersion would turn the write into a
// precondition. set reports whether an object carries the field, clear empties it.
var serverMetadata = []struct {
	name  string
	set   func(metav1.Object) bool
	clear func(metav1.Object)
}{
	{"resourceVersion", func(o metav1.Object) bool { return o.GetResourceVersion() != "" }, func(o metav1.Object) { o.SetResourceVersion("") }},
	{"uid", func(o metav1.Object) bool { return o.GetUID() != "" }, func(o metav1.Object) { o.SetUID("") }},
	{"generation", func(o metav1.Object) bool { return o.GetGeneration() != 0 }, func(o metav1.Object) { o.SetGeneration(0) }},
	{"managedFields", func(o metav1.Object) bool { return o.GetManagedFields() != nil }, func(o metav1.Object) { o.SetManagedFields(nil) }},
	{"creationTimestamp", func(o metav1.Object) bool { t := o.GetCreationTimestamp(); return !t.IsZero() },
		func(o metav1.Object) { o.SetCreationTimestamp(metav1.Time{}) }},
	{"deletionTimestamp", func(o metav1.Object) bool { return o.GetDeletionTimestamp() != nil }, func(o metav1.Object) { o.SetDeletionTimestamp(nil) }},
	{"deletionGracePeriodSeconds", func(o metav1.Object) bool { return o.GetDeletionGracePeriodSeconds() != nil },
		func(o metav1.Object) { o.SetDeletionGracePeriodSeconds(nil) }},
	{"selfLink", func(o metav1.Object) bool { return o.GetSelfLink() != "" }, func(o metav1.Object) { o.SetSelfLink("") }},
}

// desiredUnstructured converts obj into the body to apply: zero-valued non-pointer
// structs, nulls, status and server-owned metadata removed.
func desiredUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	var content map[string]any
	if u, ok := any(obj).(runtime.Unstructured); ok {
		content = runtime.DeepCopyJSON(u.UnstructuredContent())
	} else {
		var err error
		content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		pruneZeroStructs(reflect.ValueOf(obj), content)
	}
	pruneNulls(content)
	delete(content, "status")
	if md, ok := content["metadata"].(map[string]any); ok {
		for _, f := range serverMetadata {
			delete(md, f.name)
		}
	}
	return &unstructured.Unstructured{Object: content}, nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// structField is what pruneZeroStructs needs of one exported struct field: its index,
// its JSON key and whether its fields are inlined into the parent object.
type structField struct {
	index  int
	name   string
	inline bool
}

// Reflection on a type does not change, and it is most of the cost of stripping: the
// fields of every struct type and whether a type encodes itself are computed once per
// type and kept (the key sets are bounded by the Go types in the program).
var (
	structFieldsCache   sync.Map // reflect.Type -> []structField
	customEncodingCache sync.Map // reflect.Type -> bool
)

// fieldsOf returns the exported fields of struct type t that have a JSON key or are
// inlined, in declaration order.
func fieldsOf(t reflect.Type) []structField {
	if v, ok := structFieldsCache.Load(t); ok {
		return v.([]structField)
	}
	var out []structField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, inline := jsonName(f)
		if name == "-" {
			continue
		}
		out = append(out, structField{index: i, name: name, inline: inline})
	}
	v, _ := structFieldsCache.LoadOrStore(t, out)
	return v.([]structField)
}

// pruneZeroStructs walks the Go value v alongside its unstructured form m and deletes
// the keys of non-pointer struct fields whose value is the zero value.
func pruneZeroStructs(v reflect.Value, m map[string]any) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	for _, f := range fieldsOf(v.Type()) {
		fv := v.Field(f.index)
		if f.inline {
			pruneZeroStructs(fv, m)
			continue
		}
		child, present := m[f.name]
		if !present {
			continue
		}
		if fv.Kind() == reflect.Struct && fv.IsZero() {
			delete(m, f.name)
			continue
		}
		pruneValue(fv, child)
	}
}

// pruneValue recurses into structs, slices and maps of the Go value v and its
// unstructured form u.
func pruneValue(v reflect.Value, u any) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
	default:
		return // a scalar has nothing to prune
	}
	if customEncoding(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if um, ok := u.(map[string]any); ok {
			pruneZeroStructs(v, um)
		}
	case reflect.Slice, reflect.Array:
		us, ok := u.([]any)
		if !ok || len(us) != v.Len() {
			return
		}
		for i := range us {
			pruneValue(v.Index(i), us[i])
		}
	case reflect.Map:
		um, ok := u.(map[string]any)
		if !ok || v.Type().Key().Kind() != reflect.String {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			if child, ok := um[iter.Key().String()]; ok {
				pruneValue(iter.Value(), child)
			}
		}
	}
}

// customEncoding reports whether type t encodes itself (metav1.Time, Quantity,
// IntOrString, ...); values of such a type are not walked field by field.
func customEncoding(t reflect.Type) bool {
	if v, ok := customEncodingCache.Load(t); ok {
		return v.(bool)
	}
	pt := reflect.PointerTo(t)
	custom := t.Implements(jsonMarshaler) || pt.Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || pt.Implements(textMarshaler)
	customEncodingCache.Store(t, custom)
	return custom
}

// jsonName returns the JSON key of a struct field and whether its fields are inlined
// into the parent object.
func jsonName(f reflect.StructField) (name string, inline bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" && opts == "" {
		return "-", false
	}
	if name == "" {
		if f.Anonymous || strings.Contains(opts, "inline") {
			return "", true
		}
		return f.Name, false
	}
	return name, false
}

// pruneNulls deletes null values from maps, recursively.
func pruneNulls(m map[string]any) {
	for k, v := range m {
		switch val := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			pruneNulls(val)
		case []any:
			for _, e := range val {
				if em, ok := e.(map[string]any); ok {
					pruneNulls(em)
				}
			}
		}
	}
}
