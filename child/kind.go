package child

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/c5c3/reconciler-sdk/apply"
)

// newObject returns an empty object of O's type, or the zero O (nil) when O is not a
// pointer type.
func newObject[O client.Object]() O {
	var zero O
	t := reflect.TypeFor[O]()
	if t.Kind() != reflect.Pointer {
		return zero
	}
	obj, _ := reflect.New(t.Elem()).Interface().(O)
	return obj
}

// gvkOf returns O's kind as scheme registers it.
func gvkOf[O client.Object](scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	obj := newObject[O]()
	if isNil(obj) {
		return schema.GroupVersionKind{}, fmt.Errorf("%w: %s is not a pointer type", apply.ErrUnknownKind, reflect.TypeFor[O]())
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("%w: %w", apply.ErrUnknownKind, err)
	}
	return gvk, nil
}

// kindOf names O's kind in messages: from scheme, else (nil scheme, unknown type) its
// Go type's name.
func kindOf[O client.Object](scheme *runtime.Scheme) string {
	if scheme != nil {
		if gvk, err := gvkOf[O](scheme); err == nil {
			return gvk.Kind
		}
	}
	t := reflect.TypeFor[O]()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// plural is the English plural of a kind: "VerticalPodAutoscalers", "NetworkPolicies".
func plural(kind string) string {
	switch {
	case kind == "":
		return kind
	case strings.HasSuffix(kind, "s"), strings.HasSuffix(kind, "x"), strings.HasSuffix(kind, "ch"), strings.HasSuffix(kind, "sh"):
		return kind + "es"
	case strings.HasSuffix(kind, "y") && len(kind) > 1 && !strings.ContainsRune("aeiouAEIOU", rune(kind[len(kind)-2])):
		return kind[:len(kind)-1] + "ies"
	}
	return kind + "s"
}

// isNil reports whether v is nil or a typed nil pointer inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
