package config

import "errors"

// Sentinel errors, returned wrapped with the offending object, section or field named.
// Test for them with errors.Is.
var (
	// ErrInvalidName reports an INI section or option name that oslo.config would read
	// back differently, or that would inject a section or an option.
	ErrInvalidName = errors.New("invalid INI name")
	// ErrUnrepresentableValue reports an INI value that oslo.config cannot read back
	// unchanged.
	ErrUnrepresentableValue = errors.New("value cannot be represented in oslo.config INI")
	// ErrInvalidBaseName reports a base name that does not yield a valid object name
	// (a DNS-1123 subdomain of at most 253 characters) and label value (at most 63
	// characters).
	ErrInvalidBaseName = errors.New("invalid base name")
	// ErrInvalidNamespace reports an empty namespace.
	ErrInvalidNamespace = errors.New("namespace is empty")
	// ErrInvalidRetain reports a negative retain count.
	ErrInvalidRetain = errors.New("retain must not be negative")
	// ErrInvalidCurrentName reports a prune without the name of the object in use
	// (an empty currentName) or with a name outside baseName-*: such a prune could
	// delete the object the workloads mount.
	ErrInvalidCurrentName = errors.New("currentName must name the object in use, baseName-<hash>")
	// ErrForeignObject reports an existing object, under the name the content hash
	// yields, that the owner does not control. The error also matches
	// apply.ErrNotControlled and holds the *apply.NotControlledError that names the
	// object's controller.
	ErrForeignObject = errors.New("object is not controlled by the owner")
	// ErrContentMismatch reports an existing object, controlled by the owner under the
	// name the content hash yields, whose data differs from the desired data or that is
	// not immutable.
	ErrContentMismatch = errors.New("existing object does not hold the desired immutable content")
)
