package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wantTestdata is the API of testdata/mod: one identifier of each kind in package p, and
// beside it a test file, a windows-only file, a testdata directory, an internal package,
// a main package, a nested module and an _-prefixed directory, none of which is listed.
const wantTestdata = `
package example.com/m // package root

package example.com/m/p
const KindA Kind = 0 + 1
const KindB Kind = 1 + 1
const KindD Kind = 3 + 1
const Limit = 3
const Long = …
const Old = Limit // Deprecated
var ErrX = errors.New("x")
var OldEOF = io.EOF // Deprecated
var OldWrite = io.WriteString // Deprecated
var Typed io.Reader
func New[K comparable, V any](ctx context.Context, k K, v ...V) (*T[K, V], error)
type Alias = Kind // Deprecated
type Empty struct{}
type I interface
	io.Closer
	Do(ctx context.Context) (n int, err error)
	// has unexported methods
type Kind int
type Later string
method (Later) Value() string
type Number interface
	~int | ~float64
type T[K comparable, V any] struct
	A K
	io.Reader
	F func(context.Context) error // Deprecated
	S struct{X int}
	// has unexported fields
method (*T[K, V]) M(k K) V
`

func TestGenerateTestdata(t *testing.T) {
	got, err := generate("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(header, "example.com/m") + wantTestdata
	if string(got) != want {
		t.Errorf("generate(testdata/mod) differs:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// The output does not depend on the host or on earlier runs: two runs agree byte for
// byte, and a file constrained to another GOOS is never read.
func TestGenerateIsDeterministic(t *testing.T) {
	first, err := generate("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	second, err := generate("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(second) {
		t.Error("two runs of generate differ")
	}
	if strings.Contains(string(first), "Windows") {
		t.Error("a //go:build windows file is listed")
	}
}

func TestRunWritesFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "api.txt")
	if err := run("testdata/mod", out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(header, "example.com/m") + wantTestdata; string(got) != want {
		t.Errorf("-o file holds:\n%s", got)
	}
}

func TestGenerateWithoutGoMod(t *testing.T) {
	if _, err := generate(t.TempDir()); err == nil || !strings.Contains(err.Error(), "go.mod") {
		t.Errorf("generate in a directory without go.mod: err = %v, want one naming go.mod", err)
	}
}

func TestGenerateReportsSyntaxErrors(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bad.go"), []byte("package bad\n\nfunc F( {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := generate(root); err == nil || !strings.Contains(err.Error(), "bad.go") {
		t.Errorf("generate on a file with a syntax error: err = %v, want one naming bad.go", err)
	}
}
