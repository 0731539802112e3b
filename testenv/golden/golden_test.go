package golden_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv/golden"
)

// Check passes on the golden content, wraps ErrDiffers with the diff on another, and
// says to run with -update when the file is missing.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := golden.Check(path, []byte("a\nb\n")); err != nil {
		t.Errorf("same content: %v", err)
	}
	err := golden.Check(path, []byte("a\nc\n"))
	if !errors.Is(err, golden.ErrDiffers) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "+") {
		t.Errorf("other content: err = %v, want ErrDiffers naming %s with a diff", err, path)
	}
	err = golden.Check(filepath.Join(dir, "missing.txt"), []byte("x"))
	if err == nil || errors.Is(err, golden.ErrDiffers) || !strings.Contains(err.Error(), "run with -update") {
		t.Errorf("missing file: err = %v, want a read error saying to run with -update", err)
	}
	if golden.Updating() {
		t.Error("Updating without -update")
	}
}

// Files accepts exactly the matching files in any order and reports a stale or a
// missing one.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.py", "b.py", "c.conf"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pattern := filepath.Join(dir, "*.py")
	golden.Files(t, pattern, []string{filepath.Join(dir, "b.py"), filepath.Join(dir, "a.py")})
	for name, want := range map[string][]string{
		"stale":   {filepath.Join(dir, "a.py")},
		"missing": {filepath.Join(dir, "a.py"), filepath.Join(dir, "b.py"), filepath.Join(dir, "d.py")},
	} {
		rec := &recorder{TB: t}
		golden.Files(rec, pattern, want)
		if !rec.failed {
			t.Errorf("%s: Files did not fail", name)
		}
	}
}

// Deterministic passes on a stable render and fails on one that changes or errs.
func TestDeterministic(t *testing.T) {
	golden.Deterministic(t, "stable", func() (string, error) { return "x", nil })
	n := 0
	for name, render := range map[string]func() ([]byte, error){
		"changing": func() ([]byte, error) { n++; return []byte{byte(n)}, nil },
		"failing":  func() ([]byte, error) { return nil, errors.New("boom") },
	} {
		rec := &recorder{TB: t}
		rec.run(func() { golden.Deterministic(rec, name, render) })
		if !rec.failed {
			t.Errorf("%s: Deterministic did not fail", name)
		}
	}
}

// Matrix compares each case with its file or its SameAs case; MatrixFiles lists the
// files of the cases with one.
func TestMatrix(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "full.conf"), []byte("a = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	render := func(s string) func() (string, error) { return func() (string, error) { return s, nil } }
	cases := []golden.Case[string]{
		{Name: "full", Render: render("a = 1\n")},
		{Name: "off", SameAs: "full", Render: render("a = 1\n")},
	}
	golden.Matrix(t, dir, ".conf", cases)
	if got, want := golden.MatrixFiles(dir, ".conf", cases), []string{filepath.Join(dir, "full.conf")}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("MatrixFiles = %v, want %v", got, want)
	}
}

// recorder is a testing.TB that records a failure instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }

// Fatalf records the failure and ends the calling goroutine's work as testing.T
// does not: the callers return after it.
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(stop{}) }

// stop unwinds a recorder's Fatalf.
type stop struct{}

// run runs f, stopping where f calls Fatalf.
func (r *recorder) run(f func()) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(stop); !ok {
				panic(p)
			}
		}
	}()
	f()
}
