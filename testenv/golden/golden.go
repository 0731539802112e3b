package golden

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files from the rendered output instead of comparing")

// ErrDiffers is wrapped by [Check] when the rendered output is not the golden file's.
var ErrDiffers = errors.New("output differs from the golden file")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with the golden file at path, or, with -update, writes got there
// first. A file that cannot be read is an error saying to run with -update; a
// difference an error wrapping [ErrDiffers] with the diff (-golden +rendered).
func Check(path string, got []byte) error {
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil { //nolint:gosec // golden files are not secret
			return fmt.Errorf("writing golden file: %w", err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w (run with -update to write it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		return fmt.Errorf("%w: %s (-golden +rendered):\n%s", ErrDiffers, path, d)
	}
	return nil
}

// Compare is [Check] in a test: an error fails it (a missing or unreadable file at
// once, a difference after the test's other checks).
func Compare(t testing.TB, path string, got []byte) {
	t.Helper()
	switch err := Check(path, got); {
	case errors.Is(err, ErrDiffers):
		t.Error(err)
	case err != nil:
		t.Fatal(err)
	}
}

// Files fails the test unless the files that pattern (a filepath.Glob pattern such as
// testdata/*.py) matches are exactly want, in any order: a golden file no case writes
// is stale, a case without its file has not been rendered with -update.
func Files(t testing.TB, pattern string, want []string) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	want = slices.Clone(want)
	slices.Sort(want)
	slices.Sort(files)
	if d := cmp.Diff(want, files); d != "" {
		t.Errorf("golden files %s (-cases +files):\n%s", pattern, d)
	}
}

// DeterministicRuns is how many times [Deterministic] renders.
const DeterministicRuns = 20

// Deterministic renders [DeterministicRuns] times and fails the test, naming name,
// when render fails or a render differs from the first: map iteration order or the
// clock must not show in rendered output.
func Deterministic[O string | []byte](t testing.TB, name string, render func() (O, error)) {
	t.Helper()
	first, err := render()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for range DeterministicRuns - 1 {
		again, err := render()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(again) != string(first) {
			t.Fatalf("%s: a second render differs (-first +again):\n%s", name, cmp.Diff(string(first), string(again)))
		}
	}
}

// Case is one row of a golden matrix ([Matrix]): what Render returns is compared with
// the golden file <Name><ext>, or, when SameAs names another case, must be exactly
// what that case renders (a case that only switches something off, say), with no file
// of its own.
type Case[O string | []byte] struct {
	Name   string
	SameAs string
	Render func() (O, error)
}

// Matrix renders every case (an error fails the test at once), then runs a subtest per
// case: [Compare] with filepath.Join(dir, Name+ext), or the SameAs case's output.
func Matrix[O string | []byte](t *testing.T, dir, ext string, cases []Case[O]) {
	t.Helper()
	rendered := map[string]string{}
	for _, c := range cases {
		out, err := c.Render()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		rendered[c.Name] = string(out)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := rendered[c.Name]
			if c.SameAs == "" {
				Compare(t, filepath.Join(dir, c.Name+ext), []byte(got))
				return
			}
			if d := cmp.Diff(rendered[c.SameAs], got); d != "" {
				t.Errorf("differs from %s (-%s +%s):\n%s", c.SameAs, c.SameAs, c.Name, d)
			}
		})
	}
}

// MatrixFiles are the golden files of cases in dir: one <Name><ext> per case without
// SameAs, what [Files] expects.
func MatrixFiles[O string | []byte](dir, ext string, cases []Case[O]) []string {
	var out []string
	for _, c := range cases {
		if c.SameAs == "" {
			out = append(out, filepath.Join(dir, c.Name+ext))
		}
	}
	return out
}
