package controller

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// identityBackendGVK is the kind of the Keystone example's KeystoneIdentityBackend
// (examples/keystone/api/v1alpha1). The Horizon operator reads backends as
// unstructured objects of this kind: it does not import the Keystone example's Go
// types, so each example can be copied on its own, and its scheme needs no Keystone
// group.
var identityBackendGVK = schema.GroupVersionKind{Group: "keystone.openstack.c5c3.io", Version: "v1alpha1", Kind: "KeystoneIdentityBackend"}

// newIdentityBackend returns an empty unstructured KeystoneIdentityBackend, the object
// the WebSSO row reads into and the watch's informer holds.
func newIdentityBackend() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(identityBackendGVK)
	return u
}

// identityBackend is the part of a KeystoneIdentityBackend the WebSSO row reads. It
// mirrors these fields of the Keystone example's published API
// (keystone.openstack.c5c3.io/v1alpha1), with their JSON names:
//
//   - spec.federation (whether it is set) and spec.federation.identityProviders[].id,
//     .description and .protocol: the providers the backend declares;
//   - status.identityProviders[].id and .protocol: the providers the Keystone
//     controller registered, with the protocol it registered last.
//
// Every other field (the providers' mappings, the protocol blocks, the conditions) is
// left unread. decodeIdentityBackend fills it.
type identityBackend struct {
	// federated reports that spec.federation is set (not absent, not null).
	federated bool
	// providers are spec.federation.identityProviders, in order.
	providers []identityProvider
	// registered are status.identityProviders, in order.
	registered []registeredProvider
}

// identityProvider is one entry of spec.federation.identityProviders: its Keystone id,
// its description (the login choice's label when set) and its protocol.
type identityProvider struct {
	id, description, protocol string
}

// registeredProvider is one entry of status.identityProviders: the provider's id and
// the protocol registered for it ("" until the protocol exists in Keystone).
type registeredProvider struct {
	id, protocol string
}

// decodeIdentityBackend reads the fields identityBackend mirrors out of a
// KeystoneIdentityBackend's content (unstructured.Unstructured.Object). An absent or
// null field reads as its zero value; a field of another JSON type than the API
// declares is an error naming the field's path (for example
// spec.federation.identityProviders[1].protocol) and both types. It never panics and
// keeps no reference into obj.
func decodeIdentityBackend(obj map[string]any) (identityBackend, error) {
	var b identityBackend
	spec, err := object(obj, "spec", "spec")
	if err != nil {
		return b, err
	}
	federation, err := object(spec, "federation", "spec.federation")
	if err != nil {
		return b, err
	}
	b.federated = federation != nil
	err = eachObject(federation, "identityProviders", "spec.federation.identityProviders", func(item map[string]any, path string) error {
		var p identityProvider
		if err := readStrings(item, path, map[string]*string{"id": &p.id, "description": &p.description, "protocol": &p.protocol}); err != nil {
			return err
		}
		b.providers = append(b.providers, p)
		return nil
	})
	if err != nil {
		return b, err
	}
	status, err := object(obj, "status", "status")
	if err != nil {
		return b, err
	}
	err = eachObject(status, "identityProviders", "status.identityProviders", func(item map[string]any, path string) error {
		var p registeredProvider
		if err := readStrings(item, path, map[string]*string{"id": &p.id, "protocol": &p.protocol}); err != nil {
			return err
		}
		b.registered = append(b.registered, p)
		return nil
	})
	return b, err
}

// object returns the object under key of parent (path names it in errors): nil when
// parent is nil or the key is absent or null, an error when it is not an object.
func object(parent map[string]any, key, path string) (map[string]any, error) {
	v, ok := parent[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, want an object", path, jsonType(v))
	}
	return m, nil
}

// eachObject calls f with every item of the list under key of parent and the item's
// path (path[i]), in order. An absent or null list has no items; a list that is not
// a list, or an item that is not an object, is an error naming its path. f's error
// ends the walk and is returned.
func eachObject(parent map[string]any, key, path string, f func(item map[string]any, path string) error) error {
	v, ok := parent[key]
	if !ok || v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s is %s, want a list", path, jsonType(v))
	}
	for i, it := range list {
		itemPath := path + "[" + strconv.Itoa(i) + "]"
		m, ok := it.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is %s, want an object", itemPath, jsonType(it))
		}
		if err := f(m, itemPath); err != nil {
			return err
		}
	}
	return nil
}

// readStrings sets each *into[key] to the string under key of item (path names item in
// errors); an absent or null key leaves "" there. A value that is not a string is an
// error naming path.key. The keys are read in sorted order, so the error names the
// same field on every call.
func readStrings(item map[string]any, path string, into map[string]*string) error {
	for _, key := range slices.Sorted(maps.Keys(into)) {
		v, ok := item[key]
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s.%s is %s, want a string", path, key, jsonType(v))
		}
		*into[key] = s
	}
	return nil
}

// jsonType names the JSON type of a decoded value, with its article: "a string", "a
// number", "a boolean", "a list", "an object"; other Go types by their Go type.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int32, int64, float32, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
