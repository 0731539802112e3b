package esotest

import (
	"fmt"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ZeroFields lists the paths of the fields under v that hold their zero value (an empty
// slice or map counts as zero; slices and maps are walked through their elements).
func ZeroFields(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return ZeroFields(v.Elem(), path)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[metav1.Time]() || v.Type() == reflect.TypeFor[metav1.Duration]() {
			if v.IsZero() {
				return []string{path}
			}
			return nil
		}
		if v.Type() == reflect.TypeFor[apiextensionsv1.JSON]() {
			if len(v.Field(0).Bytes()) == 0 {
				return []string{path}
			}
			return nil
		}
		var out []string
		for i := range v.NumField() {
			out = append(out, ZeroFields(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
		return out
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		var out []string
		if v.Kind() == reflect.Slice {
			for i := range v.Len() {
				out = append(out, ZeroFields(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
		return out
	default:
		if v.IsZero() {
			return []string{path}
		}
		return nil
	}
}
