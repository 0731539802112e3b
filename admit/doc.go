// Package admit is the mechanism of the admission webhooks of a custom resource built
// on the SDK, on controller-runtime's typed admission (admission.Defaulter[T] and
// admission.Validator[T]): what every operator's webhook package otherwise writes
// again, so that the package keeps only its own defaults and checks.
//
//   - [Register] puts a defaulter and a validator of one kind on a manager's webhook
//     server, at the paths controller-runtime derives from the kind
//     (/mutate-<group>-<version>-<kind>, /validate-...), the paths that
//     `controller-gen webhook` writes into the webhook configurations from the
//     package's kubebuilder markers.
//   - [Validator] is the admission.Validator[T] of a kind's [Rules]: a function that
//     lists an object's problems as a field.ErrorList. [Invalid] and [NewProblems] are
//     its parts, for a validator written by hand.
//   - [Namespace] is the namespace a defaulter fills into references: the object's,
//     else the admission request's.
//
// # Refusals
//
// A refused object gets one Invalid error (HTTP 422, apierrors.IsInvalid) of its kind
// and name that lists every problem at once, sorted by field path, so a user fixes a
// manifest in one round. On update only the problems the old object did not have are
// refused; one carried over unchanged (the same field, type, value and message) is
// returned as a warning instead, so an object stored before the webhook existed, or
// before a check was added, can still be edited and released by its finalizers.
// Deletion is always admitted.
//
// # Values are never echoed
//
// Messages name fields by their path (data[key]), never a value a user wrote that may
// be a secret: a rule reports such a field with field.OmitValueType{} as the value (or
// with field.Forbidden or field.Required, which carry none), and its detail quotes no
// value either. Refusals and warnings are shown to whoever sent the request and may be
// written to the API server's audit log.
//
// Package admittest holds the test helpers of webhooks built on this package.
package admit
