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

// buildVersion is the Kubernetes version the build tests ask for; it is fixed so the
// expected command lines below stay literal.
const buildVersion = "1.36.4"

// kubernetesGoMod is a stand-in for k8s.io/kubernetes's go.mod: api, apimachinery and
// kms are required at v0.0.0 and replaced by ./staging; notstaged is required at
// v0.0.0 only, onlyreplaced replaced only, and single is required on a one-line
// require (not the block form the real go.mod uses).
const kubernetesGoMod = `module k8s.io/kubernetes

go 1.25.0

require (
	github.com/foo/bar v1.2.3
	k8s.io/apimachinery v0.0.0
	k8s.io/api v0.0.0
	k8s.io/kms v0.0.0
	k8s.io/notstaged v0.0.0
)

require k8s.io/single v0.0.0

replace (
	k8s.io/apimachinery => ./staging/src/k8s.io/apimachinery
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/kms => ./staging/src/k8s.io/kms
	k8s.io/onlyreplaced => ./staging/src/k8s.io/onlyreplaced
	k8s.io/single => ./staging/src/k8s.io/single
)
`

// wantWrapperGoMod is the wrapper module Build must write for kubernetesGoMod.
const wantWrapperGoMod = `module reconciler-sdk.local/envtest-wrapper

go 1.26.0

require k8s.io/kubernetes v1.36.4

replace (
	k8s.io/api => k8s.io/api v0.36.4
	k8s.io/apimachinery => k8s.io/apimachinery v0.36.4
	k8s.io/kms => k8s.io/kms v0.36.4
)

tool (
	k8s.io/kubernetes/cmd/kube-apiserver
	k8s.io/kubernetes/cmd/kubectl
	k8s.io/kubernetes/cmd/kube-controller-manager
	k8s.io/kubernetes/cmd/kube-scheduler
	go.etcd.io/etcd/server/v3
)
`

// fakeGo is a go command for Build: each part is the shell code run for that
// subcommand. The zero parts behave like a successful real build.
type fakeGo struct {
	download, tidy, build, install string
}

// goCall is one recorded call of the fake go command.
type goCall struct {
	dir, env string
	args     []string
}

// write installs the fake go into a fresh directory and returns its path and the
// file its calls are recorded in (one line each: directory, environment, arguments,
// separated by tabs); `go mod tidy` also copies the go.mod it sees to wrapper.go.mod
// next to that file.
func (f fakeGo) write(t *testing.T) (goPath, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	fixture := filepath.Join(dir, "kubernetes.go.mod")
	if err := os.WriteFile(fixture, []byte(kubernetesGoMod), 0o644); err != nil {
		t.Fatal(err)
	}
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	// Every built binary prints its name and arguments.
	mkbin := `mkbin() { printf '#!/bin/sh\necho %s "$@"\n' "$(basename "$1")" > "$1"; chmod +x "$1"; }`
	script := "#!/bin/sh\n" + mkbin + "\n" +
		`{ printf '%s\t%s' "$(pwd -P)" "GOFLAGS=$GOFLAGS GOTOOLCHAIN=$GOTOOLCHAIN CGO_ENABLED=$CGO_ENABLED GOWORK=$GOWORK GOBIN=$GOBIN"; for a in "$@"; do printf '\t%s' "$a"; done; printf '\n'; } >> ` + calls + "\n" +
		"case \"$1 $2\" in\n" +
		"'mod download')\n" + or(f.download, `printf '{"Path":"k8s.io/kubernetes","GoMod":"`+fixture+`"}\n'`) + "\nexit;;\n" +
		"'mod tidy')\n" + or(f.tidy, "cp go.mod "+filepath.Join(dir, "wrapper.go.mod")) + "\nexit;;\n" +
		"esac\ncase \"$1\" in\n" +
		"build)\n" + or(f.build, `prev=; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
for b in kube-apiserver kubectl kube-controller-manager kube-scheduler server; do mkbin "$out$b"; done`) + "\nexit;;\n" +
		"install)\n" + or(f.install, `mkbin "$GOBIN/kwok"`) + "\nexit;;\n" +
		"esac\necho unexpected go \"$@\" >&2; exit 2\n"
	goPath = filepath.Join(dir, "go")
	if err := os.WriteFile(goPath, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return goPath, calls
}

func readCalls(t *testing.T, path string) []goCall {
	t.Helper()
	var calls []goCall
	for _, line := range readLines(t, path) {
		f := strings.Split(line, "\t")
		calls = append(calls, goCall{dir: f[0], env: f[1], args: f[2:]})
	}
	return calls
}

// buildOptions are options for buildVersion rooted in a fresh cache, with the fake go.
func buildOptions(t *testing.T, f fakeGo) (o assets.Options, calls string, log *strings.Builder) {
	t.Helper()
	o = testOptions(t)
	o.Version = buildVersion
	root, err := filepath.EvalSymlinks(filepath.Dir(o.CacheRoot))
	if err != nil {
		t.Fatal(err)
	}
	o.CacheRoot = filepath.Join(root, "envtest")
	o.Go, calls = f.write(t)
	log = &strings.Builder{}
	o.Log = log
	return o, calls, log
}

// assertNoBuildLeft fails when a temporary build directory is left in the cache root.
func assertNoBuildLeft(t *testing.T, o assets.Options) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(o.CacheRoot, ".build-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("build directories left behind: %q", left)
	}
}

func TestBuildRunsTheGoCommandsOfTheScriptAndPublishesTheCache(t *testing.T) {
	o, callsFile, log := buildOptions(t, fakeGo{})
	dir, err := assets.Build(context.Background(), o)
	if err != nil {
		t.Fatalf("Build: %v\nlog:\n%s", err, log)
	}
	if dir != o.CacheDir() {
		t.Errorf("Build = %s, want %s", dir, o.CacheDir())
	}
	if m := assets.Missing(dir, assets.AllBinaries); m != nil {
		t.Errorf("cache lacks %q", m)
	}
	assertNoBuildLeft(t, o)

	calls := readCalls(t, callsFile)
	if len(calls) != 4 {
		t.Fatalf("go calls = %q, want download, tidy, build, install", calls)
	}
	work := filepath.Dir(calls[1].dir)
	if !strings.HasPrefix(work, filepath.Join(o.CacheRoot, ".build-"+buildVersion+".")) {
		t.Errorf("build directory %s is not a temporary directory in the cache root %s", work, o.CacheRoot)
	}
	const ld = "-s -w" +
		" -X k8s.io/component-base/version.gitVersion=v1.36.4 -X k8s.io/component-base/version.gitMajor=1" +
		" -X k8s.io/component-base/version.gitMinor=36 -X k8s.io/component-base/version.gitTreeState=clean" +
		" -X k8s.io/client-go/pkg/version.gitVersion=v1.36.4 -X k8s.io/client-go/pkg/version.gitMajor=1" +
		" -X k8s.io/client-go/pkg/version.gitMinor=36 -X k8s.io/client-go/pkg/version.gitTreeState=clean"
	env := "GOFLAGS=-modcacherw -buildvcs=false GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off GOBIN="
	want := []goCall{
		{dir: work, env: env, args: []string{"mod", "download", "-json", "k8s.io/kubernetes@v1.36.4"}},
		{dir: work + "/mod", env: env, args: []string{"mod", "tidy"}},
		{dir: work + "/mod", env: env, args: []string{"build", "-trimpath", "-ldflags", ld, "-o", work + "/bin/",
			"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kubectl",
			"k8s.io/kubernetes/cmd/kube-controller-manager", "k8s.io/kubernetes/cmd/kube-scheduler",
			"go.etcd.io/etcd/server/v3"}},
		{dir: work, env: env + work + "/bin", args: []string{"install", "sigs.k8s.io/kwok/cmd/kwok@" + assets.KWOKVersion}},
	}
	for i := range want {
		if calls[i].dir != want[i].dir || calls[i].env != want[i].env || !slices.Equal(calls[i].args, want[i].args) {
			t.Errorf("go call %d =\n  %+v\nwant\n  %+v", i, calls[i], want[i])
		}
	}
	wrapper, err := os.ReadFile(filepath.Join(filepath.Dir(o.Go), "wrapper.go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if string(wrapper) != wantWrapperGoMod {
		t.Errorf("wrapper go.mod =\n%s\nwant\n%s", wrapper, wantWrapperGoMod)
	}
	// go names etcd "server"; Build renames it and checks kube-apiserver runs.
	for _, want := range []string{
		"envtest: building kube-apiserver, etcd, kubectl, kube-controller-manager, kube-scheduler 1.36.4 from the Go module proxy",
		"envtest: building kwok " + assets.KWOKVersion,
		"kube-apiserver --version",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log %q does not contain %q", log, want)
		}
	}
	if out, err := os.ReadFile(filepath.Join(dir, "etcd")); err != nil || !strings.Contains(string(out), "echo server") {
		t.Errorf("etcd is not the server binary go built: %q, %v", out, err)
	}
}

func TestEnsureRebuildsAnIncompleteCache(t *testing.T) {
	o, _, log := buildOptions(t, fakeGo{})
	writeExecutables(t, o.CacheDir(), "kube-apiserver", "etcd", "kubectl")
	if err := os.WriteFile(filepath.Join(o.CacheDir(), "stale-marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir, src, err := assets.Ensure(context.Background(), o)
	if err != nil {
		t.Fatalf("Ensure: %v\nlog:\n%s", err, log)
	}
	if dir != o.CacheDir() || src != assets.SourceBuild {
		t.Errorf("Ensure = %s (%s), want %s (%s)", dir, src, o.CacheDir(), assets.SourceBuild)
	}
	if m := assets.Missing(dir, assets.AllBinaries); m != nil {
		t.Errorf("cache lacks %q after the rebuild", m)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale-marker")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the incomplete cache was not replaced: %v", err)
	}
	assertNoBuildLeft(t, o)
}

func TestBuildKeepsACompleteCacheThatAConcurrentBuildPublishedFirst(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	winner := filepath.Join(root, "envtest", buildVersion)
	// While this build installs kwok, a concurrent one publishes a complete cache.
	o, _, log := buildOptions(t, fakeGo{install: `mkbin "$GOBIN/kwok"
mkdir -p ` + winner + `
for b in ` + strings.Join(assets.AllBinaries, " ") + `; do mkbin ` + winner + `/$b; done
touch ` + winner + `/winner`})
	o.CacheRoot = filepath.Dir(winner)
	dir, err := assets.Build(context.Background(), o)
	if err != nil {
		t.Fatalf("Build: %v\nlog:\n%s", err, log)
	}
	if dir != winner {
		t.Errorf("Build = %s, want %s", dir, winner)
	}
	if _, err := os.Stat(filepath.Join(dir, "winner")); err != nil {
		t.Errorf("the concurrent build's cache was replaced: %v", err)
	}
	assertNoBuildLeft(t, o)
}

func TestBuildWritesNoCacheWhenAStepFails(t *testing.T) {
	o, _, _ := buildOptions(t, fakeGo{install: "echo no network >&2; exit 1"})
	_, err := assets.Build(context.Background(), o)
	if !errors.Is(err, assets.ErrBuild) {
		t.Fatalf("Build = %v, want ErrBuild", err)
	}
	if !strings.Contains(err.Error(), "go install sigs.k8s.io/kwok/cmd/kwok@"+assets.KWOKVersion) {
		t.Errorf("error %q does not name the failed step", err)
	}
	if _, statErr := os.Stat(o.CacheDir()); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a failed build left a cache directory: %v", statErr)
	}
	assertNoBuildLeft(t, o)
}

func TestBuildWritesNoCacheWhenABinaryIsMissing(t *testing.T) {
	o, _, _ := buildOptions(t, fakeGo{install: "exit 0"})
	_, err := assets.Build(context.Background(), o)
	if !errors.Is(err, assets.ErrIncomplete) {
		t.Fatalf("Build = %v, want ErrIncomplete", err)
	}
	if !strings.Contains(err.Error(), "without kwok in ") {
		t.Errorf("error %q does not name kwok", err)
	}
	if _, statErr := os.Stat(o.CacheDir()); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("an incomplete build left a cache directory: %v", statErr)
	}
	assertNoBuildLeft(t, o)
}

func TestBuildReportsTheModuleProxyError(t *testing.T) {
	o, _, _ := buildOptions(t, fakeGo{download: `printf '{"Path":"k8s.io/kubernetes","Error":"k8s.io/kubernetes@v1.36.4: 410 Gone"}\n'; exit 1`})
	_, err := assets.Build(context.Background(), o)
	if !errors.Is(err, assets.ErrBuild) {
		t.Fatalf("Build = %v, want ErrBuild", err)
	}
	for _, want := range []string{"cannot download k8s.io/kubernetes@v1.36.4 from the Go module proxy", "410 Gone"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	assertNoBuildLeft(t, o)
}

func TestBuildFailsWithoutStagingModules(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(plain, []byte("module k8s.io/kubernetes\n\nrequire k8s.io/api v0.36.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, _, _ := buildOptions(t, fakeGo{download: `printf '{"GoMod":"` + plain + `"}\n'`})
	_, err := assets.Build(context.Background(), o)
	if !errors.Is(err, assets.ErrBuild) || !strings.Contains(err.Error(), "found no staging modules in "+plain) {
		t.Fatalf("Build = %v, want ErrBuild naming %s", err, plain)
	}
}

func TestBuildStopsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// go build blocks until Build interrupts it.
	ready := filepath.Join(t.TempDir(), "building")
	o, _, _ := buildOptions(t, fakeGo{build: "touch " + ready + "; exec sleep 600"})
	errc := make(chan error, 1)
	go func() { _, err := assets.Build(ctx, o); errc <- err }()
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("Build returned before go build ran: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	err := <-errc
	if !errors.Is(err, assets.ErrBuild) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Build = %v, want an interrupted go build", err)
	}
	if _, statErr := os.Stat(o.CacheDir()); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("an interrupted build left a cache directory: %v", statErr)
	}
	assertNoBuildLeft(t, o)
}
