package reconcilersdk_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

// updateReadme rewrites the README's code excerpts from their sources instead of
// comparing: go test -run TestREADMEExcerpts -update-readme .
var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's code excerpts from their compiled sources")

// readmeExcerpts are the README's Go blocks that are copies of compiled code: each
// block between "<!-- name:start -->" and "<!-- name:end -->" is the region of source
// between "// readme:start" and "// readme:end".
var readmeExcerpts = []struct{ name, source string }{
	{"quickstart", "examples/quickstart/controller/memo_controller.go"},
	{"targetcluster", "multicluster/example_operator_test.go"},
	{"satellite", "satellite/example_handshake_test.go"},
}

// TestREADMEExcerpts fails when a Go block of README.md differs from the region of the
// compiled source it shows, so the README never shows code that does not build.
func TestREADMEExcerpts(t *testing.T) {
	for _, ex := range readmeExcerpts {
		t.Run(ex.name, func(t *testing.T) { checkExcerpt(t, ex.name, ex.source) })
	}
}

func checkExcerpt(t *testing.T, name, source string) {
	readmeStart := "<!-- " + name + ":start -->\n```go\n"
	readmeEnd := "```\n<!-- " + name + ":end -->"
	src, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	want, ok := between(string(src), "// readme:start\n", "// readme:end\n")
	if !ok {
		t.Fatalf("%s: no // readme:start ... // readme:end region", source)
	}
	want = strings.Trim(want, "\n") + "\n"
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	got, ok := between(string(readme), readmeStart, readmeEnd)
	if !ok {
		t.Fatalf("README.md: no %q ... %q block", readmeStart, readmeEnd)
	}
	if got == want {
		return
	}
	if *updateReadme {
		i := bytes.Index(readme, []byte(readmeStart)) + len(readmeStart)
		out := append(append(append([]byte{}, readme[:i]...), want...), readme[i+len(got):]...)
		if err := os.WriteFile("README.md", out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("README.md's %s excerpt differs from %s at line %d:\n README: %q\n source: %q\n"+
				"run: go test -run TestREADMEExcerpts -update-readme .", name, source, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("README.md's %s excerpt has %d lines, %s's region %d; run: go test -run TestREADMEExcerpts -update-readme .",
		name, len(gl), source, len(wl))
}

// between returns the text of s between the first start and the next end.
func between(s, start, end string) (string, bool) {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return "", false
	}
	in, _, ok := strings.Cut(after, end)
	return in, ok
}
