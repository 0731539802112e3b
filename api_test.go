package reconcilersdk_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// apiFile is the committed text of the module's exported API, written by `make api`.
const apiFile = "docs/api.txt"

// TestAPIFileIsCurrent regenerates the exported API (go run ./hack/api) and fails when
// it differs from docs/api.txt, so every change of the API shows in review as a change of
// that file.
func TestAPIFileIsCurrent(t *testing.T) {
	cmd := exec.Command("go", "run", "./hack/api")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./hack/api: %v\n%s", err, stderr.String())
	}
	want, err := os.ReadFile(apiFile)
	if err != nil {
		t.Fatalf("%v: run `make api` and commit %s", err, apiFile)
	}
	if string(got) == string(want) {
		return
	}
	t.Errorf("the exported API differs from %s: run `make api` and commit %s\n%s",
		apiFile, apiFile, lineDiff(string(want), string(got), 20))
}

// lineDiff lists, in order, the lines only in the committed text ("- ") and the lines
// only in the regenerated one ("+ "), at most limit of each, each with the package
// it belongs to.
func lineDiff(committed, regenerated string, limit int) string {
	var b strings.Builder
	for _, side := range []struct {
		prefix     string
		from, than string
	}{{"- ", committed, regenerated}, {"+ ", regenerated, committed}} {
		other := map[string]int{}
		for _, l := range strings.Split(side.than, "\n") {
			other[l]++
		}
		n, pkg := 0, ""
		for _, l := range strings.Split(side.from, "\n") {
			if strings.HasPrefix(l, "package ") {
				pkg = l
			}
			if other[l] > 0 {
				other[l]--
				continue
			}
			if n++; n <= limit {
				fmt.Fprintf(&b, "%s%s\t(%s)\n", side.prefix, l, pkg)
			}
		}
		if n > limit {
			fmt.Fprintf(&b, "%s... and %d more\n", side.prefix, n-limit)
		}
	}
	return b.String()
}

func TestLineDiff(t *testing.T) {
	committed := "package a\nfunc F()\nfunc G()\n\npackage b\nfunc H()\n"
	regenerated := "package a\nfunc F()\n\npackage b\nfunc H()\nfunc I()\n"
	want := "- func G()\t(package a)\n+ func I()\t(package b)\n"
	if got := lineDiff(committed, regenerated, 20); got != want {
		t.Errorf("lineDiff = %q, want %q", got, want)
	}
	if got := lineDiff("x\ny\nz\n", "", 1); got != "- x\t()\n- ... and 2 more\n" {
		t.Errorf("lineDiff over the limit = %q", got)
	}
}
