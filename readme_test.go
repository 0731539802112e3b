package reconcilersdk_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

// updateReadme rewrites the README's quick start from the example instead of comparing:
// go test -run TestREADMEQuickstart -update-readme .
var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's quick start from examples/quickstart")

const (
	quickstartSource = "examples/quickstart/controller/memo_controller.go"
	readmeStart      = "<!-- quickstart:start -->\n```go\n"
	readmeEnd        = "```\n<!-- quickstart:end -->"
)

// TestREADMEQuickstart fails when the Go block of README.md's quick start differs from
// the region of the compiled example between "// readme:start" and "// readme:end", so
// the README never shows code that does not build.
func TestREADMEQuickstart(t *testing.T) {
	src, err := os.ReadFile(quickstartSource)
	if err != nil {
		t.Fatal(err)
	}
	want, ok := between(string(src), "// readme:start\n", "// readme:end\n")
	if !ok {
		t.Fatalf("%s: no // readme:start ... // readme:end region", quickstartSource)
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
			t.Fatalf("README.md's quick start differs from %s at line %d of the excerpt:\n README: %q\n source: %q\n"+
				"run: go test -run TestREADMEQuickstart -update-readme .", quickstartSource, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("README.md's quick start has %d lines, %s's region %d; run: go test -run TestREADMEQuickstart -update-readme .",
		len(gl), quickstartSource, len(wl))
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
