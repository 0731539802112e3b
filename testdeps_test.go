package reconcilersdk_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testdepsRun runs hack/testdeps.sh with PATH holding only bin (plus the shell and
// coreutils the script needs, linked one by one), so whether chromium, apt-get and a
// root id exist is decided by the test.
func testdepsRun(t *testing.T, bin string) (string, error) {
	t.Helper()
	for _, tool := range []string{"bash", "env", "cat", "printf"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s is needed to run hack/testdeps.sh: %v", tool, err)
		}
		if _, err := os.Lstat(filepath.Join(bin, tool)); err == nil {
			continue
		}
		if err := os.Symlink(path, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	bash := filepath.Join(bin, "bash")
	cmd := exec.Command(bash, "hack/testdeps.sh")
	cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// script writes an executable shell script named name into dir.
func script(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!"+filepath.Join(dir, "bash")+"\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// make test starts with hack/testdeps.sh, which makes what the tests need beyond Go and
// the envtest binaries present before any test runs, or stops at once with the one
// command that does: a test never meets a missing browser and never skips.
func TestTestdeps(t *testing.T) {
	cases := map[string]struct {
		reason  string
		id      string // what `id -u` prints
		apt     bool   // apt-get exists, and installs chromium
		present bool   // chromium already on PATH
		wantErr bool
		want    []string // substrings of the output
		wantNot []string
	}{
		"present": {reason: "chromium on PATH: nothing to do, nothing printed",
			id: "1000", present: true, wantNot: []string{"installing", "apt-get"}},
		"not root": {reason: "missing and not root: stop with the command that fixes it",
			id: "1000", apt: true, wantErr: true,
			want: []string{"chromium is missing", "sudo apt-get install -y chromium"}, wantNot: []string{"installing"}},
		"root without apt": {reason: "root but no apt-get: the same clear stop",
			id: "0", wantErr: true, want: []string{"sudo apt-get install -y chromium"}},
		"root with apt": {reason: "root with apt-get: installs it and goes on",
			id: "0", apt: true, want: []string{"installing chromium", "apt-get install -y -qq chromium"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			bin := t.TempDir()
			script(t, bin, "id", `[ "$1" = -u ] && echo `+tc.id)
			if tc.present {
				script(t, bin, "chromium", "exit 0")
			}
			if tc.apt {
				// apt-get records its arguments and, on install, puts chromium on PATH.
				script(t, bin, "apt-get", `echo "apt-get $*" >&2
case "$*" in *install*) printf '#!%s\nexit 0\n' "`+filepath.Join(bin, "bash")+`" > "`+bin+`/chromium"; chmod 755 "`+bin+`/chromium" 2>/dev/null || exit 1;; esac`)
				// chmod is needed by the fake apt-get only.
				if path, err := exec.LookPath("chmod"); err == nil {
					if err := os.Symlink(path, filepath.Join(bin, "chmod")); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, err := testdepsRun(t, bin)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: err = %v, want error %v; output:\n%s", tc.reason, err, tc.wantErr, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: output lacks %q:\n%s", tc.reason, w, out)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("%s: output has %q:\n%s", tc.reason, w, out)
				}
			}
		})
	}
}

// The README's test command runs hack/testdeps.sh before any test: the Makefile's test
// recipe calls it first, and CI (.ci/run) does not install chromium itself, so a fresh
// machine meets exactly what a new user does.
func TestMakeTestRunsTestdepsFirst(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	recipe, ok := between(string(mk), "\ntest:", "\n\n")
	if !ok {
		t.Fatal("Makefile: no test target")
	}
	deps, tests := strings.Index(recipe, "hack/testdeps.sh"), strings.Index(recipe, "test -count")
	if deps < 0 || tests < 0 || deps > tests {
		t.Fatalf("Makefile's test recipe must run hack/testdeps.sh before go test:\n%s", recipe)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ci), "apt-get install -y -qq chromium") || !strings.Contains(string(ci), "make test") {
		t.Fatalf(".ci/run must leave chromium to make test and run make test:\n%s", ci)
	}
}
