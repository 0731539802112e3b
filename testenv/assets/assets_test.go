package assets_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/reconciler-sdk/testenv/assets"
)

// writeExecutables creates each name in dir as an executable shell script that
// prints its name and arguments.
func writeExecutables(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\necho "+n+" \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// testOptions are options rooted in a fresh temporary cache, with no other source.
func testOptions(t *testing.T) assets.Options {
	return assets.Options{
		Version:     assets.KubernetesVersion,
		KWOKVersion: assets.KWOKVersion,
		CacheRoot:   filepath.Join(t.TempDir(), "envtest"),
		Go:          filepath.Join(t.TempDir(), "no-go"),
	}
}

// fakeSetupEnvtest writes a setup-envtest that appends its arguments to a log and
// answers per call: the call with -i runs withI, the other withoutI (shell lines).
func fakeSetupEnvtest(t *testing.T, withI, withoutI string) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\nif [ \"$2\" = -i ]; then\n" + withI + "\nelse\n" + withoutI + "\nfi\n"
	path = filepath.Join(dir, "setup-envtest")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestFindTakesAssetsHoldingTheCoreBinariesFirst(t *testing.T) {
	o := testOptions(t)
	o.Assets = t.TempDir()
	writeExecutables(t, o.Assets, assets.CoreBinaries...)
	writeExecutables(t, o.CacheDir(), assets.AllBinaries...)
	dir, src, err := assets.Find(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if dir != o.Assets || src != assets.SourceAssets {
		t.Errorf("Find = %s (%s), want %s (%s)", dir, src, o.Assets, assets.SourceAssets)
	}
}

func TestFindPassesOverAssetsLackingEtcdForTheCompleteCache(t *testing.T) {
	o := testOptions(t)
	o.Assets = t.TempDir()
	writeExecutables(t, o.Assets, "kube-apiserver")
	writeExecutables(t, o.CacheDir(), assets.AllBinaries...)
	dir, src, err := assets.Find(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if dir != o.CacheDir() || src != assets.SourceCache {
		t.Errorf("Find = %s (%s), want %s (%s)", dir, src, o.CacheDir(), assets.SourceCache)
	}
}

func TestFindPassesOverACacheLackingTheControllerBinaries(t *testing.T) {
	o := testOptions(t)
	// A cache from before the target-controller binaries: kube-apiserver, etcd, kubectl.
	writeExecutables(t, o.CacheDir(), "kube-apiserver", "etcd", "kubectl")
	downloaded := t.TempDir()
	writeExecutables(t, downloaded, assets.CoreBinaries...)
	var log string
	o.SetupEnvtest, log = fakeSetupEnvtest(t, "exit 1", "echo "+downloaded)
	dir, src, err := assets.Find(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if dir != downloaded || src != assets.SourceSetupEnvtest {
		t.Errorf("Find = %s (%s), want %s (%s)", dir, src, downloaded, assets.SourceSetupEnvtest)
	}
	binDir := filepath.Join(o.CacheRoot, "setup-envtest")
	want := []string{
		"use -i " + o.Version + " --bin-dir " + binDir + " -p path",
		"use " + o.Version + " --bin-dir " + binDir + " -p path",
	}
	if got := readLines(t, log); !slices.Equal(got, want) {
		t.Errorf("setup-envtest calls = %q, want %q", got, want)
	}
}

func TestFindTakesSetupEnvtestsInstalledVersionWithoutDownloading(t *testing.T) {
	o := testOptions(t)
	installed := t.TempDir()
	writeExecutables(t, installed, assets.CoreBinaries...)
	var log string
	o.SetupEnvtest, log = fakeSetupEnvtest(t, "echo "+installed, "exit 1")
	dir, src, err := assets.Find(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if dir != installed || src != assets.SourceSetupEnvtest {
		t.Errorf("Find = %s (%s), want %s (%s)", dir, src, installed, assets.SourceSetupEnvtest)
	}
	if got := readLines(t, log); len(got) != 1 {
		t.Errorf("setup-envtest calls = %q, want only the -i one", got)
	}
}

func TestFindBoundsSetupEnvtestAndFallsThrough(t *testing.T) {
	o := testOptions(t)
	o.SetupEnvtest, _ = fakeSetupEnvtest(t, "exec sleep 600", "exec sleep 600")
	o.SetupEnvtestTimeout = 100 * time.Millisecond
	var logBuf strings.Builder
	o.Log = &logBuf
	_, _, err := assets.Find(context.Background(), o)
	if !errors.Is(err, assets.ErrNotFound) {
		t.Fatalf("Find = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "setup-envtest could not provide "+o.Version) {
		t.Errorf("error %q does not say setup-envtest failed", err)
	}
	if !strings.Contains(logBuf.String(), "envtest: trying setup-envtest (timeout 100ms)") {
		t.Errorf("log %q does not announce setup-envtest", logBuf.String())
	}
}

func TestFindPassesOverASetupEnvtestDirectoryWithoutEtcd(t *testing.T) {
	o := testOptions(t)
	partial := t.TempDir()
	writeExecutables(t, partial, "kube-apiserver")
	o.SetupEnvtest, _ = fakeSetupEnvtest(t, "echo "+partial, "exit 1")
	if _, _, err := assets.Find(context.Background(), o); !errors.Is(err, assets.ErrNotFound) {
		t.Fatalf("Find = %v, want ErrNotFound", err)
	}
}

func TestFindErrorNamesWhatEachSourceLacks(t *testing.T) {
	o := testOptions(t)
	o.Assets = t.TempDir()
	writeExecutables(t, o.Assets, "kube-apiserver")
	writeExecutables(t, o.CacheDir(), "kube-apiserver", "etcd", "kubectl", "kube-controller-manager")
	// A non-executable kwok does not count.
	if err := os.WriteFile(filepath.Join(o.CacheDir(), "kwok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := assets.Find(context.Background(), o)
	if !errors.Is(err, assets.ErrNotFound) {
		t.Fatalf("Find = %v, want ErrNotFound", err)
	}
	for _, want := range []string{
		"KUBEBUILDER_ASSETS " + o.Assets + " lacks etcd;",
		"cache " + o.CacheDir() + " lacks kube-scheduler, kwok;",
		"setup-envtest not used",
		"Kubernetes " + o.Version,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestFindResolvesSymbolicLinks(t *testing.T) {
	o := testOptions(t)
	target := t.TempDir()
	writeExecutables(t, target, assets.CoreBinaries...)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	o.Assets = link
	dir, _, err := assets.Find(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(target); dir != want {
		t.Errorf("Find = %s, want %s", dir, want)
	}
}

func TestFindAndBuildRejectAVersionWithALeadingV(t *testing.T) {
	o := testOptions(t)
	o.Version = "v" + assets.KubernetesVersion
	if _, _, err := assets.Find(context.Background(), o); !errors.Is(err, assets.ErrVersion) {
		t.Errorf("Find = %v, want ErrVersion", err)
	}
	if _, err := assets.Build(context.Background(), o); !errors.Is(err, assets.ErrVersion) {
		t.Errorf("Build = %v, want ErrVersion", err)
	}
}

func TestEnsureDoesNotBuildWhatTheCacheHolds(t *testing.T) {
	o := testOptions(t) // o.Go does not exist: a build would fail with ErrNoGo
	writeExecutables(t, o.CacheDir(), assets.AllBinaries...)
	dir, src, err := assets.Ensure(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if dir != o.CacheDir() || src != assets.SourceCache {
		t.Errorf("Ensure = %s (%s), want %s (%s)", dir, src, o.CacheDir(), assets.SourceCache)
	}
}

func TestEnsureWithoutGoNamesIt(t *testing.T) {
	o := testOptions(t)
	_, _, err := assets.Ensure(context.Background(), o)
	if !errors.Is(err, assets.ErrNoGo) {
		t.Fatalf("Ensure = %v, want ErrNoGo", err)
	}
	if _, statErr := os.Stat(o.CacheDir()); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("cache directory exists after a failed build: %v", statErr)
	}
}

func TestDefaultOptionsReadTheEnvironment(t *testing.T) {
	cache := t.TempDir()
	bin := t.TempDir()
	writeExecutables(t, bin, "setup-envtest")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("KUBEBUILDER_ASSETS", "/somewhere")
	t.Setenv("ENVTEST_K8S_VERSION", "1.36.1")
	t.Setenv("ENVTEST_SKIP_DOWNLOAD", "")
	t.Setenv("SETUP_ENVTEST_TIMEOUT", "7")
	t.Setenv("PATH", bin)
	o, err := assets.DefaultOptions()
	if err != nil {
		t.Fatal(err)
	}
	want := assets.Options{
		Version: "1.36.1", KWOKVersion: assets.KWOKVersion,
		CacheRoot: filepath.Join(cache, "reconciler-sdk", "envtest"), Assets: "/somewhere",
		SetupEnvtest: filepath.Join(bin, "setup-envtest"), SetupEnvtestTimeout: 7 * time.Second,
		Go: "go", Log: os.Stderr,
	}
	if o != want {
		t.Errorf("DefaultOptions = %+v, want %+v", o, want)
	}
	if got := o.CacheDir(); got != filepath.Join(cache, "reconciler-sdk", "envtest", "1.36.1") {
		t.Errorf("CacheDir = %s", got)
	}

	t.Setenv("ENVTEST_SKIP_DOWNLOAD", "1")
	t.Setenv("ENVTEST_K8S_VERSION", "")
	t.Setenv("SETUP_ENVTEST_TIMEOUT", "")
	if o, err = assets.DefaultOptions(); err != nil {
		t.Fatal(err)
	}
	if o.SetupEnvtest != "" || o.Version != assets.KubernetesVersion || o.SetupEnvtestTimeout != assets.DefaultSetupEnvtestTimeout {
		t.Errorf("DefaultOptions with ENVTEST_SKIP_DOWNLOAD = %+v", o)
	}

	t.Setenv("SETUP_ENVTEST_TIMEOUT", "60s")
	if _, err = assets.DefaultOptions(); err == nil || !strings.Contains(err.Error(), `SETUP_ENVTEST_TIMEOUT="60s"`) {
		t.Errorf("DefaultOptions with SETUP_ENVTEST_TIMEOUT=60s: %v", err)
	}
}

func TestMissingListsInOrder(t *testing.T) {
	dir := t.TempDir()
	writeExecutables(t, dir, "etcd")
	if err := os.Mkdir(filepath.Join(dir, "kubectl"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := assets.Missing(dir, []string{"kube-apiserver", "etcd", "kubectl"})
	if want := []string{"kube-apiserver", "kubectl"}; !slices.Equal(got, want) {
		t.Errorf("Missing = %q, want %q", got, want)
	}
	if got := assets.Missing(dir, []string{"etcd"}); got != nil {
		t.Errorf("Missing = %q, want nil", got)
	}
}
