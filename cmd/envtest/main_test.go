package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv/assets"
)

func writeExecutables(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\necho "+n+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// isolate points the environment at an empty cache, with no KUBEBUILDER_ASSETS and
// nothing on PATH, and returns the cache root.
func isolate(t *testing.T) string {
	t.Helper()
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	t.Setenv("KUBEBUILDER_ASSETS", "")
	t.Setenv("ENVTEST_K8S_VERSION", "")
	t.Setenv("ENVTEST_SKIP_DOWNLOAD", "")
	t.Setenv("SETUP_ENVTEST_TIMEOUT", "")
	t.Setenv("PATH", t.TempDir())
	return filepath.Join(xdg, "reconciler-sdk", "envtest")
}

func runCommand(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestStdoutCarriesOnlyTheDirectory(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	writeExecutables(t, dir, assets.CoreBinaries...)
	t.Setenv("KUBEBUILDER_ASSETS", dir)
	code, stdout, stderr := runCommand()
	if code != 0 || stdout != dir+"\n" || stderr != "" {
		t.Errorf("envtest = %d, stdout %q, stderr %q; want 0, %q, nothing", code, stdout, dir+"\n", stderr)
	}
}

func TestFlagsChooseTheVersionAndCache(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	cache := filepath.Join(root, "1.36.4")
	writeExecutables(t, cache, assets.AllBinaries...)
	t.Setenv("ENVTEST_K8S_VERSION", "1.35.0") // the flag wins
	code, stdout, stderr := runCommand("-cache-dir", root, "-kubernetes-version", "1.36.4", "-no-build")
	if code != 0 || stdout != cache+"\n" {
		t.Errorf("envtest = %d, stdout %q, stderr %q; want 0, %q", code, stdout, stderr, cache+"\n")
	}
}

func TestNoBuildFailsNamingWhatIsMissing(t *testing.T) {
	root := isolate(t)
	code, stdout, stderr := runCommand("-no-build")
	if code != 1 || stdout != "" {
		t.Errorf("envtest -no-build = %d, stdout %q; want 1, nothing", code, stdout)
	}
	want := "envtest: ERROR: envtest binaries not found for Kubernetes " + assets.KubernetesVersion +
		": cache " + filepath.Join(root, assets.KubernetesVersion) + " lacks kube-apiserver, etcd"
	if !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr = %q, want it to start with %q", stderr, want)
	}
}

func TestNoDownloadSkipsSetupEnvtest(t *testing.T) {
	isolate(t)
	bin := t.TempDir()
	downloaded := t.TempDir()
	writeExecutables(t, downloaded, assets.CoreBinaries...)
	if err := os.WriteFile(filepath.Join(bin, "setup-envtest"), []byte("#!/bin/sh\necho "+downloaded+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if code, stdout, stderr := runCommand("-no-build"); code != 0 || stdout != downloaded+"\n" {
		t.Fatalf("envtest -no-build = %d, stdout %q, stderr %q; want setup-envtest's %s", code, stdout, stderr, downloaded)
	}
	if code, stdout, stderr := runCommand("-no-build", "-no-download"); code != 1 || stdout != "" || !strings.Contains(stderr, "setup-envtest not used") {
		t.Errorf("envtest -no-build -no-download = %d, stdout %q, stderr %q; want 1 without setup-envtest", code, stdout, stderr)
	}
	t.Setenv("ENVTEST_SKIP_DOWNLOAD", "1")
	if code, _, stderr := runCommand("-no-build"); code != 1 || !strings.Contains(stderr, "setup-envtest not used") {
		t.Errorf("envtest -no-build with ENVTEST_SKIP_DOWNLOAD = %d, stderr %q; want 1 without setup-envtest", code, stderr)
	}
}

func TestWithoutGoTheBuildFailsNamingIt(t *testing.T) {
	isolate(t)
	code, stdout, stderr := runCommand("-no-download")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "envtest: ERROR: go is not on PATH; cannot build envtest binaries") {
		t.Errorf("envtest = %d, stdout %q, stderr %q; want 1 naming go", code, stdout, stderr)
	}
}

func TestBadUsageExitsTwo(t *testing.T) {
	isolate(t)
	if code, _, stderr := runCommand("extra"); code != 2 || !strings.Contains(stderr, `unexpected arguments ["extra"]`) {
		t.Errorf("envtest extra = %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCommand("-nonsense"); code != 2 {
		t.Errorf("envtest -nonsense = %d, want 2", code)
	}
	t.Setenv("SETUP_ENVTEST_TIMEOUT", "soon")
	if code, _, stderr := runCommand(); code != 1 || !strings.Contains(stderr, `envtest: ERROR: SETUP_ENVTEST_TIMEOUT="soon"`) {
		t.Errorf("envtest with SETUP_ENVTEST_TIMEOUT=soon = %d, stderr %q", code, stderr)
	}
}

// `go run github.com/c5c3/reconciler-sdk/cmd/envtest` must compile in seconds in any
// module: the command and package assets import only the standard library.
func TestImportsOnlyTheStandardLibraryAndAssets(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(out))
	want := []string{"github.com/c5c3/reconciler-sdk/testenv/assets", "github.com/c5c3/reconciler-sdk/cmd/envtest"}
	if !slices.Equal(got, want) {
		t.Errorf("non-standard dependencies = %q, want only %q", got, want)
	}
}
