package database

import "errors"

// ErrInvalidParams reports input the flows refuse before any API call: a nil object,
// a reference that contradicts another object of the same call, a User without a
// password Secret. The error text names the object and the field.
var ErrInvalidParams = errors.New("invalid database parameters")
