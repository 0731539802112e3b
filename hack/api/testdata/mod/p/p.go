// Package p holds one identifier of each kind.
package p

import (
	"context"
	"errors"
	"io"
)

// Kind is an enumeration.
type Kind int

// The kinds.
const (
	KindA Kind = iota + 1
	KindB
	kindC
	KindD
)

// Limit is an untyped constant.
const Limit = 3

// Long is longer than a line.
const Long = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"

// Old is an old name.
//
// Deprecated: use Limit.
const Old = Limit

// Group of old names.
//
// Deprecated: use the names in package io.
var (
	OldEOF   = io.EOF
	OldWrite = io.WriteString
)

// ErrX is an error.
var ErrX = errors.New("x")

// Typed has a type.
var Typed, typedToo io.Reader

// New makes a T.
func New[K comparable, V any](ctx context.Context, k K, v ...V) (*T[K, V], error) {
	return nil, nil
}

func unexported() {}

// T is a generic struct.
type T[K comparable, V any] struct {
	// A is exported.
	A, b K
	io.Reader
	inner
	// F is old.
	//
	// Deprecated: use A.
	F func(context.Context) error
	S struct{ X int }
}

type inner struct{ Y int }

// M is a method.
func (t *T[K, V]) M(k K) V { var v V; return v }

func (t *T[K, V]) m() {}

// Y is promoted but not listed.
func (inner) Y() {}

// I is an interface.
type I interface {
	io.Closer
	// Do does.
	Do(ctx context.Context) (n int, err error)
	hidden()
}

// Number is a constraint.
type Number interface {
	~int | ~float64
}

// Empty is empty.
type Empty struct{}

// Alias is an alias.
//
// Deprecated: use Kind.
type Alias = Kind
